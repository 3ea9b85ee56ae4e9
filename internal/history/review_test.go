package history

import (
	"slices"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

func TestDiffReview(t *testing.T) {
	pending := func(item, text string) medallion.Review {
		return medallion.Review{Item: item, Text: text, Source: "tier1:m", State: medallion.ReviewPending}
	}
	from := &medallion.Medallion{Meta: medallion.Meta{MedallionID: "m", Version: 1}, Review: []medallion.Review{
		pending("D-001", "use X"),
		pending("invariant", "never push"),
		pending("invariant", "tabs"),
		pending("summary", "a daemon"),
	}}
	to := from.Clone()
	to.Meta.Version = 2
	to.Review[0].State = medallion.ReviewApproved
	to.Review[2].State = medallion.ReviewRejected
	to.Review = append(to.Review, pending("Q-001", "why?"))

	ch := Diff(from, to)
	want := []ReviewChange{
		{Item: "D-001", Text: "use X", From: medallion.ReviewPending, To: medallion.ReviewApproved},
		{Item: "invariant", Text: "tabs", From: medallion.ReviewPending, To: medallion.ReviewRejected},
		{Item: "Q-001", Text: "why?", To: medallion.ReviewPending},
	}
	if !slices.Equal(ch.Review, want) {
		t.Errorf("review changes %+v, want %+v", ch.Review, want)
	}
	if ch.Empty() {
		t.Error("a version that only settles review items is Empty")
	}
	if same := Diff(from, from); len(same.Review) != 0 || !same.Empty() {
		t.Errorf("diff of a version with itself: %+v", same.Review)
	}
}
