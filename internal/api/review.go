package api

import (
	"strings"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Review endpoints (items a model wrote, Tier 1, and what their user made
// of them):
//
//	GET  /v1/review?node=N&tag=T&state=S   ReviewResponse
//	POST /v1/review                        ReviewActionRequest → ReviewActionResponse
//
// GET lists the model-made items of the latest medallions of a scope, or of
// every medallion when no node or tag is given; state is pending (the
// default), approved, rejected or all.
//
// POST approves, rejects or edits one item, or approves or rejects every
// pending item of a scope. Each medallion changed gets one new version
// with meta.model "user", so `medallionctl history` shows the user's
// change; a medallion changed by someone else meanwhile is read again and
// the change applied to the new version (a few times, then 409).
//
// Errors: an address naming no item is 404 and the message names the
// valid ones; an item a model did not write is 400; an address that fits
// several medallions is 400 and names them.

// Review states a GET may ask for, beside the medallion.ReviewStates.
const ReviewStateAll = "all"

// The actions of a ReviewActionRequest.
const (
	ReviewApprove = "approve"
	ReviewReject  = "reject"
	ReviewEdit    = "edit"
)

// ReviewItem is one model-made item.
type ReviewItem struct {
	MedallionID string `json:"medallion_id"`
	// Version is the medallion's version the item was read from.
	Version int `json:"version"`
	// Ref addresses the item within its medallion, as approve, reject and
	// edit take it (after "MEDALLION_ID:", see ReviewAddress): a decision
	// or question id ("D-003"), a list name and the item's 1-based
	// position in that list ("invariant:2", "avoid_repeating:1",
	// "entry_point:3"), or "summary". A rejected item has left its
	// medallion: its Ref is the bare Review.Item and it takes no action.
	Ref string `json:"ref"`
	// Kind is "decision", "open_question", "invariant",
	// "avoid_repeating", "entry_point" or "summary".
	Kind string `json:"kind"`
	// Text is the item as it stands: the decision's statement, the
	// question, the list item or the summary; for a rejected item, the
	// text it had when the model wrote it.
	Text string `json:"text"`
	// Detail is what else the item says, for reading: a decision's
	// rationale and confidence, a question's priority and what blocks it.
	Detail string                `json:"detail,omitempty"`
	Source string                `json:"source"`
	State  medallion.ReviewState `json:"state"`
	// Evidence is the medallion's evidence entries for the item: the
	// session and the events it was taken from.
	Evidence []medallion.Evidence `json:"evidence"`
}

// ReviewResponse answers GET /v1/review.
type ReviewResponse struct {
	// Items are in medallion order (newest updated first for a scope, by
	// id for every medallion), then summary, decisions, questions,
	// invariants, avoid-repeating items and entry points.
	Items []ReviewItem `json:"items"`
	// Medallions is how many medallions were looked at.
	Medallions int `json:"medallions"`
}

// ReviewActionRequest is the body of POST /v1/review.
type ReviewActionRequest struct {
	// Action is ReviewApprove, ReviewReject or ReviewEdit.
	Action string `json:"action"`
	// Item addresses one item: "MEDALLION_ID:REF", or REF alone when one
	// medallion (of the scope, when Nodes or Tags are given) holds a
	// model-made item at REF. See ReviewItem.Ref and ReviewAddress.
	Item string `json:"item,omitempty"`
	// Text is the new text of an edit: the decision's statement, the
	// question, the list item or the summary. An edit also approves.
	Text string `json:"text,omitempty"`
	// All acts on every pending item of the scope Nodes/Tags, which it
	// requires; approve and reject only, and not with Item.
	All   bool     `json:"all,omitempty"`
	Nodes []string `json:"nodes,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

// ReviewChange is what a review action did to one item.
type ReviewChange struct {
	ItemChange
	State medallion.ReviewState `json:"state"`
}

// ReviewActionResponse answers POST /v1/review.
type ReviewActionResponse struct {
	Changes []ReviewChange `json:"changes"`
}

// ReviewAddress (also ItemAddress) splits an item address as medallionctl takes it,
// "[MEDALLION_ID:]REF", into the medallion id ("" when absent) and REF.
// Medallion ids may hold ":", so the split is made from the right: a REF
// is one segment ("D-003", "summary") or a list name and a position
// ("invariant:2", "subsystem:1"). A decision or question id holding ":" cannot be
// addressed this way.
func ReviewAddress(addr string) (medallionID, ref string) {
	segs := strings.Split(addr, ":")
	n := 1
	if len(segs) >= 2 && isReviewList(segs[len(segs)-2]) {
		n = 2
	}
	return strings.Join(segs[:len(segs)-n], ":"), strings.Join(segs[len(segs)-n:], ":")
}

func isReviewList(s string) bool {
	for _, l := range medallion.ItemLists {
		if s == l {
			return true
		}
	}
	return false
}
