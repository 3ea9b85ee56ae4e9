package history

import (
	"reflect"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

// TestForgottenAndPinned: what the user forgot is "forgotten", not
// resolved or removed; pins show as such.
func TestForgottenAndPinned(t *testing.T) {
	v1 := base()
	v2 := next(v1, func(m *medallion.Medallion) {
		m.Forget(medallion.KindQuestion, "Q-001", "Fix tempo parsing")
		m.OpenQuestions = m.OpenQuestions[1:]
		m.Forget(medallion.ItemInvariant, medallion.ItemInvariant, "never edit generated files")
		m.Affordances.Invariants = nil
		m.Decisions = m.Decisions[1:] // D-001 just left: not the user's doing
		m.Pinned = []medallion.Pin{{Item: "D-002"}}
	})
	c := Diff(v1, v2)
	if q := c.OpenQuestions; len(q) != 1 || q[0].Kind != Forgotten || q[0].ID != "Q-001" {
		t.Errorf("questions %+v", q)
	}
	if it := c.Invariants; len(it) != 1 || it[0].Kind != Forgotten {
		t.Errorf("invariants %+v", it)
	}
	if d := c.Decisions; len(d) != 1 || d[0].Kind != Removed {
		t.Errorf("decisions %+v", d)
	}
	if want := []PinChange{{Kind: Added, Item: "D-002"}}; !reflect.DeepEqual(c.Pins, want) {
		t.Errorf("pins %+v, want %+v", c.Pins, want)
	}
	// A later version forgetting nothing new calls nothing forgotten.
	v3 := next(v2, func(m *medallion.Medallion) { m.OpenQuestions = nil; m.Pinned = nil })
	c = Diff(v2, v3)
	if q := c.OpenQuestions; len(q) != 1 || q[0].Kind != Resolved || c.Pins[0].Kind != Removed {
		t.Errorf("questions %+v pins %+v", q, c.Pins)
	}
}
