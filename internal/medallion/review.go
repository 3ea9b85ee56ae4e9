package medallion

import (
	"slices"
	"strings"
)

// The names Review.Item (and Evidence.Item) give the items that have no id:
// the affordance lists and the summary. Decisions and open questions go by
// their ids.
const (
	ItemInvariant      = "invariant"
	ItemAvoidRepeating = "avoid_repeating"
	ItemEntryPoint     = "entry_point"
	ItemSummary        = "summary"
)

// ReviewLists names the affordance lists a Review.Item may name, in the
// order a review shows them.
var ReviewLists = []string{ItemInvariant, ItemAvoidRepeating, ItemEntryPoint}

// List returns the affordance list named name (one of ReviewLists), or nil
// for any other name.
func (m *Medallion) List(name string) *[]string {
	switch name {
	case ItemInvariant:
		return &m.Affordances.Invariants
	case ItemAvoidRepeating:
		return &m.Affordances.AvoidRepeating
	case ItemEntryPoint:
		return &m.Affordances.RecommendedEntryPoints
	}
	return nil
}

// namedByText reports whether a Review.Item names its item by text: the
// list items and the summary have no id, so their entry is the one whose
// Text is the item's text.
func namedByText(item string) bool {
	return item == ItemSummary || slices.Contains(ReviewLists, item)
}

// ReviewFor returns the index in m.Review of the entry of one item, or -1
// when a model did not write it. item is a decision or question id, or a
// list name (ReviewLists or ItemSummary) with text the item's text: the
// list item, or the summary's high_level. When several entries match, the
// last one is the item's current state.
func (m *Medallion) ReviewFor(item, text string) int {
	byText := namedByText(item)
	text = strings.TrimSpace(text)
	for i := len(m.Review) - 1; i >= 0; i-- {
		r := m.Review[i]
		if r.Item != item {
			continue
		}
		if byText && strings.TrimSpace(r.Text) != text {
			continue
		}
		return i
	}
	return -1
}

// Pending reports whether an item (as ReviewFor names it) was written by a
// model and awaits review.
func (m *Medallion) Pending(item, text string) bool {
	i := m.ReviewFor(item, text)
	return i >= 0 && m.Review[i].State == ReviewPending
}
