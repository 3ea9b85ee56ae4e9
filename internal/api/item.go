package api

// Item endpoint (the user's say over any item of a medallion, whoever
// wrote it):
//
//	POST /v1/item   ItemActionRequest → ItemActionResponse
//
// forget removes an item and remembers it (by a fingerprint of its text
// and the events it came from) so that no curator brings it back from the
// same evidence; edit replaces its text; pin keeps it as it is — no
// curator changes or removes it and the load's budget never leaves it
// out — and unpin lets it go. Each change is one new version with
// meta.model "user", read again and re-applied when someone else stored a
// version meanwhile (a few times, then 409).
//
// Errors: an address naming no item is 404 and the message names the
// valid ones; an address that fits several medallions is 400 and names
// them.

// The actions of an ItemActionRequest.
const (
	ItemForget = "forget"
	ItemEdit   = "edit"
	ItemPin    = "pin"
	ItemUnpin  = "unpin"
)

// ItemActions lists them, in the order help shows them.
var ItemActions = []string{ItemForget, ItemEdit, ItemPin, ItemUnpin}

// ItemActionRequest is the body of POST /v1/item.
type ItemActionRequest struct {
	// Action is one of ItemActions.
	Action string `json:"action"`
	// Item addresses the item as review does (see ReviewAddress):
	// "MEDALLION_ID:REF", or REF alone when one medallion (of the scope
	// Nodes/Tags, when given) holds an item at REF. REF is a decision or
	// question id, "invariant:N", "avoid_repeating:N", "entry_point:N",
	// "subsystem:N" (1-based) or "summary".
	Item string `json:"item"`
	// Text is an edit's new text: a decision's statement, a question, a
	// list item, the summary, or a subsystem's notes.
	Text  string   `json:"text,omitempty"`
	Nodes []string `json:"nodes,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

// ItemChange is what an action did to one item.
type ItemChange struct {
	MedallionID string `json:"medallion_id"`
	// Version is the medallion's version holding the change (unchanged
	// when there was nothing to do, see Note).
	Version int `json:"version"`
	// Ref is the item's address before the action.
	Ref  string `json:"ref"`
	Text string `json:"text"`
	// Note says why nothing changed, e.g. "already approved".
	Note string `json:"note,omitempty"`
}

// ItemActionResponse answers POST /v1/item.
type ItemActionResponse struct {
	Changes []ItemChange `json:"changes"`
}

// IDsResponse answers GET /v1/ids: every medallion (at most a few
// hundred), by id, for shell completion.
type IDsResponse struct {
	Medallions []IDEntry `json:"medallions"`
}

// IDEntry is one medallion in an IDsResponse.
type IDEntry struct {
	ID      string `json:"id"`
	Scope   string `json:"scope"` // its graph nodes, space-separated
	Version int    `json:"version"`
}
