package api

import "testing"

func TestReviewAddress(t *testing.T) {
	for _, tc := range []struct{ addr, id, ref string }{
		{"D-003", "", "D-003"},
		{"muse-state:D-003", "muse-state", "D-003"},
		{"repo:muse:state:Q-001", "repo:muse:state", "Q-001"},
		{"invariant:2", "", "invariant:2"},
		{"muse-state:invariant:2", "muse-state", "invariant:2"},
		{"a:b:avoid_repeating:10", "a:b", "avoid_repeating:10"},
		{"entry_point:x", "", "entry_point:x"},
		{"invariant", "", "invariant"},
		{"m:summary", "m", "summary"},
		{"summary", "", "summary"},
		{"", "", ""},
	} {
		if id, ref := ReviewAddress(tc.addr); id != tc.id || ref != tc.ref {
			t.Errorf("ReviewAddress(%q) = %q, %q; want %q, %q", tc.addr, id, ref, tc.id, tc.ref)
		}
	}
}
