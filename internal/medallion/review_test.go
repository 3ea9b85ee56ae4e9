package medallion

import "testing"

func TestReviewFor(t *testing.T) {
	m := &Medallion{Review: []Review{
		{Item: "D-001", Text: "use X", Source: "tier1:m", State: ReviewPending},
		{Item: ItemInvariant, Text: "never push to main", Source: "tier1:m", State: ReviewPending},
		{Item: ItemInvariant, Text: "tabs", Source: "tier1:m", State: ReviewRejected},
		{Item: ItemSummary, Text: "a daemon", Source: "tier1:m", State: ReviewApproved},
		// A later entry of the same item is its current state.
		{Item: "D-001", Text: "use X", Source: "tier1:m", State: ReviewApproved},
	}}
	for _, tc := range []struct {
		item, text string
		want       int
		pending    bool
	}{
		{"D-001", "", 4, false},
		{"D-001", "some other statement", 4, false}, // ids name decisions, whatever their text
		{"D-002", "use X", -1, false},
		{ItemInvariant, "never push to main", 1, true},
		{ItemInvariant, "  never push to main\n", 1, true},
		{ItemInvariant, "never push", -1, false},
		{ItemAvoidRepeating, "never push to main", -1, false},
		{ItemInvariant, "tabs", 2, false},
		{ItemSummary, "a daemon", 3, false},
		{ItemSummary, "a daemon, edited by hand", -1, false},
	} {
		if got := m.ReviewFor(tc.item, tc.text); got != tc.want {
			t.Errorf("ReviewFor(%q, %q) = %d, want %d", tc.item, tc.text, got, tc.want)
		}
		if got := m.Pending(tc.item, tc.text); got != tc.pending {
			t.Errorf("Pending(%q, %q) = %v, want %v", tc.item, tc.text, got, tc.pending)
		}
	}
}

func TestList(t *testing.T) {
	m := &Medallion{Affordances: Affordances{Invariants: []string{"i"}, AvoidRepeating: []string{"a"}, RecommendedEntryPoints: []string{"e"}}}
	for name, want := range map[string]string{ItemInvariant: "i", ItemAvoidRepeating: "a", ItemEntryPoint: "e"} {
		if l := m.List(name); l == nil || (*l)[0] != want {
			t.Errorf("List(%q) = %v", name, l)
		}
	}
	if m.List(ItemSummary) != nil || m.List("D-001") != nil {
		t.Error("List of a name that is not a list is not nil")
	}
}
