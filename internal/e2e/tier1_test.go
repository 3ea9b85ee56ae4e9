package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/llm/llmtest"
	"github.com/medallionhq/medallion/internal/medallion"
)

const e2ePatch = `{"summary":"The team settled how to store reports.","decisions":[{"op":"add","id":"","statement":"Store report totals as a point-in-time snapshot","rationale":"amends must not change what was sent","confidence":"high","evidence":["E1"]}],"open_questions":[],"invariants":[],"avoid_repeating":[],"entry_points":[],"subsystems":[]}`

// TestTier1Daemon drives the real daemon with an llm block against a fake
// model: secrets written into a transcript never reach a request body;
// a session checkpoint stores the model's items as one new version; and
// the seed's checkpointSession holds with evidence: the first checkpoint
// of a scope creates its medallion, the second updates it (no duplicate,
// created_at kept, updated_at later, version + 1).
func TestTier1Daemon(t *testing.T) {
	fm := &llmtest.Model{Replies: []string{e2ePatch}, PromptTokens: 900, CompletionTokens: 100}
	srv := httptest.NewServer(fm)
	defer srv.Close()
	root := t.TempDir()
	t.Setenv("MEDALLION_E2E_LLM_KEY", "test-key-not-a-secret")
	d := newIngestd(t, root, fmt.Sprintf("llm {\n  base_url    = %q\n  model       = \"fake-model\"\n  api_key_env = \"MEDALLION_E2E_LLM_KEY\"\n  timeout     = \"20s\"\n}\n", srv.URL+"/v1"))
	d.start()

	secrets := []string{
		"AKIA" + "IOSFODNN7EXAMPLE",
		"ghp_" + "R7cX2mPq9LsT4vWb8NzK3jHf6YdG1aE5uQ0o",
		"sk-" + "ant-api03-" + strings.Repeat("Xy7_kQ2-", 11) + "abcdeAA",
	}
	path := filepath.Join(root, "proj", "s1.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, userLine("s1", "u1", "Store report totals as a snapshot; never recompute them. Deploy with AWS key "+secrets[0]+" please."))
	appendTo(t, path, userLine("s1", "u2", "Use my token "+secrets[1]+" for the API, and "+secrets[2]+" for the model."))
	waitFor(t, 30*time.Second, "the session's events", func() bool { return d.eventCount("s1") == 2 })

	ctx := context.Background()
	resp, err := d.c.Checkpoint(ctx, api.CheckpointRequest{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	cp := resp.Checkpoints[0]
	if cp.Error != "" || cp.MedallionID == "" || cp.Items["tier1_added"] != 1 {
		t.Fatalf("checkpoint %+v: want a version with the model's decision", cp)
	}
	m, err := d.c.Get(ctx, cp.MedallionID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Model != "fake-model" || !hasDecision(m, "point-in-time snapshot") || m.Meta.Version != cp.Version {
		t.Errorf("medallion model %q version %d decisions %+v", m.Meta.Model, m.Meta.Version, m.Decisions)
	}
	st, err := d.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l := st.LLM; l == nil || l.Model != "fake-model" || l.Passes != 1 || l.Fallbacks != 0 || l.TokensToday != 1000 || l.PendingReview < 2 {
		t.Errorf("status LLM %+v: want the model, 1 pass, 1000 tokens today, the summary and decision pending review", l)
	}
	bodies := fm.Requests()
	if len(bodies) != 1 {
		t.Fatalf("%d model requests, want 1", len(bodies))
	}
	for _, s := range secrets {
		for _, b := range bodies {
			if strings.Contains(b, s) || strings.Contains(b, s[:12]) {
				t.Errorf("a request body holds the secret %s…", s[:8])
			}
		}
	}
	if !strings.Contains(bodies[0], "Store report totals as a snapshot") {
		t.Error("the request lacks the user's words")
	}

	// The seed's checkpointSession, with evidence for a scope of its own.
	ev := func(summary string) api.CheckpointRequest {
		return api.CheckpointRequest{Nodes: []string{"repo:seed"}, Evidence: &api.Evidence{
			SessionSummary: summary, Transcripts: []string{"user: never edit generated files\nassistant: ok"},
			Artefacts: map[string]api.Artefact{"files_touched": `["llm_router.py"]`},
		}}
	}
	r1, err := d.c.Checkpoint(ctx, ev("Routed requests through the new LLM router."))
	if err != nil || r1.Checkpoints[0].Error != "" {
		t.Fatalf("first evidence checkpoint: %+v, %v", r1, err)
	}
	first, _ := d.c.Get(ctx, r1.Checkpoints[0].MedallionID)
	r2, err := d.c.Checkpoint(ctx, ev("Added retries to the router."))
	if err != nil || r2.Checkpoints[0].Error != "" {
		t.Fatalf("second evidence checkpoint: %+v, %v", r2, err)
	}
	second, _ := d.c.Get(ctx, r2.Checkpoints[0].MedallionID)
	list, err := d.c.List(ctx, medallion.Scope{GraphNodes: []string{"repo:seed"}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case first == nil || second == nil:
		t.Fatalf("medallions %v, %v", first, second)
	case len(list) != 1 || second.Meta.MedallionID != first.Meta.MedallionID:
		t.Errorf("%d medallions for the scope, ids %s and %s: want one, updated", len(list), first.Meta.MedallionID, second.Meta.MedallionID)
	case first.Meta.Version != 1 || second.Meta.Version != 2:
		t.Errorf("versions %d then %d, want 1 then 2", first.Meta.Version, second.Meta.Version)
	case second.Meta.CreatedAt != first.Meta.CreatedAt || second.Meta.UpdatedAt <= first.Meta.UpdatedAt:
		t.Errorf("created_at %s → %s, updated_at %s → %s", first.Meta.CreatedAt, second.Meta.CreatedAt, first.Meta.UpdatedAt, second.Meta.UpdatedAt)
	case second.Meta.Model != "fake-model":
		t.Errorf("model %q", second.Meta.Model)
	}
	if n := len(fm.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3 (one per checkpoint)", n)
	}
}

func hasDecision(m *medallion.Medallion, words string) bool {
	for _, d := range m.Decisions {
		if strings.Contains(d.Statement, words) {
			return true
		}
	}
	return false
}
