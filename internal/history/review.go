package history

import (
	"slices"

	"github.com/medallionhq/medallion/internal/medallion"
)

// ReviewChange is one model-made item whose review state differs between
// the two versions: a model added it (From is ""), or a user approved or
// rejected it. Item and Text are those of the Review entry.
type ReviewChange struct {
	Item string                `json:"item"`
	Text string                `json:"text,omitempty"`
	From medallion.ReviewState `json:"from,omitempty"`
	To   medallion.ReviewState `json:"to"`
}

// diffReview compares the review entries. An entry is the same item in
// both versions when its Item matches and, for the lists and the summary
// (which have no id), its Text too; the last entry of an item is its
// state, as in medallion.ReviewFor. An entry of the old version that is
// gone (trimmed, or an edited list item whose text moved on) is not
// reported: the item's own section shows what happened to it.
func diffReview(old, cur []medallion.Review) []ReviewChange {
	byText := func(item string) bool {
		return item == medallion.ItemSummary || slices.Contains(medallion.ReviewLists, item)
	}
	key := func(r medallion.Review) string {
		if byText(r.Item) {
			return r.Item + "\x00" + r.Text
		}
		return r.Item
	}
	before := make(map[string]medallion.ReviewState, len(old))
	for _, r := range old {
		before[key(r)] = r.State
	}
	var out []ReviewChange
	seen := map[string]bool{}
	for i := len(cur) - 1; i >= 0; i-- {
		r := cur[i]
		k := key(r)
		if seen[k] {
			continue
		}
		seen[k] = true
		if from, ok := before[k]; !ok || from != r.State {
			out = append(out, ReviewChange{Item: r.Item, Text: r.Text, From: from, To: r.State})
		}
	}
	slices.Reverse(out)
	return out
}
