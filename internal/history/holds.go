package history

import (
	"slices"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Forgotten is a removal by the user ("medallionctl forget", or the old
// wording of an "edit"): the item left because the user said so, not
// because a curator resolved or superseded it.
const Forgotten Kind = "forgotten"

// PinChange is one item the user pinned (Added) or unpinned (Removed)
// between the two versions, named as medallion.Pin names it.
type PinChange struct {
	Kind Kind   `json:"kind"`
	Item string `json:"item"`
	Text string `json:"text,omitempty"`
}

// markForgotten relabels the removals of c whose text the new version
// remembers as forgotten and the old one did not: the user forgot them.
func markForgotten(c *Changes, from, to *medallion.Medallion) {
	forgot := map[string]bool{}
	for _, f := range to.Forgotten {
		forgot[f.Fingerprint] = true
	}
	for _, f := range from.Forgotten {
		delete(forgot, f.Fingerprint)
	}
	if len(forgot) == 0 {
		return
	}
	is := func(text string) bool { return forgot[medallion.Fingerprint(text)] }
	for i := range c.Decisions {
		if d := &c.Decisions[i]; d.Kind != Added && d.Kind != Changed && is(d.From.Statement) {
			d.Kind, d.By = Forgotten, ""
		}
	}
	for i := range c.OpenQuestions {
		if q := &c.OpenQuestions[i]; q.Kind != Added && q.Kind != Changed && is(q.From.Question) {
			q.Kind, q.By = Forgotten, ""
		}
	}
	for i := range c.Subsystems {
		if s := &c.Subsystems[i]; s.Kind == Removed && is(s.Name) {
			s.Kind = Forgotten
		}
	}
	for _, list := range [][]ItemChange{c.Invariants, c.AvoidRepeating, c.RecommendedEntryPoints} {
		for i := range list {
			if list[i].Kind == Removed && is(list[i].Text) {
				list[i].Kind = Forgotten
			}
		}
	}
}

// diffPins lists the pins added and removed between two versions.
func diffPins(old, cur []medallion.Pin) []PinChange {
	var out []PinChange
	for _, p := range cur {
		if !slices.Contains(old, p) {
			out = append(out, PinChange{Kind: Added, Item: p.Item, Text: p.Text})
		}
	}
	for _, p := range old {
		if !slices.Contains(cur, p) {
			out = append(out, PinChange{Kind: Removed, Item: p.Item, Text: p.Text})
		}
	}
	return out
}
