package distill

import (
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

// TestApplyRefusesWhatTheUserHolds: a model cannot drop or resolve a
// pinned item, and what the user forgot counts as rejected.
func TestApplyRefusesWhatTheUserHolds(t *testing.T) {
	m := base()
	m.Pinned = []medallion.Pin{{Item: "D-001"}, {Item: "Q-004"}, {Item: medallion.ItemInvariant, Text: "never edit generated files"}}
	m.Forget(medallion.KindDecision, "D-000", "Keep the v1 columns after the migration")
	p, problems := parse(`{"summary":"","decisions":[
	  {"op":"drop","id":"D-001","statement":"","rationale":"","confidence":"low","evidence":[]},
	  {"op":"add","id":"","statement":"keep the v1 columns after the  migration","rationale":"","confidence":"medium","evidence":["E3"]}],
	 "open_questions":[{"op":"resolve","id":"Q-004","question":"","blocked_on":[],"priority":"low","evidence":["E2"]}],
	 "invariants":[{"op":"drop","ref":"I-1","text":"","evidence":[]}],
	 "avoid_repeating":[],"entry_points":[],"subsystems":[]}`)
	if p == nil {
		t.Fatal(problems)
	}
	out := m.Clone()
	if got, want := apply(out, newView(m, entries), p, "tier1:m", nil), (Applied{Refused: 4}); got != want {
		t.Errorf("applied %+v, want %+v", got, want)
	}
	if len(out.Decisions) != 1 || len(out.OpenQuestions) != 1 || len(out.Affordances.Invariants) != 1 {
		t.Errorf("decisions %v questions %v invariants %v", out.Decisions, out.OpenQuestions, out.Affordances.Invariants)
	}
}
