package curate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

func TestContradicts(t *testing.T) {
	tests := []struct {
		older, newer string
		want         bool
	}{
		{"Use the shared cache for stock counts", "Don't use the shared cache for stock counts", true},
		{"Never squash commits", "Always squash commits", true},
		{"Use bbolt for storage", "Use Badger instead of bbolt", true},
		{"Use bbolt for storage", "Use Badger rather than bbolt for storage", true},
		{"Don't use bbolt", "Use Badger instead of bbolt", false}, // same direction
		{"Use small commits", "Never commit directly to main", false},
		{"Use the shared cache", "Use the shared cache", false},
		{"Run make lint before committing", "Don't deploy on Fridays", false},
	}
	for _, tt := range tests {
		if got := contradicts(tt.older, tt.newer); got != tt.want {
			t.Errorf("contradicts(%q, %q) = %v, want %v", tt.older, tt.newer, got, tt.want)
		}
	}
}

func decisionItems(statements ...string) Items {
	var it Items
	for i, s := range statements {
		it.Decisions = append(it.Decisions, Decision{Statement: s, Rationale: "The user said so.", Confidence: 0.7,
			Evidence: Evidence{SessionID: "s1", EventIDs: []string{fmt.Sprintf("e%d", i)}}})
	}
	return it
}

// TestApplySupersedes: a contradicting decision replaces the old one in
// the active list, names it ("supersedes D-00N (…)"), and takes a new id
// that is never one used before.
func TestApplySupersedes(t *testing.T) {
	scope := []string{"repo:muse"}
	m := Apply(nil, scope, decisionItems("Prefer bbolt for storage", "Prefer small commits"), t0)
	m.Meta.Version = 1
	m2 := Apply(m, scope, decisionItems("Prefer Badger instead of bbolt for storage"), t0.Add(time.Hour))
	if err := m2.Validate(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range m2.Decisions {
		ids = append(ids, d.ID)
	}
	if !slices.Equal(ids, []string{"D-002", "D-003"}) {
		t.Fatalf("decision ids = %q, want D-002 kept and D-003 new", ids)
	}
	want := "supersedes D-001 (Prefer bbolt for storage)"
	if !strings.Contains(m2.Decisions[1].Rationale, want) {
		t.Errorf("rationale = %q, want it to say %q", m2.Decisions[1].Rationale, want)
	}
	if m2.Meta.CreatedAt != m.Meta.CreatedAt || m2.Meta.Version != 1 {
		t.Errorf("meta = %+v", m2.Meta)
	}
	// A user rule that negates the new decision supersedes it too; the
	// summary names it, and later ids keep counting up.
	m2.Meta.Version = 2
	m3 := Apply(m2, scope, Items{Invariants: []Text{{Text: "Never prefer Badger over bbolt for storage"}}}, t0.Add(2*time.Hour))
	if len(m3.Decisions) != 1 || m3.Decisions[0].ID != "D-002" {
		t.Errorf("decisions = %+v, want only D-002", m3.Decisions)
	}
	if !strings.Contains(m3.Summary.HighLevel, "supersedes D-003") {
		t.Errorf("summary = %q", m3.Summary.HighLevel)
	}
	m4 := Apply(m3, scope, decisionItems("Prefer tabs"), t0.Add(3*time.Hour))
	if got := m4.Decisions[len(m4.Decisions)-1].ID; got != "D-004" {
		t.Errorf("next decision id = %s, want D-004 (D-003 was used)", got)
	}
}

// TestApplyResolves: a completed todo or a fixed error closes its question
// and the summary says "resolves Q-00N"; the closed id is not reused.
func TestApplyResolves(t *testing.T) {
	scope := []string{"repo:muse"}
	var b builder
	b.todos(transcript.Todo{Content: "Wire the daemon", Status: "pending"}, transcript.Todo{Content: "Add metrics", Status: "pending"})
	b.run("c1", "Bash", "make lint", nil, false, "lint: 3 problems")
	m := Apply(nil, scope, Extract(b.episode()), t0)
	byText := map[string]string{}
	for _, q := range m.OpenQuestions {
		byText[q.Question] = q.ID
	}
	var b2 builder
	b2.todos(transcript.Todo{Content: "Wire the daemon", Status: "completed"}, transcript.Todo{Content: "Add metrics", Status: "pending"})
	b2.run("c1", "Bash", "make lint", nil, false, "lint: 3 problems")
	b2.run("c2", "Bash", "make lint", nil, true, "")
	m2 := Apply(m, scope, Extract(b2.episode()), t0.Add(time.Hour))
	for _, q := range m2.OpenQuestions {
		if q.Question == "Wire the daemon" || strings.HasPrefix(q.Question, "Unresolved: lint") {
			t.Errorf("closed question still open: %+v", q)
		}
	}
	for _, want := range []string{"Wire the daemon (resolves " + byText["Wire the daemon"] + ")",
		"fixed lint: 3 problems (resolves " + byText["Unresolved: lint: 3 problems"] + ")"} {
		if !strings.Contains(m2.Summary.HighLevel, want) {
			t.Errorf("summary %q does not say %q", m2.Summary.HighLevel, want)
		}
	}
	m3 := Apply(m2, scope, Items{OpenQuestions: []Question{{Question: "Write docs", Priority: medallion.PriorityLow}}}, t0.Add(2*time.Hour))
	if got := m3.OpenQuestions[len(m3.OpenQuestions)-1].ID; got != "Q-004" {
		t.Errorf("new question id = %s, want Q-004 (Q-001..Q-003 were used)", got)
	}
}

// TestApplyEvidence: every item an episode touched has an evidence entry
// naming its events, and the list stays bounded.
func TestApplyEvidence(t *testing.T) {
	var b builder
	p := b.prompt("Never commit directly to main.")
	todo := b.todos(transcript.Todo{Content: "Add metrics", Status: "pending"})
	b.run("c1", "Edit", "", []string{"/repo/internal/x/x.go"}, true, "")
	m := Apply(nil, []string{"repo:muse"}, Extract(b.episode()), t0)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	has := func(item, text, id string) bool {
		return slices.ContainsFunc(m.Evidence, func(e medallion.Evidence) bool {
			return e.Item == item && e.Text == text && e.SessionID == "s1" && slices.Contains(e.EventIDs, id)
		})
	}
	if !has("invariant", "Never commit directly to main.", p) || !has("Q-001", "", todo) ||
		!has("subsystem", "internal/x", "e03") || !has("entry_point", "internal/x/x.go", "e03") {
		t.Errorf("evidence = %+v", m.Evidence)
	}
	for i := range 200 {
		m = Apply(m, []string{"repo:muse"}, Items{AvoidRepeating: []Text{{Text: fmt.Sprintf("when w%d x%d: y%d", i, i, i),
			Evidence: Evidence{SessionID: "s2", EventIDs: []string{"e"}}}}}, t0)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("after 200 updates: %v", err)
	}
	if !slices.ContainsFunc(m.Evidence, func(e medallion.Evidence) bool { return e.Item == "Q-001" }) {
		t.Error("the highest question id's evidence was trimmed: ids could be reused")
	}
}

// TestCuratorHundredCheckpoints: 100 checkpoints of one scope leave
// exactly one medallion, with 100 versions, its created_at kept.
func TestCuratorHundredCheckpoints(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	clock := t0
	cur := &Curator{Store: st, Now: func() time.Time { return clock }}
	var first string
	for i := range 100 {
		clock = t0.Add(time.Duration(i) * time.Minute)
		var b builder
		b.prompt(fmt.Sprintf("Never touch generated file gen%d.go.", i))
		b.todos(transcript.Todo{Content: fmt.Sprintf("Step %d", i), Status: "pending"})
		res, err := cur.Curate(ctx, b.episode())
		if err != nil {
			t.Fatalf("checkpoint %d: %v", i, err)
		}
		if res.Version != i+1 {
			t.Fatalf("checkpoint %d stored version %d, want %d", i, res.Version, i+1)
		}
		if first == "" {
			first = res.MedallionID
		} else if res.MedallionID != first {
			t.Fatalf("checkpoint %d went to %s, not %s", i, res.MedallionID, first)
		}
	}
	ms, err := st.LatestForScope(ctx, medallion.Scope{GraphNodes: []string{"repo:muse"}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 {
		t.Fatalf("%d medallions for the scope, want 1", len(ms))
	}
	h, err := st.History(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 100 {
		t.Errorf("%d versions, want 100", len(h))
	}
	m := ms[0]
	if m.Meta.CreatedAt != medallion.FormatTime(t0) || m.Meta.Version != 100 || m.Validate() != nil {
		t.Errorf("meta = %+v, validate = %v", m.Meta, m.Validate())
	}
}
