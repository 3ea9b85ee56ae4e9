package search

import (
	"slices"

	"github.com/medallionhq/medallion/internal/history"
	"github.com/medallionhq/medallion/internal/medallion"
)

// leaveReasons says why the items of one version left in the next: the
// decision that superseded a decision or resolved a question, by
// reference (kind and ref), from history.Diff.
type leaveReasons map[[2]string]string

func reasons(prev, cur *medallion.Medallion) leaveReasons {
	c := history.Diff(prev, cur)
	r := leaveReasons{}
	for _, d := range c.Decisions {
		if d.Kind == history.Superseded {
			r[[2]string{"decision", d.ID}] = d.By
		}
	}
	for _, q := range c.OpenQuestions {
		if q.Kind == history.Resolved && q.By != "" {
			r[[2]string{"open_question", q.ID}] = q.By
		}
	}
	return r
}

// of says why the item text it, held by the version before cur, is not in
// cur: revised (its decision, question, subsystem or summary is there
// with another text), rejected in review, superseded by a decision,
// resolved (a question that left), or removed.
func (r leaveReasons) of(it item, cur *medallion.Medallion) (state, by string) {
	sameRef := false
	switch it.kind {
	case "decision":
		sameRef = slices.ContainsFunc(cur.Decisions, func(d medallion.Decision) bool { return d.ID == it.ref })
	case "open_question":
		sameRef = slices.ContainsFunc(cur.OpenQuestions, func(q medallion.OpenQuestion) bool { return q.ID == it.ref })
	case "subsystem":
		sameRef = slices.ContainsFunc(cur.Summary.Subsystems, func(s medallion.Subsystem) bool { return s.Name == it.ref })
	case medallion.ItemSummary:
		sameRef = cur.Summary.HighLevel != ""
	}
	if sameRef {
		return "revised", ""
	}
	reviewItem, reviewText := it.ref, it.text
	if it.kind == "decision" || it.kind == "open_question" {
		reviewText = ""
	}
	if i := cur.ReviewFor(reviewItem, reviewText); i >= 0 && cur.Review[i].State == medallion.ReviewRejected {
		return "rejected", ""
	}
	by = r[[2]string{it.kind, it.ref}]
	switch {
	case it.kind == "decision" && by != "":
		return "superseded", by
	case it.kind == "open_question":
		return "resolved", by
	}
	return "removed", ""
}
