// Package curate is Tier 0 curation: it turns a checkpointed episode into
// medallion content deterministically, without an LLM.
//
// Extract reads an episode and returns Items, each carrying the events it
// came from; Apply merges Items into a medallion (generating a new one or
// updating an existing one, seed 000 §8). Only the rules in Extract create
// items — error→fix pairs, unresolved errors, user corrections and
// preferences, the agent's todos and approved plans, files touched — so
// exploratory chatter never becomes medallion content. The same episode
// always gives the same Items, and the same Items applied to the same
// medallion at the same time always give the same result.
package curate

import (
	"time"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Evidence names the events an item was extracted from.
type Evidence struct {
	SessionID string   `json:"session_id"`
	EventIDs  []string `json:"event_ids"`
}

// Text is a plain item (an avoid_repeating line or an invariant).
type Text struct {
	Text       string   `json:"text"`
	Confidence float64  `json:"confidence"`
	Evidence   Evidence `json:"evidence"`
}

// Decision is a decision item.
type Decision struct {
	Statement  string   `json:"statement"`
	Rationale  string   `json:"rationale"`
	Confidence float64  `json:"confidence"`
	Evidence   Evidence `json:"evidence"`
}

// Question is an open question item.
type Question struct {
	Question  string             `json:"question"`
	BlockedOn []string           `json:"blocked_on"`
	Priority  medallion.Priority `json:"priority"`
	Evidence  Evidence           `json:"evidence"`
}

// Subsystem is a directory the episode worked in.
type Subsystem struct {
	Name     string                    `json:"name"`
	Status   medallion.SubsystemStatus `json:"status"`
	Notes    string                    `json:"notes"`
	Evidence Evidence                  `json:"evidence"`
}

// Items is what Tier 0 extracted from one episode.
type Items struct {
	AvoidRepeating []Text     `json:"avoid_repeating"`
	Invariants     []Text     `json:"invariants"`
	Decisions      []Decision `json:"decisions"`
	OpenQuestions  []Question `json:"open_questions"`
	// LeftOpen is the agent's own list of what is left at the end of the
	// episode (leftPrefix); it replaces the list an earlier one left.
	LeftOpen []Question `json:"left_open,omitempty"`
	// Failures are errors left unresolved by calls that are no checks
	// (a browser tool, a deploy command): no open work, but a later
	// success of the same call in another checkpoint turns one into a
	// known fix, as for an open question.
	Failures []Question `json:"failures,omitempty"`
	// Closed are questions this episode answered: completed todos and
	// errors that were fixed ("Unresolved: <signature>"). Apply removes
	// matching open questions.
	Closed []string `json:"closed"`
	// Progress are completed todos, for the summary.
	Progress []string `json:"progress"`
	// Current are in-progress todos, for the summary.
	Current     []string    `json:"current"`
	Subsystems  []Subsystem `json:"subsystems"`
	EntryPoints []string    `json:"entry_points"`
	// EntryEvidence[i] is the evidence of EntryPoints[i].
	EntryEvidence []Evidence `json:"entry_evidence"`
	// Compaction is the gist of the episode's latest compaction summary
	// (the agent's own account of the work so far), for summary.high_level.
	Compaction string `json:"compaction,omitempty"`
	// Report is the agent's final report of the episode as the summary
	// keeps it (report): its opening and the sentences stating a choice.
	Report []string `json:"report,omitempty"`
	// Successes are the calls that succeeded in this episode, by subject
	// (as in an open question's blocked_on), with what led to them: Apply
	// turns an earlier checkpoint's unresolved error on the same subject
	// into a known fix.
	Successes []Success `json:"successes,omitempty"`
	// Moved are the checks whose first run in this episode failed after
	// files were edited, with the error it showed: Apply turns an earlier
	// checkpoint's unresolved error of the same check, when it is a
	// different error, into a known fix ("gets past it").
	Moved []Moved `json:"moved,omitempty"`
	// Checks are the checks (tests, linters, builds) the episode ran,
	// by command: Apply counts them across checkpoints into conventions.
	Checks []Observed `json:"checks,omitempty"`
	// UserSpoke says a genuine user prompt came in this episode, which
	// answers the questions the agent asked before (askedPrefix).
	UserSpoke bool `json:"user_spoke,omitempty"`
	// MinTime and MaxTime bound the episode's event times; zero when no
	// event has a time.
	MinTime time.Time `json:"min_time,omitzero"`
	MaxTime time.Time `json:"max_time,omitzero"`
}

// Success is a call that succeeded, and what fixed it if it had failed.
type Success struct {
	// Subject names the call as an open question's blocked_on does; hook
	// subjects name the last successful command of the episode.
	Subject  string   `json:"subject"`
	Remedy   string   `json:"remedy"`
	Evidence Evidence `json:"evidence"`
}

// Moved is a check that failed with a new error after edits.
type Moved struct {
	Subject   string   `json:"subject"`
	Signature string   `json:"signature"`
	Remedy    string   `json:"remedy"`
	Evidence  Evidence `json:"evidence"`
}

// Empty reports whether the items hold no medallion content.
func (it *Items) Empty() bool {
	return len(it.AvoidRepeating) == 0 && len(it.Invariants) == 0 && len(it.Decisions) == 0 &&
		len(it.OpenQuestions) == 0 && len(it.Closed) == 0 && len(it.Progress) == 0 &&
		len(it.Subsystems) == 0 && len(it.EntryPoints) == 0 && it.Compaction == "" && len(it.Successes) == 0 &&
		len(it.Checks) == 0 && len(it.LeftOpen) == 0
}

// Confidences of user statements, by strength.
const (
	confidenceStrong     = 0.9
	confidencePreference = 0.7
	confidencePlan       = 0.8
	confidenceFix        = 0.8
)

// Bounds on extracted text, so one long prompt or error cannot fill a
// medallion.
const (
	maxSignature = 120
	maxStatement = 240
	maxEntry     = 5
)

// Extract runs the Tier 0 extractors over an episode.
func Extract(ep checkpoint.Episode) Items {
	x := extractor{ep: ep, calls: map[string]*transcript.Event{}}
	var it Items
	for i := range ep.Events {
		e := &ep.Events[i].Event
		if e.Kind == transcript.KindToolCall && e.ToolCallID != "" {
			x.calls[e.ToolCallID] = e
		}
		if !e.Time.IsZero() {
			if it.MinTime.IsZero() || e.Time.Before(it.MinTime) {
				it.MinTime = e.Time
			}
			if e.Time.After(it.MaxTime) {
				it.MaxTime = e.Time
			}
		}
	}
	x.errors(&it)
	x.directives(&it)
	x.lastQuestion(&it)
	x.writtenPlan(&it)
	x.todos(&it)
	x.leftOver(&it)
	x.plans(&it)
	x.files(&it)
	x.compaction(&it)
	x.report(&it)
	x.choices(&it)
	x.commits(&it)
	x.checks(&it)
	it.AvoidRepeating = dedupTexts(it.AvoidRepeating)
	it.Invariants = dedupTexts(it.Invariants)
	it.Decisions = dedupBy(it.Decisions, func(d Decision) string { return d.Statement })
	it.OpenQuestions = dedupBy(it.OpenQuestions, func(q Question) string { return q.Question })
	return it
}

type extractor struct {
	ep    checkpoint.Episode
	calls map[string]*transcript.Event // tool call id → call
	// textFailures and trivialResults memoize textFailure and
	// trivialResult per event index: remedy scans the events between
	// every failure and its fix, and both read a result's whole text
	// (textFailure a line scan plus the findings patterns), which would
	// otherwise run O(failures × events) times on a long episode.
	textFailures, trivialResults eventFacts
	// gists memoizes editGist per event index, for the same walks: an
	// edit's gist decodes its JSON input.
	gists map[int]string
	// found memoizes findings per event index (findingsAt).
	found map[int][]string
	// firstEdit is 1 + the index of the episode's first file edit (past
	// the end when none); 0 until editedBefore looks.
	firstEdit int
}

// textFailed is textFailure of event i, computed once.
func (x *extractor) textFailed(i int) bool {
	return x.textFailures.get(x, i, func(e *transcript.Event) bool {
		return textFailure(e, func() []string { return x.findingsAt(i) })
	})
}

// findingsAt is findings of event i's text, worked out once: whether the
// event failed, its signature and the findings left open each need them.
func (x *extractor) findingsAt(i int) []string {
	return memo(&x.found, i, func(i int) []string { return findings(x.ep.Events[i].Event.Text) })
}

// trivialAt reports whether event i, a result, and its call c are a
// trivial retry (see trivialResult and trivialCall); the part that reads
// the result's text is computed once. The call is asked first: a read or
// a search, most results, is told by its tool, and its output (often the
// longest of a session) is then not scanned at all.
func (x *extractor) trivialAt(i int, c *transcript.Event) bool {
	e := &x.ep.Events[i].Event
	return trivialCall(c, e) || x.trivialResults.get(x, i, trivialResult)
}

// editGistAt is editGist of event i's input, worked out once.
func (x *extractor) editGistAt(i int) string {
	return memo(&x.gists, i, func(i int) string { return editGist(x.ep.Events[i].Event.Text) })
}

// eventFacts memoizes a yes-or-no fact of each event of an episode.
type eventFacts []int8 // 0 unknown, 1 yes, -1 no

// get returns fact of event i, computing it the first time.
func (f *eventFacts) get(x *extractor, i int, fact func(*transcript.Event) bool) bool {
	if *f == nil {
		*f = make([]int8, len(x.ep.Events))
	}
	if v := (*f)[i]; v != 0 {
		return v > 0
	}
	ok := fact(&x.ep.Events[i].Event)
	(*f)[i] = -1
	if ok {
		(*f)[i] = 1
	}
	return ok
}

func (x *extractor) evidence(ids ...string) Evidence {
	return Evidence{SessionID: x.ep.SessionID, EventIDs: ids}
}

// failed reports whether a tool result or error event is a failure worth
// fixing: rejected and interrupted calls are the user's choice, not errors.
func failed(e *transcript.Event) bool {
	if e.Subtype == transcript.SubtypeRejected || e.Subtype == transcript.SubtypeInterrupted {
		return false
	}
	if e.Failed() {
		return true
	}
	return e.Kind == transcript.KindToolResult && e.ExitCode != nil && *e.ExitCode != 0
}

func succeeded(e *transcript.Event) bool {
	return e.Kind == transcript.KindToolResult && !failed(e) &&
		(e.OK != nil && *e.OK || e.ExitCode != nil && *e.ExitCode == 0)
}

// call returns the call of a tool result, or the result itself when the
// call is not in the episode (it then usually still names its tool).
func (x *extractor) call(e *transcript.Event) *transcript.Event {
	if c, ok := x.calls[e.ToolCallID]; ok && e.ToolCallID != "" {
		return c
	}
	return e
}
