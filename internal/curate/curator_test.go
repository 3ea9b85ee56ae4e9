package curate

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

func TestCuratorCreatesThenUpdates(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()

	// A medallion of a wider scope must not be picked up.
	wider := Apply(nil, []string{"repo:muse", "module:cli"}, Items{Invariants: []Text{{Text: "never x"}}}, t0)
	if _, err := st.Create(ctx, wider); err != nil {
		t.Fatal(err)
	}

	clock := t0
	cur := &Curator{Store: st, Now: func() time.Time { return clock }}

	var chatter builder
	chatter.prompt("What does this do?")
	res, err := cur.Curate(ctx, chatter.episode())
	if err != nil || res.MedallionID != "" {
		t.Fatalf("chatter: %+v, %v; want nothing stored", res, err)
	}

	var b builder
	b.prompt("Never commit directly to main. I prefer small commits.")
	b.todos(transcript.Todo{Content: "Add metrics", Status: "pending"})
	res, err = cur.Curate(ctx, b.episode())
	if err != nil {
		t.Fatal(err)
	}
	if res.MedallionID != ID([]string{"repo:muse"}) || res.Version != 1 {
		t.Fatalf("first result = %+v", res)
	}
	if want := map[string]int{"decisions": 1, "invariants": 1, "open_questions": 1}; !maps.Equal(res.Items, want) {
		t.Errorf("first result counts %v, want %v (no empty kinds)", res.Items, want)
	}
	first, err := st.Get(ctx, res.MedallionID)
	if err != nil || first == nil {
		t.Fatalf("get: %v, %v", first, err)
	}

	clock = t0.Add(time.Hour)
	var b2 builder
	b2.prompt("i prefer small commits!")
	b2.todos(transcript.Todo{Content: "Add metrics", Status: "in_progress"}, transcript.Todo{Content: "Write docs", Status: "pending"})
	res, err = cur.Curate(ctx, b2.episode())
	if err != nil {
		t.Fatal(err)
	}
	if res.MedallionID != first.Meta.MedallionID || res.Version != 2 {
		t.Fatalf("second result = %+v", res)
	}
	second, err := st.Get(ctx, res.MedallionID)
	if err != nil {
		t.Fatal(err)
	}
	if second.Meta.CreatedAt != first.Meta.CreatedAt || second.Meta.Model != Model {
		t.Errorf("meta = %+v, created_at want %s", second.Meta, first.Meta.CreatedAt)
	}
	if len(second.Decisions) != 1 || second.Decisions[0].ID != first.Decisions[0].ID || second.Decisions[0].Confidence != 0.75 {
		t.Errorf("decisions = %+v", second.Decisions)
	}
	ids := map[string]string{}
	for _, q := range second.OpenQuestions {
		ids[q.Question] = q.ID
	}
	if ids["Add metrics"] != first.OpenQuestions[0].ID || ids["Write docs"] != "Q-002" {
		t.Errorf("questions = %+v", second.OpenQuestions)
	}
	if w, err := st.Get(ctx, wider.Meta.MedallionID); err != nil || w.Meta.Version != 1 {
		t.Errorf("the wider scope's medallion changed: %+v, %v", w, err)
	}
	if err := second.Validate(); err != nil {
		t.Error(err)
	}
}

// An episode's tags (an evidence checkpoint's --tag) are added to the scope
// tags of every version it writes, sorted, without repeats.
func TestCuratorAddsEpisodeTags(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	cur := &Curator{Store: st, Now: func() time.Time { return t0 }}

	for i, tags := range [][]string{{"seed", "project_state"}, {"release"}} {
		var b builder
		b.prompt("Never commit directly to main.")
		ep := b.episode()
		ep.Tags = tags
		res, err := cur.Curate(ctx, ep)
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.Get(ctx, res.MedallionID)
		if err != nil || m == nil {
			t.Fatalf("get: %v, %v", m, err)
		}
		want := [][]string{{"project_state", "seed"}, {"project_state", "release", "seed"}}[i]
		if !slices.Equal(m.Scope.Tags, want) {
			t.Errorf("version %d tags = %v, want %v", m.Meta.Version, m.Scope.Tags, want)
		}
	}
}
