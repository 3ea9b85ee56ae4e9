// Package history compares two versions of a medallion: what was added,
// changed and removed in each section, and why an item left — a decision
// superseded by a newer one, a question resolved.
//
// It is pure (no store, no client) so that medallionctl can diff two
// versions it fetched and tests can diff medallions built in memory.
package history

import (
	"slices"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Kind says what happened to one entry between two versions.
type Kind string

// The change kinds. Superseded, Resolved and Forgotten are removals with a
// reason: the curator drops a contradicted decision from the active view
// and writes "supersedes <ID>" in the rationale of the one that replaces
// it; a question leaves open_questions when it is resolved; the user
// forgets an item (holds.go).
const (
	Added      Kind = "added"
	Changed    Kind = "changed"
	Removed    Kind = "removed"
	Superseded Kind = "superseded"
	Resolved   Kind = "resolved"
)

// Marker is the one-character sign of k in human output: + added,
// ~ changed, - removed (superseded and resolved included).
func (k Kind) Marker() string {
	switch k {
	case Added:
		return "+"
	case Changed:
		return "~"
	}
	return "-"
}

// FieldChange is one scalar field with its old and new value, as text.
type FieldChange struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// DecisionChange is one decision added, changed or removed. From is the
// decision in the old version, To in the new one (nil when absent). By
// names the decision that superseded it.
type DecisionChange struct {
	Kind   Kind                `json:"kind"`
	ID     string              `json:"id"`
	From   *medallion.Decision `json:"from,omitempty"`
	To     *medallion.Decision `json:"to,omitempty"`
	Fields []FieldChange       `json:"fields,omitempty"`
	By     string              `json:"by,omitempty"`
}

// QuestionChange is one open question added, changed or removed. By names
// the decision (or "summary") that says it resolves the question.
type QuestionChange struct {
	Kind   Kind                    `json:"kind"`
	ID     string                  `json:"id"`
	From   *medallion.OpenQuestion `json:"from,omitempty"`
	To     *medallion.OpenQuestion `json:"to,omitempty"`
	Fields []FieldChange           `json:"fields,omitempty"`
	By     string                  `json:"by,omitempty"`
}

// SubsystemChange is one subsystem, matched by name, added, changed or
// removed.
type SubsystemChange struct {
	Kind   Kind                 `json:"kind"`
	Name   string               `json:"name"`
	From   *medallion.Subsystem `json:"from,omitempty"`
	To     *medallion.Subsystem `json:"to,omitempty"`
	Fields []FieldChange        `json:"fields,omitempty"`
}

// ItemChange is one affordance line added or removed. Affordances are free
// text without ids, so an edited line is a removal and an addition.
type ItemChange struct {
	Kind Kind   `json:"kind"`
	Text string `json:"text"`
}

// Changes is everything that differs between two versions of a medallion.
// Within a section, entries present in the new version come first in its
// order, then the removed ones in the old version's order.
type Changes struct {
	ID          string `json:"id"`
	FromVersion int    `json:"from_version"`
	ToVersion   int    `json:"to_version"`
	// Meta lists version, model, status and updated_at when they differ.
	Meta []FieldChange `json:"meta,omitempty"`
	// HighLevel is set when summary.high_level was rewritten.
	HighLevel              *FieldChange      `json:"high_level,omitempty"`
	Subsystems             []SubsystemChange `json:"subsystems,omitempty"`
	Decisions              []DecisionChange  `json:"decisions,omitempty"`
	OpenQuestions          []QuestionChange  `json:"open_questions,omitempty"`
	Invariants             []ItemChange      `json:"invariants,omitempty"`
	AvoidRepeating         []ItemChange      `json:"avoid_repeating,omitempty"`
	RecommendedEntryPoints []ItemChange      `json:"recommended_entry_points,omitempty"`
	// Review lists the model-made items whose review state changed (see
	// ReviewChange).
	Review []ReviewChange `json:"review,omitempty"`
	// Pins lists the items the user pinned or unpinned.
	Pins []PinChange `json:"pins,omitempty"`
}

// Empty reports whether the two versions have the same content (meta
// aside: two versions always differ in their version number).
func (c *Changes) Empty() bool {
	return c.HighLevel == nil && len(c.Subsystems) == 0 && len(c.Decisions) == 0 &&
		len(c.OpenQuestions) == 0 && len(c.Invariants) == 0 &&
		len(c.AvoidRepeating) == 0 && len(c.RecommendedEntryPoints) == 0 && len(c.Review) == 0 &&
		len(c.Pins) == 0
}

// Diff compares from (the older version) with to (the newer one). Neither
// is modified.
func Diff(from, to *medallion.Medallion) Changes {
	c := Changes{ID: to.Meta.MedallionID, FromVersion: from.Meta.Version, ToVersion: to.Meta.Version}
	field := func(name, a, b string) {
		if a != b {
			c.Meta = append(c.Meta, FieldChange{Field: name, From: a, To: b})
		}
	}
	field("version", strconv.Itoa(from.Meta.Version), strconv.Itoa(to.Meta.Version))
	field("model", from.Meta.Model, to.Meta.Model)
	field("status", string(from.Meta.Status), string(to.Meta.Status))
	field("updated_at", from.Meta.UpdatedAt, to.Meta.UpdatedAt)
	if from.Summary.HighLevel != to.Summary.HighLevel {
		c.HighLevel = &FieldChange{Field: "high_level", From: from.Summary.HighLevel, To: to.Summary.HighLevel}
	}
	c.Subsystems = diffSubsystems(from.Summary.Subsystems, to.Summary.Subsystems)
	c.Decisions = diffDecisions(from.Decisions, to.Decisions)
	c.OpenQuestions = diffQuestions(from.OpenQuestions, to)
	c.Invariants = diffItems(from.Affordances.Invariants, to.Affordances.Invariants)
	c.AvoidRepeating = diffItems(from.Affordances.AvoidRepeating, to.Affordances.AvoidRepeating)
	c.RecommendedEntryPoints = diffItems(from.Affordances.RecommendedEntryPoints, to.Affordances.RecommendedEntryPoints)
	c.Review = diffReview(from.Review, to.Review)
	c.Pins = diffPins(from.Pinned, to.Pinned)
	markForgotten(&c, from, to)
	return c
}

func diffDecisions(old, cur []medallion.Decision) []DecisionChange {
	var out []DecisionChange
	for i := range cur {
		d := &cur[i]
		j := slices.IndexFunc(old, func(o medallion.Decision) bool { return o.ID == d.ID })
		if j < 0 {
			out = append(out, DecisionChange{Kind: Added, ID: d.ID, To: d})
			continue
		}
		o := &old[j]
		var f fields
		f.add("statement", o.Statement, d.Statement)
		f.add("rationale", o.Rationale, d.Rationale)
		f.add("confidence", confidence(o.Confidence), confidence(d.Confidence))
		if len(f) > 0 {
			out = append(out, DecisionChange{Kind: Changed, ID: d.ID, From: o, To: d, Fields: f})
		}
	}
	for i := range old {
		o := &old[i]
		if slices.ContainsFunc(cur, func(d medallion.Decision) bool { return d.ID == o.ID }) {
			continue
		}
		ch := DecisionChange{Kind: Removed, ID: o.ID, From: o}
		for _, d := range cur {
			if mentions(d.Rationale, "supersedes", o.ID) || mentions(d.Statement, "supersedes", o.ID) {
				ch.Kind, ch.By = Superseded, d.ID
				break
			}
		}
		out = append(out, ch)
	}
	return out
}

// diffQuestions compares the open questions of old with those of cur. A
// question that left the list is resolved: open_questions holds only what
// is still open, so removal is how a question closes.
func diffQuestions(old []medallion.OpenQuestion, cur *medallion.Medallion) []QuestionChange {
	var out []QuestionChange
	for i := range cur.OpenQuestions {
		q := &cur.OpenQuestions[i]
		j := slices.IndexFunc(old, func(o medallion.OpenQuestion) bool { return o.ID == q.ID })
		if j < 0 {
			out = append(out, QuestionChange{Kind: Added, ID: q.ID, To: q})
			continue
		}
		o := &old[j]
		var f fields
		f.add("question", o.Question, q.Question)
		f.add("priority", string(o.Priority), string(q.Priority))
		f.add("blocked_on", strings.Join(o.BlockedOn, ", "), strings.Join(q.BlockedOn, ", "))
		if len(f) > 0 {
			out = append(out, QuestionChange{Kind: Changed, ID: q.ID, From: o, To: q, Fields: f})
		}
	}
	for i := range old {
		o := &old[i]
		if slices.ContainsFunc(cur.OpenQuestions, func(q medallion.OpenQuestion) bool { return q.ID == o.ID }) {
			continue
		}
		ch := QuestionChange{Kind: Resolved, ID: o.ID, From: o}
		for _, d := range cur.Decisions {
			if mentions(d.Statement, "resolves", o.ID) || mentions(d.Rationale, "resolves", o.ID) {
				ch.By = d.ID
				break
			}
		}
		if ch.By == "" && mentions(cur.Summary.HighLevel, "resolves", o.ID) {
			ch.By = "summary"
		}
		out = append(out, ch)
	}
	return out
}

func diffSubsystems(old, cur []medallion.Subsystem) []SubsystemChange {
	var out []SubsystemChange
	for i := range cur {
		s := &cur[i]
		j := slices.IndexFunc(old, func(o medallion.Subsystem) bool { return o.Name == s.Name })
		if j < 0 {
			out = append(out, SubsystemChange{Kind: Added, Name: s.Name, To: s})
			continue
		}
		o := &old[j]
		var f fields
		f.add("status", string(o.Status), string(s.Status))
		f.add("notes", o.Notes, s.Notes)
		if len(f) > 0 {
			out = append(out, SubsystemChange{Kind: Changed, Name: s.Name, From: o, To: s, Fields: f})
		}
	}
	for i := range old {
		o := &old[i]
		if !slices.ContainsFunc(cur, func(s medallion.Subsystem) bool { return s.Name == o.Name }) {
			out = append(out, SubsystemChange{Kind: Removed, Name: o.Name, From: o})
		}
	}
	return out
}

func diffItems(old, cur []string) []ItemChange {
	var out []ItemChange
	for _, s := range cur {
		if !slices.Contains(old, s) {
			out = append(out, ItemChange{Kind: Added, Text: s})
		}
	}
	for _, s := range old {
		if !slices.Contains(cur, s) {
			out = append(out, ItemChange{Kind: Removed, Text: s})
		}
	}
	return out
}

type fields []FieldChange

func (f *fields) add(name, a, b string) {
	if a != b {
		*f = append(*f, FieldChange{Field: name, From: a, To: b})
	}
}

func confidence(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// mentions reports whether text contains "<verb> <id>" (the verb in any
// case) with id ending there: "supersedes D-1" must not match D-10.
func mentions(text, verb, id string) bool {
	if id == "" {
		return false
	}
	needle := strings.ToLower(verb + " " + id)
	hay := strings.ToLower(text)
	for i := 0; ; {
		j := strings.Index(hay[i:], needle)
		if j < 0 {
			return false
		}
		end := i + j + len(needle)
		if end == len(hay) || !idChar(hay[end]) {
			return true
		}
		i = end
	}
}

// idChar reports whether c can continue an item id. A trailing '.' or ':'
// ends a sentence more often than it extends an id, so neither counts.
func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}
