package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

// TestPinnedSurviveTheBudget: a pinned item is in every load, first in its
// section, however small the budget; without pins the budget holds.
func TestPinnedSurviveTheBudget(t *testing.T) {
	m := fixed()
	last := m.Affordances.RecommendedEntryPoints[len(m.Affordances.RecommendedEntryPoints)-1]
	m.Pinned = []medallion.Pin{{Item: medallion.ItemEntryPoint, Text: last}, {Item: "D-002"}}
	for _, budget := range []int{60, 200, DefaultBudget} {
		r := Load([]*medallion.Medallion{m}, Options{Budget: budget})
		if !strings.Contains(r.Text, "- "+last+"\n") || !strings.Contains(r.Text, "[D-002]") {
			t.Errorf("budget %d: pinned items missing:\n%s", budget, r.Text)
		}
		if budget >= 200 && r.Tokens > budget {
			t.Errorf("budget %d: %d tokens with room for the pins", budget, r.Tokens)
		}
		j := Load([]*medallion.Medallion{m}, Options{Budget: budget, Format: FormatJSON})
		var v map[string]any
		if err := json.Unmarshal([]byte(j.Text), &v); err != nil || !strings.Contains(j.Text, last) {
			t.Errorf("budget %d JSON: %v\n%s", budget, err, j.Text)
		}
	}
	r := Load([]*medallion.Medallion{m}, Options{Budget: DefaultBudget})
	if i := strings.Index(r.Text, "## Decisions\n"); i < 0 || !strings.HasPrefix(r.Text[i+len("## Decisions\n"):], "- [D-002]") {
		t.Errorf("the pinned decision is not first:\n%s", r.Text)
	}
}
