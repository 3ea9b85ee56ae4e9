package daemon

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/llm/llmtest"
)

// tier1Patch is a valid model answer for any digest of scopedLine events,
// adding the decision statement.
func tier1Patch(statement string) string {
	return `{"summary":"Work on the flag.","decisions":[{"op":"add","id":"","statement":"` + statement +
		`","rationale":"the user asked","confidence":"high","evidence":["E1"]}],"open_questions":[],"invariants":[],"avoid_repeating":[],"entry_points":[],"subsystems":[]}`
}

// scopedLine is a Claude Code user prompt of session sid working in repo.
func scopedLine(sid, repo string, n int) string {
	return fmt.Sprintf(`{"type":"user","sessionId":%q,"uuid":"u-%d","cwd":%q,"timestamp":"2026-03-02T09:00:%02dZ","message":{"role":"user","content":"add flag %d to the CLI"}}`+"\n",
		sid, n, repo, n%60, n)
}

// TestTier1OnFullDisk: on a full disk Tier 1 stops spending. The token
// ledger's write that the disk refuses mid-pass is logged once; later
// checkpoints make no model call (the backlog write before it is refused);
// a daemon started on the full disk (store read-only) still reads the
// ledger for status; and once space is back the buffered episode gets its
// pass.
func TestTier1OnFullDisk(t *testing.T) {
	var free atomic.Int64
	free.Store(1 << 40)
	fakeDisk(t, &free)
	fm := &llmtest.Model{PromptTokens: 900, CompletionTokens: 100, Replies: []string{
		tier1Patch("Add the flag to the CLI"), tier1Patch("Name the flag --fast"), tier1Patch("Document the flag")}}
	var fillDisk atomic.Bool // the next model request fills the disk
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fillDisk.Swap(false) {
			free.Store(10 << 20)
		}
		fm.ServeHTTP(w, r)
	}))
	defer srv.Close()

	cfg, path := watchConfig(t)
	llmCfg := config.DefaultLLM
	llmCfg.BaseURL, llmCfg.Model = srv.URL+"/v1", "fake-model"
	cfg.LLM = &llmCfg
	repo := filepath.Join(t.TempDir(), "muse")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(from, to int) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		for n := from; n < to; n++ {
			if _, err := f.WriteString(scopedLine("s-1", repo, n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	r := start(t, cfg)
	c := client.New(cfg.Socket)
	ctx := context.Background()
	checkpoint := func() api.CheckpointResult {
		t.Helper()
		resp, err := c.Checkpoint(ctx, api.CheckpointRequest{SessionID: "s-1"})
		if err != nil || len(resp.Checkpoints) != 1 {
			t.Fatalf("checkpoint: %+v, %v", resp, err)
		}
		return resp.Checkpoints[0]
	}
	llmStatus := func() *api.LLMStatus {
		t.Helper()
		st, err := c.Status(ctx)
		if err != nil || st.LLM == nil {
			t.Fatalf("status: %+v, %v", st, err)
		}
		return st.LLM
	}

	// With room: one pass, its tokens in the ledger.
	write(0, 2)
	waitFor(t, "the first events", func() bool { return buffered(c, "s-1") == 2 })
	if cp := checkpoint(); cp.Error != "" || cp.Items["tier1_added"] != 1 {
		t.Fatalf("checkpoint with room: %+v", cp)
	}
	if l := llmStatus(); l.TokensToday != 1000 || l.Passes != 1 {
		t.Fatalf("status after the pass: %+v", l)
	}

	// The disk fills while the model answers: the ledger write after the
	// reply and the version are refused, the episode stays buffered.
	write(2, 4)
	waitFor(t, "the next events", func() bool { return buffered(c, "s-1") == 2 })
	fillDisk.Store(true)
	if cp := checkpoint(); !strings.Contains(cp.Error, "disk full") {
		t.Errorf("checkpoint while the disk fills: %+v, want a disk full error", cp)
	}
	if n := len(fm.Requests()); n != 2 {
		t.Fatalf("%d model requests, want 2", n)
	}
	// Later checkpoints on the full disk make no model call and log the
	// ledger nothing more.
	for range 2 {
		if cp := checkpoint(); !strings.Contains(cp.Error, "disk full") {
			t.Errorf("checkpoint on a full disk: %+v, want a disk full error", cp)
		}
	}
	if n := len(fm.Requests()); n != 2 {
		t.Errorf("%d model requests after checkpoints on a full disk, want still 2", n)
	}
	if l := llmStatus(); l.TokensToday != 1000 || l.Passes != 1 {
		t.Errorf("status on a full disk: %+v, want the ledger's 1000 tokens and 1 pass", l)
	}
	logs := r.log.String()
	if n := strings.Count(logs, "llm token ledger write failed"); n != 1 || !strings.Contains(logs, "record 1000 tokens for ") {
		t.Errorf("%d ledger write failures logged, want 1 for the refused 1000 tokens:\n%s", n, logs)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "tier 1 failed") && !strings.Contains(line, "[DEBUG]") {
			t.Errorf("tier 1 logs a full disk the daemon has logged already: %s", line)
		}
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	// A start on the full disk opens the store read-only: the ledger still
	// reads, nothing calls the model, the daemon answers.
	free.Store(1 << 20)
	r = start(t, cfg)
	if l := llmStatus(); l.TokensToday != 1000 {
		t.Errorf("status on a read-only store: %+v, want the ledger's 1000 tokens", l)
	}
	if cp := checkpoint(); !strings.Contains(cp.Error, "disk full") {
		t.Errorf("checkpoint on a read-only store: %+v, want a disk full error", cp)
	}
	if n := len(fm.Requests()); n != 2 {
		t.Errorf("%d model requests on a read-only store, want still 2", n)
	}

	// Space back: the buffered episode gets its pass.
	free.Store(1 << 40)
	waitFor(t, "the read-write reopen", func() bool {
		st, err := c.Status(ctx)
		return err == nil && st.Disk != nil && !st.Disk.Full && !st.Disk.ReadOnly
	})
	if cp := checkpoint(); cp.Error != "" || cp.Events != 2 || cp.Items["tier1_added"] != 1 {
		t.Errorf("checkpoint once space is back: %+v", cp)
	}
	if l := llmStatus(); l.TokensToday != 2000 || l.Passes != 1 {
		t.Errorf("status once space is back: %+v, want 2000 tokens and this run's pass", l)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
