package medallion

import (
	"strconv"
	"strings"
)

// HighestIDs returns the highest decision ("D") and question ("Q") numbers
// m has ever used: in its lists, its evidence and review entries, and the
// "supersedes"/"resolves" references in decisions' rationales. A curator
// numbers a new item above them, so an id never names two items over a
// medallion's history (a rejected item's id in particular: a new item
// under it would read as rejected).
func (m *Medallion) HighestIDs() map[string]int {
	high := map[string]int{}
	see := func(id string) {
		prefix, num, ok := strings.Cut(id, "-")
		if !ok || (prefix != "D" && prefix != "Q") {
			return
		}
		if n, err := strconv.Atoi(num); err == nil && n > high[prefix] {
			high[prefix] = n
		}
	}
	for _, d := range m.Decisions {
		see(d.ID)
		for _, w := range strings.Fields(d.Rationale) {
			see(strings.Trim(w, ".,;:()"))
		}
	}
	for _, q := range m.OpenQuestions {
		see(q.ID)
	}
	for _, e := range m.Evidence {
		see(e.Item)
	}
	for _, r := range m.Review {
		see(r.Item)
	}
	return high
}
