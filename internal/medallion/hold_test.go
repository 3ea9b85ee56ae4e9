package medallion

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestHoldsRoundTrip(t *testing.T) {
	m := withEvidence()
	m.Pinned = []Pin{{Item: "D-001"}, {Item: ItemInvariant, Text: "never commit generated files"}}
	m.Forget(KindDecision, "D-002", "Store times in UTC")
	m.Forget(ItemInvariant, ItemInvariant, "never push to main")
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	var got Medallion
	if err := got.UnmarshalBinary(mustMarshalBinary(t, m)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Pinned, m.Pinned) || !reflect.DeepEqual(got.Forgotten, m.Forgotten) {
		t.Errorf("round trip: pinned %+v forgotten %+v, want %+v %+v", got.Pinned, got.Forgotten, m.Pinned, m.Forgotten)
	}
	// The forgotten invariant kept the events of its evidence, no text.
	if f := m.Forgotten[1]; !slices.Equal(f.EventIDs, []string{"e3"}) || f.Fingerprint != Fingerprint("Never  push to MAIN") {
		t.Errorf("forgotten invariant = %+v", f)
	}

	m.Pinned = append(m.Pinned, Pin{Item: ItemEntryPoint})
	m.Forgotten = append(m.Forgotten, Forgotten{Kind: "rule"})
	err := m.Validate()
	for _, want := range []string{"pinned[2].text: required for a entry_point item", "forgotten[2].kind: must be one of", "forgotten[2].fingerprint: required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want %q", err, want)
		}
	}
}

// TestKeepUserHolds: what a curator made of a medallion keeps the user's
// pinned items as they were and loses the forgotten ones it brought back.
func TestKeepUserHolds(t *testing.T) {
	prev := full()
	prev.Evidence = []Evidence{{Item: ItemInvariant, Text: "step 2: keep going", SessionID: "s1", EventIDs: []string{"e7"}}}
	prev.Pinned = []Pin{{Item: "D-001"}, {Item: "Q-002"}, {Item: ItemInvariant, Text: "never commit generated files"},
		{Item: ItemSummary, Text: prev.Summary.HighLevel}, {Item: ItemSubsystem, Text: "parser"}}
	prev.Forget(ItemInvariant, ItemInvariant, "step 2: keep going")
	prev.Forget(KindDecision, "D-009", "Ship it on Friday")

	next := prev.Clone()
	next.Pinned, next.Forgotten = nil, nil
	next.Decisions[0].Statement = "Use urfave/cli"               // a pinned decision revised
	next.OpenQuestions = slices.Delete(next.OpenQuestions, 1, 2) // a pinned question resolved
	next.Affordances.Invariants = []string{"step 2: keep going"} // a pinned rule dropped, a forgotten one back
	next.Summary.HighLevel = "Something else."                   // a pinned summary rewritten
	next.Summary.Subsystems[0].Status = SubsystemDeprecated      // a pinned subsystem changed
	next.Decisions = append(next.Decisions, Decision{ID: "D-010", Statement: "ship it on  friday", Confidence: 0.5})
	next.Decisions = append(next.Decisions, Decision{ID: "D-011", Statement: "New and fine", Confidence: 0.5})
	next.Evidence = append(next.Evidence, Evidence{Item: "D-010", SessionID: "s2", EventIDs: []string{"e9"}})
	next.Review = []Review{{Item: "D-010", Text: "ship it on friday", Source: "tier1:m", State: ReviewPending}}
	next.Decisions[1].Statement = "Store times in local time" // not pinned: the curator's to change

	restored, removed := KeepUserHolds(prev, next)
	if restored != 5 || removed != 2 {
		t.Errorf("restored %d, removed %d; want 5, 2", restored, removed)
	}
	if err := next.Validate(); err != nil {
		t.Fatal(err)
	}
	if next.Decisions[0] != prev.Decisions[0] || next.Decisions[1].Statement != "Store times in local time" {
		t.Errorf("decisions = %+v", next.Decisions)
	}
	if ids := func() (out []string) {
		for _, d := range next.Decisions {
			out = append(out, d.ID)
		}
		return
	}(); !slices.Equal(ids, []string{"D-001", "D-002", "D-003", "D-011"}) {
		t.Errorf("decision ids = %v", ids)
	}
	if !reflect.DeepEqual(next.OpenQuestions[1], prev.OpenQuestions[1]) {
		t.Errorf("questions = %+v", next.OpenQuestions)
	}
	if !slices.Equal(next.Affordances.Invariants, []string{"never commit generated files"}) {
		t.Errorf("invariants = %v", next.Affordances.Invariants)
	}
	if next.Summary.HighLevel != prev.Summary.HighLevel || next.Summary.Subsystems[0] != prev.Summary.Subsystems[0] {
		t.Errorf("summary = %+v", next.Summary)
	}
	if len(next.Review) != 0 || slices.ContainsFunc(next.Evidence, func(e Evidence) bool { return e.Item == "D-010" }) {
		t.Errorf("the forgotten decision left traces: review %+v evidence %+v", next.Review, next.Evidence)
	}
	if !reflect.DeepEqual(next.Pinned, prev.Pinned) || !reflect.DeepEqual(next.Forgotten, prev.Forgotten) {
		t.Errorf("holds not carried: %+v %+v", next.Pinned, next.Forgotten)
	}

	// Taken from the same events, a reworded item is the forgotten one.
	if !prev.WasForgotten(ItemInvariant, "keep going, step two", []string{"e7"}) {
		t.Error("an invariant from the forgotten one's events was not known")
	}
	if prev.WasForgotten(ItemInvariant, "keep going, step two", []string{"e7", "e8"}) || prev.WasForgotten(KindDecision, "x", []string{"e7"}) {
		t.Error("new evidence, or another kind of item, counted as forgotten")
	}
	if r, d := KeepUserHolds(nil, next); r != 0 || d != 0 {
		t.Error("a new medallion has nothing to keep")
	}
}
