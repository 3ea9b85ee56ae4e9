// Package medallion defines the medallion.v1 schema: the structured, versioned
// record of what is understood, decided and left open for one scope.
//
// The Go types are the single source of truth. Validate checks them and names
// every bad field by its JSON path; JSONSchema derives the JSON Schema from the
// same types and enum constants, so the LLM tier and `medallionctl schema`
// can never drift from what the store accepts.
package medallion

import "time"

// SchemaVersion is the only schema version this build reads and writes.
const SchemaVersion = "medallion.v1"

// TimeFormat is how the store writes timestamps: RFC 3339 in UTC with a fixed
// microsecond precision, so that equal instants are equal strings.
const TimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// FormatTime renders t in TimeFormat (UTC).
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime parses an RFC 3339 timestamp as found in meta fields.
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Status is the lifecycle state of a medallion.
type Status string

// The medallion statuses.
const (
	StatusActive     Status = "active"
	StatusStale      Status = "stale"
	StatusSuperseded Status = "superseded"
)

// Statuses lists every valid Status, in schema order.
var Statuses = []Status{StatusActive, StatusStale, StatusSuperseded}

// SubsystemStatus is the state of one subsystem in the summary.
type SubsystemStatus string

// The subsystem statuses.
const (
	SubsystemUnknown    SubsystemStatus = "unknown"
	SubsystemStable     SubsystemStatus = "stable"
	SubsystemInProgress SubsystemStatus = "in_progress"
	SubsystemDeprecated SubsystemStatus = "deprecated"
)

// SubsystemStatuses lists every valid SubsystemStatus.
var SubsystemStatuses = []SubsystemStatus{SubsystemUnknown, SubsystemStable, SubsystemInProgress, SubsystemDeprecated}

// Priority ranks an open question.
type Priority string

// The open question priorities.
const (
	PriorityLow    Priority = "low"
	PriorityMedium Priority = "medium"
	PriorityHigh   Priority = "high"
)

// Priorities lists every valid Priority.
var Priorities = []Priority{PriorityLow, PriorityMedium, PriorityHigh}

// Medallion is one scope's save file (schema medallion.v1, seed 000 §6).
type Medallion struct {
	Meta          Meta           `json:"meta"`
	Scope         Scope          `json:"scope"`
	Summary       Summary        `json:"summary"`
	Decisions     []Decision     `json:"decisions"`
	OpenQuestions []OpenQuestion `json:"open_questions"`
	Affordances   Affordances    `json:"affordances"`
	// Evidence names the events each item came from (newest last, at most
	// MaxEvidence entries); optional, so medallions written by hand or by
	// an LLM without it stay valid.
	Evidence []Evidence `json:"evidence,omitempty" jsonschema:"the events each item was taken from, newest last"`
	// Review marks the items a model wrote (Tier 1) and whether a person
	// approved or rejected them; optional, and kept beside the seed's
	// fields rather than inside them so those stay exactly the seed's.
	Review []Review `json:"review,omitempty" jsonschema:"the items a model wrote and their review state"`
	// Pinned and Forgotten are what the user said about single items
	// (medallionctl pin, forget): a pinned item is kept as it is by every
	// curator and by the load's budget; a forgotten one is not brought
	// back from the same evidence. Optional, like Review.
	Pinned    []Pin       `json:"pinned,omitempty" jsonschema:"the items the user pinned"`
	Forgotten []Forgotten `json:"forgotten,omitempty" jsonschema:"the items the user removed, by fingerprint"`
}

// ReviewState is where a model-made item stands with its user.
type ReviewState string

// The review states. A rejected item has left the lists; its entry stays
// so that no later curation brings it back.
const (
	ReviewPending  ReviewState = "pending"
	ReviewApproved ReviewState = "approved"
	ReviewRejected ReviewState = "rejected"
)

// ReviewStates lists every valid ReviewState.
var ReviewStates = []ReviewState{ReviewPending, ReviewApproved, ReviewRejected}

// MaxReview bounds Medallion.Review: writers drop the oldest settled
// (approved) entries first.
const MaxReview = 200

// Review is the provenance and review state of one model-made item.
type Review struct {
	// Item names the item as Evidence.Item does: a decision or question id,
	// or a list name (invariant, avoid_repeating, entry_point, summary).
	Item string `json:"item" jsonschema:"D-001, Q-002, or one of invariant, avoid_repeating, entry_point, summary"`
	// Text is the item's text when it was written: a list item's text, a
	// decision's statement or a question, so a rejected item is known again
	// if a model proposes it once more.
	Text   string      `json:"text"`
	Source string      `json:"source" jsonschema:"what wrote the item, e.g. tier1:MODEL"`
	State  ReviewState `json:"state"`
}

// MaxEvidence bounds Medallion.Evidence: writers keep the newest entries.
const MaxEvidence = 100

// Evidence ties one medallion item to the transcript events it came from.
type Evidence struct {
	// Item names the item: a decision or question id (D-001, Q-002) or an
	// item list (invariant, avoid_repeating, entry_point, subsystem).
	Item string `json:"item" jsonschema:"D-001, Q-002, or one of invariant, avoid_repeating, entry_point, subsystem"`
	// Text is the list item's text; empty for decisions and questions,
	// whose id names them.
	Text      string   `json:"text,omitempty" jsonschema:"the item text for list items; empty for decisions and questions"`
	SessionID string   `json:"session_id" jsonschema:"the agent session the events belong to"`
	EventIDs  []string `json:"event_ids" jsonschema:"ids of the events the item was extracted from"`
}

// Meta identifies a medallion and one of its versions.
type Meta struct {
	MedallionID   string `json:"medallion_id" jsonschema:"unique id: letters, digits and . _ : - (at most 128 bytes)"`
	SchemaVersion string `json:"schema_version" jsonschema:"always medallion.v1"`
	Model         string `json:"model" jsonschema:"what produced this version: tier0, an LLM name, or user"`
	CreatedAt     string `json:"created_at" jsonschema:"RFC 3339 time of the first version; kept by every update"`
	UpdatedAt     string `json:"updated_at" jsonschema:"RFC 3339 time of this version"`
	// KnowledgeMinTS and KnowledgeMaxTS bound the timestamps of the evidence
	// this medallion covers; empty when unknown.
	KnowledgeMinTS string `json:"knowledge_min_ts,omitempty" jsonschema:"earliest evidence timestamp covered (RFC 3339)"`
	KnowledgeMaxTS string `json:"knowledge_max_ts,omitempty" jsonschema:"latest evidence timestamp covered (RFC 3339)"`
	Status         Status `json:"status"`
	// Version counts stored versions: 1 for a new medallion, +1 on every
	// update. An update must carry the version it was based on.
	Version int `json:"version" jsonschema:"1 for a new medallion, +1 on every update"`
}

// Scope anchors a medallion to graph nodes ("repo:muse", "module:cli") and tags.
type Scope struct {
	GraphNodes []string `json:"graph_nodes" jsonschema:"graph node ids such as repo:muse or module:cli"`
	Tags       []string `json:"tags" jsonschema:"free-form tags such as project_state"`
}

// Summary is what is understood, in prose and per subsystem.
type Summary struct {
	HighLevel  string      `json:"high_level" jsonschema:"at most about 300 tokens"`
	Subsystems []Subsystem `json:"subsystems"`
}

// Subsystem is the state of one part of the scope.
type Subsystem struct {
	Name   string          `json:"name"`
	Status SubsystemStatus `json:"status"`
	Notes  string          `json:"notes"`
}

// Decision is something decided, with why and how sure.
type Decision struct {
	ID         string  `json:"id" jsonschema:"unique within the medallion, e.g. D-001"`
	Statement  string  `json:"statement"`
	Rationale  string  `json:"rationale"`
	Confidence float64 `json:"confidence" jsonschema:"0 to 1"`
}

// OpenQuestion is something left open and what it waits on.
type OpenQuestion struct {
	ID        string   `json:"id" jsonschema:"unique within the medallion, e.g. Q-001"`
	Question  string   `json:"question"`
	BlockedOn []string `json:"blocked_on"`
	Priority  Priority `json:"priority"`
}

// Affordances say how to proceed.
type Affordances struct {
	RecommendedEntryPoints []string `json:"recommended_entry_points"`
	AvoidRepeating         []string `json:"avoid_repeating"`
	Invariants             []string `json:"invariants"`
}

// VersionInfo describes one stored version of a medallion, for history listings.
type VersionInfo struct {
	Version   int    `json:"version"`
	UpdatedAt string `json:"updated_at"`
	Model     string `json:"model"`
	Status    Status `json:"status"`
}

// Normalize replaces nil slices with empty ones so that every medallion
// marshals the same way ([] rather than null) whatever produced it.
func (m *Medallion) Normalize() {
	norm := func(s *[]string) {
		if *s == nil {
			*s = []string{}
		}
	}
	norm(&m.Scope.GraphNodes)
	norm(&m.Scope.Tags)
	if m.Summary.Subsystems == nil {
		m.Summary.Subsystems = []Subsystem{}
	}
	if m.Decisions == nil {
		m.Decisions = []Decision{}
	}
	if m.OpenQuestions == nil {
		m.OpenQuestions = []OpenQuestion{}
	}
	for i := range m.OpenQuestions {
		norm(&m.OpenQuestions[i].BlockedOn)
	}
	norm(&m.Affordances.RecommendedEntryPoints)
	norm(&m.Affordances.AvoidRepeating)
	norm(&m.Affordances.Invariants)
	for i := range m.Evidence {
		norm(&m.Evidence[i].EventIDs)
	}
}

// Clone returns a deep copy of m.
func (m *Medallion) Clone() *Medallion {
	c := *m
	c.Scope.GraphNodes = cloneStrings(m.Scope.GraphNodes)
	c.Scope.Tags = cloneStrings(m.Scope.Tags)
	c.Summary.Subsystems = append([]Subsystem(nil), m.Summary.Subsystems...)
	c.Decisions = append([]Decision(nil), m.Decisions...)
	c.OpenQuestions = append([]OpenQuestion(nil), m.OpenQuestions...)
	for i := range c.OpenQuestions {
		c.OpenQuestions[i].BlockedOn = cloneStrings(m.OpenQuestions[i].BlockedOn)
	}
	c.Affordances.RecommendedEntryPoints = cloneStrings(m.Affordances.RecommendedEntryPoints)
	c.Affordances.AvoidRepeating = cloneStrings(m.Affordances.AvoidRepeating)
	c.Affordances.Invariants = cloneStrings(m.Affordances.Invariants)
	if m.Review != nil {
		c.Review = append([]Review(nil), m.Review...)
	}
	if m.Pinned != nil {
		c.Pinned = append([]Pin(nil), m.Pinned...)
	}
	if m.Forgotten != nil {
		c.Forgotten = append([]Forgotten(nil), m.Forgotten...)
		for i := range c.Forgotten {
			c.Forgotten[i].EventIDs = cloneStrings(m.Forgotten[i].EventIDs)
		}
	}
	if m.Evidence != nil {
		c.Evidence = append([]Evidence(nil), m.Evidence...)
		for i := range c.Evidence {
			c.Evidence[i].EventIDs = cloneStrings(m.Evidence[i].EventIDs)
		}
	}
	return &c
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}

// The rationales Tier 0 gives a decision taken from the user's own words
// (a request, a preference). A model revising the medallion may move such
// an item, never lose its words (see distill).
const (
	RationaleUserRequest    = "user request"
	RationaleUserPreference = "user preference"
)
