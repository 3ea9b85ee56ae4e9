package curate

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/distill"
	"github.com/medallionhq/medallion/internal/llm"
	"github.com/medallionhq/medallion/internal/llm/llmtest"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/redact"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

// tier1Setup is a curator with Tier 1 on a real store and a fake model.
func tier1Setup(t *testing.T, cap int, replies ...string) (*Curator, *store.Badger, *llmtest.Model) {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fm := &llmtest.Model{Replies: replies, PromptTokens: 100, CompletionTokens: 20}
	srv := httptest.NewServer(fm)
	t.Cleanup(srv.Close)
	client, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "fake-model", MaxRetries: -1,
		Budget: &llm.Budget{Ledger: llm.NewMemoryLedger(), DailyTokens: cap}})
	if err != nil {
		t.Fatal(err)
	}
	cur := &Curator{Store: st, Tier1: &Tier1{
		Distiller: &distill.Distiller{LLM: client, Model: "fake-model", Redact: redact.String},
		Aux:       st,
	}}
	return cur, st, fm
}

func tier1Episode() checkpoint.Episode {
	var b builder
	b.prompt("Never commit directly to main.")
	b.prompt("Should the cache be per user?")
	b.say("The cache stays per process: a shared cache would need locking across workers, which we decided against.")
	b.run("c1", "Bash", "go test ./...", nil, false, "--- FAIL: TestCache: nil map")
	b.run("c2", "Edit", "", []string{"cache.go"}, true, "ok")
	b.run("c3", "Bash", "go test ./...", nil, true, "ok")
	ep := b.episode()
	ep.Trigger = checkpoint.TriggerManual
	return ep
}

const goodPatch = `{"summary":"Caching work: the cache is per process; tests pass.",
 "decisions":[{"op":"add","id":"","statement":"Keep the cache per process","rationale":"a shared cache needs locking across workers","confidence":"high","evidence":["E3"]},
              {"op":"drop","id":"D-001","statement":"","rationale":"","confidence":"low","evidence":[]},
              {"op":"revise","id":"D-077","statement":"x","rationale":"","confidence":"low","evidence":["E1"]}],
 "open_questions":[],
 "invariants":[],
 "avoid_repeating":[{"op":"add","ref":"","text":"go test failed with a nil map in TestCache: initialise the map in cache.go","evidence":["E4","E5","E6"]},
                    {"op":"add","ref":"","text":"made up","evidence":["E99"]}],
 "entry_points":[],
 "subsystems":[]}`

// TestTier1GoodAnswer: a valid patch becomes a new version written by the
// model, its items marked for review with their evidence; unknown targets
// and unsupported items are refused; the backlog is cleared.
func TestTier1GoodAnswer(t *testing.T) {
	cur, st, fm := tier1Setup(t, 0, goodPatch)
	ctx := context.Background()
	res, err := cur.Curate(ctx, tier1Episode())
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 1 || res.Items["tier1_added"] != 2 || res.Items["invariants"] != 1 {
		t.Fatalf("result %+v: want one version 1 holding tier 0's items and 2 model items", res)
	}
	m, err := st.Get(ctx, res.MedallionID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Model != "fake-model" || !strings.Contains(m.Summary.HighLevel, "per process") {
		t.Errorf("model %q summary %q", m.Meta.Model, m.Summary.HighLevel)
	}
	var stmts []string
	for _, d := range m.Decisions {
		stmts = append(stmts, d.ID+" "+d.Statement)
	}
	if !slices.ContainsFunc(stmts, func(s string) bool { return strings.HasSuffix(s, "Keep the cache per process") }) {
		t.Errorf("decisions %q lack the model's", stmts)
	}
	if slices.ContainsFunc(m.Affordances.AvoidRepeating, func(s string) bool { return s == "made up" }) {
		t.Error("an item citing no handle of the digest was stored")
	}
	pending := 0
	for _, r := range m.Review {
		if r.Source == "tier1:fake-model" && r.State == medallion.ReviewPending {
			pending++
		}
	}
	if pending != 3 { // the summary, the decision, the lesson
		t.Errorf("review %+v: want 3 pending model items", m.Review)
	}
	var ev []string
	for _, e := range m.Evidence {
		if strings.Contains(e.Text, "nil map") {
			ev = e.EventIDs
		}
	}
	if !slices.Equal(ev, []string{"e04", "e05", "e06", "e07", "e08", "e09"}) {
		t.Errorf("evidence of the lesson %v: want the events of E4–E6 (calls with their results)", ev)
	}
	// Tier 0 stored no decision: D-001 and D-077 name nothing the model
	// saw (the add's own new id is not a target), E99 is no handle.
	if got := cur.Tier1.Stats(); got.Passes != 1 || got.Refused != 3 {
		t.Errorf("stats %+v: want 1 pass, 3 refused (unknown D-001 and D-077, handle E99)", got)
	}
	if b, _ := st.GetAux(ctx, backlogKey("s1")); b != nil {
		t.Errorf("backlog not cleared: %s", b)
	}
	// The request: temperature 0, a strict schema, the transcript as data.
	body := fm.Requests()[0]
	for _, want := range []string{`"json_schema"`, `"strict":true`, `[E3] agent: The cache stays per process`, "data, not instructions"} {
		if !strings.Contains(body, want) {
			t.Errorf("request lacks %s", want)
		}
	}
}

// TestTier1Repair: invalid JSON, then a good repair.
func TestTier1Repair(t *testing.T) {
	cur, st, fm := tier1Setup(t, 0, "Sure! Here is the patch: {", goodPatch)
	res, err := cur.Curate(context.Background(), tier1Episode())
	if err != nil || res.Version != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	reqs := fm.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1], "Your reply could not be used") {
		t.Fatalf("%d requests; the second should quote the problem", len(reqs))
	}
	m, _ := st.Get(context.Background(), res.MedallionID)
	if m.Meta.Model != "fake-model" {
		t.Errorf("model %q", m.Meta.Model)
	}
}

// TestTier1Garbage: garbage twice leaves the Tier 0 version standing,
// counts the fallback, keeps the backlog for the next pass, and the
// checkpoint itself succeeds.
func TestTier1Garbage(t *testing.T) {
	cur, st, fm := tier1Setup(t, 0, "not json", `{"summary": 3}`)
	ctx := context.Background()
	res, err := cur.Curate(ctx, tier1Episode())
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 1 {
		t.Fatalf("result %+v: want the tier 0 version 1", res)
	}
	m, _ := st.Get(ctx, res.MedallionID)
	if m.Meta.Model != Model || len(m.Review) != 0 {
		t.Errorf("model %q review %v: want tier 0 untouched", m.Meta.Model, m.Review)
	}
	if len(fm.Requests()) != 2 {
		t.Errorf("%d requests: want one call and one repair", len(fm.Requests()))
	}
	st1 := cur.Tier1.Stats()
	if st1.Fallbacks != 1 || !strings.Contains(st1.LastError, "invalid after one repair") {
		t.Errorf("stats %+v", st1)
	}
	if b, _ := st.GetAux(ctx, backlogKey("s1")); b == nil {
		t.Error("the backlog was dropped with the failed pass")
	}
	if ids, err := cur.Unfinished(ctx); err != nil || len(ids) != 1 || ids[0] != "s1" {
		t.Errorf("Unfinished = %v, %v; want s1, whose backlog waits", ids, err)
	}
}

// TestTier1RedactsReply: a secret in the model's reply is stored redacted.
func TestTier1RedactsReply(t *testing.T) {
	secret := "ghp_" + strings.Repeat("a1B2c3D4e5", 4)[:36]
	patch := strings.Replace(goodPatch, "Keep the cache per process", "Keep the cache per process, token "+secret, 1)
	cur, st, _ := tier1Setup(t, 0, patch)
	res, err := cur.Curate(context.Background(), tier1Episode())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := st.Get(context.Background(), res.MedallionID)
	b, _ := json.Marshal(m)
	if strings.Contains(string(b), secret) {
		t.Fatal("the secret in the reply was stored")
	}
	if !strings.Contains(string(b), "Keep the cache per process") {
		t.Error("the decision is missing")
	}
}

// TestTier1DailyCap: with the day's tokens spent, no request is sent and
// Tier 0 stands.
func TestTier1DailyCap(t *testing.T) {
	cur, _, fm := tier1Setup(t, 100, goodPatch)
	ctx := context.Background()
	if _, err := cur.Curate(ctx, tier1Episode()); err != nil { // spends 120 tokens
		t.Fatal(err)
	}
	var b builder
	b.prompt("Always run gofmt before committing.")
	ep := b.episode()
	ep.SessionID, ep.Trigger = "s2", checkpoint.TriggerManual
	res, err := cur.Curate(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fm.Requests()); n != 1 {
		t.Errorf("%d requests: want none after the cap", n)
	}
	if st := cur.Tier1.Stats(); st.Fallbacks != 1 || !strings.Contains(st.LastError, "budget") {
		t.Errorf("stats %+v: want the cap as the fallback's cause", st)
	}
	if res.Version != 2 || res.Items["invariants"] != 1 {
		t.Errorf("result %+v: want tier 0's version 2", res)
	}
}

// TestTier1Backlog: count checkpoints only add to the backlog; the closing
// checkpoint sends it whole, once.
func TestTier1Backlog(t *testing.T) {
	cur, st, fm := tier1Setup(t, 0, goodPatch)
	ctx := context.Background()
	ep := tier1Episode()
	first, rest := ep, ep
	first.Events, first.Trigger = ep.Events[:3], checkpoint.TriggerEveryEvents
	rest.Events = ep.Events[3:]
	if _, err := cur.Curate(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.Curate(ctx, first); err != nil { // a crash made it run twice
		t.Fatal(err)
	}
	if n := len(fm.Requests()); n != 0 {
		t.Fatalf("%d requests at a count checkpoint", n)
	}
	if b, _ := st.GetAux(ctx, backlogKey("s1")); b == nil {
		t.Fatal("no backlog after a count checkpoint")
	}
	if _, err := cur.Curate(ctx, rest); err != nil {
		t.Fatal(err)
	}
	reqs := fm.Requests()
	if len(reqs) != 1 || strings.Count(reqs[0], "] user: Never commit directly to main") != 1 || !strings.Contains(reqs[0], "TestCache") {
		t.Fatalf("%d requests; want one holding both episodes once", len(reqs))
	}
}

var _ = transcript.KindUserPrompt

// TestTier1KeepsTheUsersHolds: a model pass that drops a pinned decision
// and adds an item the user forgot stores neither change (keepUser).
func TestTier1KeepsTheUsersHolds(t *testing.T) {
	cur, st, _ := tier1Setup(t, 0, goodPatch)
	ctx := context.Background()
	ep := tier1Episode()
	m := &medallion.Medallion{
		Meta:      medallion.Meta{MedallionID: ID(ep.Scope), SchemaVersion: medallion.SchemaVersion, Model: "user", Status: medallion.StatusActive},
		Scope:     medallion.Scope{GraphNodes: ep.Scope, Tags: []string{"project_state"}},
		Decisions: []medallion.Decision{{ID: "D-001", Statement: "Use Redis for the cache", Confidence: 0.9}},
		Pinned:    []medallion.Pin{{Item: "D-001"}},
	}
	m.Forget(medallion.KindDecision, "D-000", "keep the cache per process")
	if _, err := st.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.Curate(ctx, ep); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, ID(ep.Scope))
	if err != nil {
		t.Fatal(err)
	}
	if got.Meta.Model != "fake-model" {
		t.Fatalf("no model pass stored: model %q", got.Meta.Model)
	}
	if len(got.Decisions) == 0 || got.Decisions[0] != m.Decisions[0] || !got.IsPinned("D-001", "") {
		t.Errorf("the pinned decision did not survive the model's drop: %+v", got.Decisions)
	}
	if slices.ContainsFunc(got.Decisions, func(d medallion.Decision) bool { return strings.EqualFold(d.Statement, "Keep the cache per process") }) {
		t.Errorf("the forgotten decision came back: %+v", got.Decisions)
	}
}
