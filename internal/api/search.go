package api

import "github.com/medallionhq/medallion/internal/medallion"

// Search, item and record endpoints (issue 10: what an agent asks for while
// it works, through medallionctl search or the MCP server):
//
//	GET  /v1/search?q=QUERY&node=N&limit=L   SearchResponse
//	GET  /v1/item?item=ID:REF&version=V      Item
//	POST /v1/record                          RecordRequest → RecordResponse
//
// Search ranks the items of every version of every medallion (decisions,
// open questions, rules, known fixes, entry points, subsystems, summaries),
// so a decision that was superseded or a question that was resolved is
// found too, marked as such. node keeps the medallions whose latest
// version's graph nodes include every node given.
//
// Item reads one item of one version with its evidence and how it changed
// across versions. Record adds a decision, rule, open question or dead end
// an agent wrote to the scope's medallion, pending review like a model's
// items.

// DefaultSearchLimit and MaxSearchLimit bound how many results a search
// returns.
const (
	DefaultSearchLimit = 10
	MaxSearchLimit     = 100
)

// Item states: where an item stands in its medallion's latest version.
const (
	StateCurrent    = "current"    // in the latest version
	StateSuperseded = "superseded" // a decision replaced by a newer one (By)
	StateResolved   = "resolved"   // a question closed (By, when a decision says so)
	StateRevised    = "revised"    // the same item (id, subsystem, summary) with other text now
	StateRemoved    = "removed"    // dropped from its list
	StateRejected   = "rejected"   // removed by its user in review
)

// Item kinds, as search and item report them; a list item's kind is its
// list's name (medallion.ItemInvariant …).
const (
	KindDecision  = "decision"
	KindQuestion  = "open_question"
	KindSubsystem = "subsystem"
)

// SearchRequest names what GET /v1/search looks for.
type SearchRequest struct {
	Query string
	Nodes []string
	Limit int // 0: DefaultSearchLimit
}

// SearchResult is one item found.
type SearchResult struct {
	// Item addresses the item as GET /v1/item takes it, in Version:
	// "MEDALLION_ID:REF" (see ItemAddress).
	Item        string `json:"item"`
	MedallionID string `json:"medallion_id"`
	Ref         string `json:"ref"`
	Kind        string `json:"kind"`
	// Text is what the item says: a decision's statement and rationale,
	// the question, the rule, a subsystem's name and notes, the summary.
	Text string `json:"text"`
	// State is StateCurrent or why the item left (StateSuperseded …); By
	// names the decision that superseded or resolved it, when one did.
	State string `json:"state"`
	By    string `json:"by,omitempty"`
	// Version is the latest version holding the item as Text says, and
	// FirstVersion the first.
	Version      int `json:"version"`
	FirstVersion int `json:"first_version"`
	// Review is the item's review state when a model or an agent wrote it
	// (pending, approved), with Source what wrote it; empty otherwise.
	Review string `json:"review,omitempty"`
	Source string `json:"source,omitempty"`
	// Nodes are the graph nodes of the medallion's scope.
	Nodes []string `json:"nodes"`
	Score float64  `json:"score"`
}

// SearchResponse answers GET /v1/search.
type SearchResponse struct {
	Query string `json:"query"`
	// Terms are the index terms the query was split into.
	Terms []string `json:"terms"`
	// Matched counts the items holding at least one term; Results are
	// the best of them, best first.
	Matched int            `json:"matched"`
	Results []SearchResult `json:"results"`
	// Indexed counts every item version the index holds.
	Indexed int64 `json:"indexed"`
}

// ItemRequest names an item for GET /v1/item: Item is "MEDALLION_ID:REF"
// and Version the medallion's version to read it in (0: the latest).
type ItemRequest struct {
	Item    string
	Version int
}

// Item answers GET /v1/item: one item as one version holds it.
type Item struct {
	Item        string `json:"item"`
	MedallionID string `json:"medallion_id"`
	Ref         string `json:"ref"`
	Kind        string `json:"kind"`
	// Version is the version read; Latest the medallion's latest.
	Version int `json:"version"`
	Latest  int `json:"latest"`
	// State is StateCurrent when the latest version holds the item as
	// Version does, else why it left (see SearchResult.State).
	State string `json:"state"`
	By    string `json:"by,omitempty"`
	// Text is the item's main text; Detail the rest (a decision's
	// rationale and confidence, a question's priority and blockers).
	Text   string `json:"text"`
	Detail string `json:"detail,omitempty"`
	Review string `json:"review,omitempty"`
	Source string `json:"source,omitempty"`
	// Evidence names the sessions and events the item was taken from.
	Evidence []medallion.Evidence `json:"evidence"`
	// History is every text the item had, oldest first.
	History []ItemVersion `json:"history"`
	Nodes   []string      `json:"nodes"`
}

// ItemVersion is one text an item had, from FirstVersion to Version.
type ItemVersion struct {
	Text         string `json:"text"`
	FirstVersion int    `json:"first_version"`
	Version      int    `json:"version"`
	State        string `json:"state"`
	By           string `json:"by,omitempty"`
}

// The kinds of RecordRequest.
const (
	RecordDecision = "decision"
	RecordRule     = "rule"
	RecordQuestion = "question"
	RecordDeadEnd  = "dead_end"
)

// RecordKinds lists the kinds a record may have.
var RecordKinds = []string{RecordDecision, RecordRule, RecordQuestion, RecordDeadEnd}

// RecordRequest is the body of POST /v1/record: an agent adds one item to
// the active medallion of a scope (created when there is none).
type RecordRequest struct {
	// Kind is RecordDecision (a decision), RecordRule (an invariant),
	// RecordQuestion (an open question) or RecordDeadEnd (an
	// avoid-repeating item: an approach that failed, and why).
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Why is a decision's rationale; with a dead end or a rule it is
	// appended to the text.
	Why string `json:"why,omitempty"`
	// Nodes name the scope, or CWD a directory the daemon resolves to it.
	Nodes []string `json:"nodes,omitempty"`
	CWD   string   `json:"cwd,omitempty"`
	// Source says who recorded it, e.g. "agent:claude-code"; its review
	// entry carries it. Empty means "agent".
	Source string `json:"source,omitempty"`
}

// RecordResponse answers POST /v1/record.
type RecordResponse struct {
	// Item addresses the item recorded (or the one already holding the
	// same text), Version the medallion version holding it.
	Item        string `json:"item"`
	MedallionID string `json:"medallion_id"`
	Version     int    `json:"version"`
	Created     bool   `json:"created"`
	// Note says why nothing new was stored, e.g. "already recorded".
	Note string `json:"note,omitempty"`
}

// ItemAddress joins a medallion id and a REF into the address item,
// review and get take.
func ItemAddress(medallionID, ref string) string { return medallionID + ":" + ref }
