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
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/episode"
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
	// textFailures memoizes textFailure per event index: remedy scans the
	// events between every failure and its fix, and textFailure (a line
	// scan plus the findings patterns) would otherwise run O(failures ×
	// events) times on a long episode.
	textFailures []int8 // 0 unknown, 1 yes, -1 no
}

// textFailed is textFailure of event i, computed once.
func (x *extractor) textFailed(i int) bool {
	if x.textFailures == nil {
		x.textFailures = make([]int8, len(x.ep.Events))
	}
	if v := x.textFailures[i]; v != 0 {
		return v > 0
	}
	ok := textFailure(&x.ep.Events[i].Event)
	x.textFailures[i] = -1
	if ok {
		x.textFailures[i] = 1
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

// callKey names what a call did, as episode.FixTracker does: same tool and
// command, or same tool and file paths.
func callKey(c *transcript.Event) string {
	switch {
	case c.Command != "":
		return c.Tool + "\x00" + strings.Join(strings.Fields(c.Command), " ")
	case len(c.FilePaths) > 0:
		paths := slices.Clone(c.FilePaths)
		slices.Sort(paths)
		return c.Tool + "\x01" + strings.Join(paths, "\x00")
	}
	return c.Tool
}

// shellOnly are commands that only set up the shell for the real one.
var shellOnly = map[string]bool{"cd": true, "export": true, "source": true, "set": true, "sleep": true}

// commandKey names what a shell command checks: its program and first
// word that is neither a flag nor a path ("mix test", "git push", "go
// test"), from its first segment that does more than set up the shell. A
// later success of the same check shows a failure fixed even when the
// arguments changed ("mix test test/a_test.exs" then "mix test"). Staging
// ("git add -A && git commit …") only prepares the command after it.
func commandKey(cmd string) string {
	staged := false
	for _, seg := range strings.FieldsFunc(cmd, func(r rune) bool { return r == '&' || r == ';' || r == '|' || r == '\n' }) {
		f := commandWords(seg)
		if len(f) == 0 || shellOnly[f[0]] {
			continue
		}
		key := filepath.Base(f[0])
		words := 0
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") && !strings.ContainsAny(a, "/.\"'$<>") {
				key += " " + a
				words++
				// A script runner's "run" names no check; the script
				// after it does ("bun run lint", "pnpm run typecheck").
				if words == 2 || !runnerVerbs[a] {
					break
				}
			}
		}
		if key == "git add" {
			staged = true
			continue
		}
		return key
	}
	if staged {
		return "git add"
	}
	return strings.Join(strings.Fields(cmd), " ")
}

// runnerVerbs are the subcommands of script runners (npm, pnpm, yarn, bun,
// uv, poetry) that run the script named next.
var runnerVerbs = map[string]bool{"run": true, "exec": true, "run-script": true, "x": true, "dlx": true}

// commandWords splits a shell command into its words, without the VAR=value
// assignments before the program.
func commandWords(cmd string) []string {
	f := strings.Fields(cmd)
	for len(f) > 0 && strings.Contains(f[0], "=") {
		f = f[1:]
	}
	return f
}

// blockedKey is what Apply matches an open question's blocked_on against
// a later Success by.
func blockedKey(blockedOn string) string {
	if inner, ok := strings.CutPrefix(blockedOn, "`"); ok && strings.HasSuffix(inner, "`") {
		return commandKey(strings.TrimSuffix(inner, "`"))
	}
	return blockedOn
}

type openError struct {
	index int
	event *transcript.Event
	call  *transcript.Event
	key   string
	sig   string // one finding of a run that reported several; "" for the whole failure
}

// signature is what the failure is known by: its own finding, or the
// failure's signature.
func (oe openError) signature() string {
	if oe.sig != "" {
		return oe.sig
	}
	return signature(oe.event, oe.call)
}

// hookSubject is the blocked_on of an error a hook raised: no call can
// show it fixed, only later work succeeding without the hook objecting
// again.
const hookSubject = "a blocking hook"

// hookBlock reports whether e is a hook refusing to let the agent go on:
// a hook error, or the Stop/PreToolUse hook feedback Claude Code hands
// the agent as a user message.
func hookBlock(e *transcript.Event) bool {
	switch {
	case e.Kind == transcript.KindError && e.Subtype == transcript.SubtypeHookError:
		return true
	case e.Kind == transcript.KindUserPrompt && e.Subtype == "hook":
		l := strings.ToLower(e.Text)
		return strings.Contains(l, "hook feedback") || strings.Contains(l, "blocked")
	}
	return false
}

// errors pairs failures with the later success of the same call (known
// fixes) and reports the failures left at the end (open questions). A
// blocking hook is fixed by the work after it when it does not object
// again before a command succeeds. Exploratory calls (reads, listings,
// searches) and tool misuse are trivial retries, never fixes or open
// questions.
func (x *extractor) errors(it *Items) {
	open := map[string]openError{}
	var order []string // keys in order of their latest failure
	var hooks []openError
	lastSuccess := -1
	successes := map[string]int{} // subject → index in it.Successes
	// tries counts the identical failures of each call in a row: the
	// same attempt failing the same way again is a dead end to record.
	tries := map[string]repeat{}
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		switch {
		case hookBlock(e):
			sig := hookSignature(e)
			hooks = slices.DeleteFunc(hooks, func(h openError) bool { return h.key == sig })
			hooks = append(hooks, openError{index: i, event: e, call: e, key: sig})
			continue
		case e.Kind != transcript.KindToolResult:
			continue
		}
		c := x.call(e)
		if trivial(c, e) {
			continue
		}
		key := callKey(c)
		switch {
		case failed(e) || x.textFailed(i):
			if key == "" || c.Command == "" {
				// Only a shell command's failure can be fixed or left
				// open: a browser tool reporting console errors or an
				// edit missing its target is a step of the session, and
				// its next success fixes nothing a later session needs.
				continue
			}
			sig := signature(e, c)
			if r := tries[key]; r.sig == sig {
				r.n++
				r.last = e.ID
				tries[key] = r
			} else {
				tries[key] = repeat{sig: sig, n: 1, call: c, first: e.ID, last: e.ID}
			}
			// The same check failing differently after edits: the earlier
			// error is gone, and what changed in between got past it.
			fs := findings(e.Text)
			for _, k := range slices.Clone(order) {
				oe := open[k]
				if !sameCheck(oe.call, c) || oe.signature() == sig || slices.Contains(fs, oe.signature()) || !x.changedBetween(oe.index, i) {
					continue
				}
				delete(open, k)
				order = slices.DeleteFunc(order, func(o string) bool { return o == k })
				x.fixedPast(it, oe, i, c, e)
			}
			if sub := blockedKey(subject(c)); !slices.ContainsFunc(it.Moved, func(m Moved) bool { return m.Subject == sub }) && x.changedBetween(-1, i) {
				it.Moved = append(it.Moved, Moved{
					Subject: sub, Signature: sig, Evidence: x.evidence(e.ID),
					Remedy: strings.TrimSuffix(x.remedy(-1, i, c), " succeeds") + " gets past it",
				})
			}
			// A run reporting several findings (a linter, a type checker)
			// leaves each open on its own: each may be fixed separately.
			if len(fs) > 1 {
				for _, f := range fs {
					k := key + "\x00" + f
					open[k] = openError{index: i, event: e, call: c, key: k, sig: f}
					order = append(slices.DeleteFunc(order, func(o string) bool { return o == k }), k)
				}
				continue
			}
			open[key] = openError{index: i, event: e, call: c, key: key}
			order = append(slices.DeleteFunc(order, func(k string) bool { return k == key }), key)
		case succeeded(e):
			lastSuccess = i
			delete(tries, key)
			remedy := x.remedy(-1, i, c)
			sub := blockedKey(subject(c))
			s := Success{Subject: sub, Remedy: remedy, Evidence: x.evidence(e.ID)}
			if k, ok := successes[sub]; ok {
				it.Successes[k] = s
			} else {
				successes[sub] = len(it.Successes)
				it.Successes = append(it.Successes, s)
			}
			// A hook that did not object again is fixed by what led
			// here, once a real command (not a read) succeeds.
			if c.Command != "" {
				for _, h := range hooks {
					x.fixed(it, h, i, c, e)
				}
				hooks = nil
			}
			// The same check passing fixes every failure of it, whatever
			// the arguments were.
			for _, k := range slices.Clone(order) {
				oe := open[k]
				if k != key && (c.Command == "" || oe.call.Command == "" || commandKey(oe.call.Command) != commandKey(c.Command) || oe.call.Tool != c.Tool) {
					continue
				}
				delete(open, k)
				order = slices.DeleteFunc(order, func(o string) bool { return o == k })
				x.fixed(it, oe, i, c, e)
			}
		}
	}
	x.deadEnds(it, tries)
	for _, key := range order {
		oe := open[key]
		q := Question{
			Question:  "Unresolved: " + oe.signature(),
			BlockedOn: []string{subject(oe.call)},
			Priority:  medallion.PriorityHigh,
			Evidence:  x.evidence(oe.event.ID),
		}
		if oe.call.Command == "" || !projectCommand(oe.call.Command) {
			// Only the project's checks or code left failing are open
			// work the next session must pick up; a browser tool's
			// console or a missing docker is a moment of the session,
			// not the project's state. It is still watched for: a later success of the
			// same call makes it a known fix.
			it.Failures = append(it.Failures, q)
			continue
		}
		it.OpenQuestions = append(it.OpenQuestions, q)
	}
	for _, h := range hooks {
		it.OpenQuestions = append(it.OpenQuestions, Question{
			Question:  "Unresolved: " + h.key,
			BlockedOn: []string{hookSubject},
			Priority:  medallion.PriorityHigh,
			Evidence:  x.evidence(h.event.ID),
		})
	}
	if lastSuccess >= 0 && len(hooks) == 0 {
		// Work after the episode's last hook objection: what a hook
		// left open by an earlier checkpoint was fixed by.
		e := &x.ep.Events[lastSuccess].Event
		if c := x.call(e); c.Command != "" {
			it.Successes = append(it.Successes, Success{Subject: hookSubject, Remedy: x.remedy(-1, lastSuccess, c), Evidence: x.evidence(e.ID)})
		}
	}
}

// fixed records a known fix: the failure oe, made good by the success at
// index i of call c.
func (x *extractor) fixed(it *Items, oe openError, i int, c, success *transcript.Event) {
	sig := oe.key
	if oe.call != oe.event || !hookBlock(oe.event) {
		sig = oe.signature()
	}
	it.AvoidRepeating = append(it.AvoidRepeating, Text{
		Text:       "when " + sig + ": " + x.remedy(oe.index, i, c),
		Confidence: confidenceFix,
		Evidence:   x.evidence(oe.event.ID, success.ID),
	})
	it.Closed = append(it.Closed, "Unresolved: "+sig)
}

// sameCheck reports two shell calls that run the same check (program and
// subcommand) with the same tool.
func sameCheck(a, b *transcript.Event) bool {
	return a.Command != "" && b.Command != "" && a.Tool == b.Tool && commandKey(a.Command) == commandKey(b.Command)
}

// changedBetween reports whether a file was edited between events from and
// to: without a change, a different failure is the same problem seen
// another way, not progress.
func (x *extractor) changedBetween(from, to int) bool {
	for i := from + 1; i < to; i++ {
		if e := &x.ep.Events[i].Event; e.Kind == transcript.KindToolCall && episode.EditsFiles(e.Tool) {
			return true
		}
	}
	return false
}

// fixedPast records a known fix of failure oe shown by a later run of the
// same check at index i that failed with another error: the edits in
// between got past oe.
func (x *extractor) fixedPast(it *Items, oe openError, i int, c, next *transcript.Event) {
	sig := oe.signature()
	remedy := strings.TrimSuffix(x.remedy(oe.index, i, c), " succeeds") + " gets past it"
	it.AvoidRepeating = append(it.AvoidRepeating, Text{
		Text:       "when " + sig + ": " + remedy,
		Confidence: confidenceFix,
		Evidence:   x.evidence(oe.event.ID, next.ID),
	})
	it.Closed = append(it.Closed, "Unresolved: "+sig)
}

// hookSignature is the first line of a hook's message that says what it
// objects to, past its headings and script names.
func hookSignature(e *transcript.Event) string {
	for line := range strings.Lines(e.Text) {
		l := strings.TrimSpace(stripTags(line))
		low := strings.ToLower(l)
		if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "[") || strings.HasSuffix(low, "hook feedback:") || !meaningful(l) {
			continue
		}
		return clip(strings.Join(strings.Fields(l), " "), maxSignature)
	}
	return clip(strings.Join(strings.Fields(e.Text), " "), maxSignature)
}

// exploratory commands only look around; their failures are typos and
// globs that miss, not problems of the project.
var exploratory = map[string]bool{
	"ls": true, "cat": true, "find": true, "grep": true, "rg": true, "head": true, "tail": true, "echo": true,
	"which": true, "pwd": true, "wc": true, "tree": true, "file": true, "stat": true, "sed": true, "awk": true,
	"cd": true, "bd": true, "type": true, "command": true, "less": true, "open": true, "curl": true,
}

// noOps are failures where nothing was wrong with the project: git's
// refusals (nothing to commit, a first push that needs its upstream
// named, an add of ignored or mistyped paths) and a parallel call
// cancelled because a sibling failed (Claude Code). Nothing was fixed.
var noOps = []string{"nothing to commit", "has no upstream branch", "no changes added to commit", "fatal: pathspec",
	"Sibling tool call errored",
	"paths are ignored by one of your .gitignore files"}

// trivial reports calls whose failures are trivial retries: file reads,
// searches and listings, edits that missed their target text, and git's
// no-op refusals.
func trivial(c, result *transcript.Event) bool {
	if shellMisuse(result.Text) {
		return true
	}
	for _, o := range noOps {
		if strings.Contains(result.Text, o) {
			return true
		}
	}
	if c.Command != "" {
		f := commandWords(c.Command)
		return len(f) == 0 || exploratory[filepath.Base(f[0])]
	}
	t := strings.ToLower(c.Tool)
	if t == "write_stdin" {
		return true // polling a running command, not writing a file
	}
	if episode.EditsFiles(c.Tool) {
		l := strings.ToLower(result.Text)
		return strings.Contains(l, "not found") || strings.Contains(l, "has not been read") || strings.Contains(l, "modified since")
	}
	return t == "read" || t == "glob" || t == "grep" || t == "ls" || strings.Contains(t, "search") || strings.Contains(t, "fetch") ||
		strings.Contains(t, "read_file") || strings.Contains(t, "list") || strings.Contains(t, "view")
}

// shellMisuse reports an error of the shell itself (a glob that matched
// nothing, quoting, a sandbox refusing a command): the command never ran.
func shellMisuse(text string) bool {
	l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "Exit code 1"))
	for _, p := range []string{"zsh:", "(eval):", "bash: line", "/bin/bash: line", "sh: "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// textFailure reports a command whose output shows a failure its exit
// status hides (output piped through tail or grep): failing tests, build
// and lint errors, crashes.
func textFailure(e *transcript.Event) bool {
	if e.Kind != transcript.KindToolResult || failed(e) {
		return false
	}
	for line := range strings.Lines(e.Text) {
		if failureLine(line) {
			return true
		}
	}
	return len(findings(e.Text)) > 0
}

// failureLine reports a line that says something failed.
func failureLine(line string) bool {
	l := strings.TrimSpace(line)
	low := strings.ToLower(l)
	switch {
	case strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "--- FAIL") || strings.HasPrefix(l, "FAILED"),
		strings.HasPrefix(l, "** (") && strings.Contains(l, "Error"),
		strings.HasPrefix(low, "error:") || strings.HasPrefix(low, "error[") || strings.HasPrefix(low, "fatal:"),
		strings.HasPrefix(l, "panic: "), strings.HasPrefix(l, "Traceback (most recent call last)"),
		strings.Contains(low, "could not compile"), strings.Contains(low, "build failed"),
		strings.Contains(low, "could not start application"):
		return true
	}
	// "3 failures", "2 failed", "11 tests, 4 failures": a count that is
	// not zero.
	f := strings.Fields(low)
	for i := 1; i < len(f); i++ {
		w := strings.Trim(f[i], ",.;:()")
		if w == "failure" || w == "failures" || w == "failed" || w == "errors" {
			n := strings.Trim(f[i-1], ",.;:()")
			if n != "" && strings.Trim(n, "0123456789") == "" && strings.Trim(n, "0") != "" {
				return true
			}
		}
	}
	return false
}

// remedy says what fixed a failure: the edits made between the failure and
// the success (files, and the first line each change added), the other
// commands that succeeded on the way (mix format, deps.get …), then the
// succeeding call. The changed line and the commands are what the next
// session needs to repeat the fix, not just where it happened.
func (x *extractor) remedy(from, to int, success *transcript.Event) string {
	var edited, gists, ran []string
	seen := map[string]bool{}
	if success.Command != "" {
		seen[commandKey(success.Command)] = true
	}
	for i := from + 1; i < to; i++ {
		e := &x.ep.Events[i].Event
		switch {
		case e.Kind == transcript.KindToolCall && episode.EditsFiles(e.Tool) && (e.ToolCallID == "" || e.ToolCallID != success.ToolCallID):
			for _, p := range e.FilePaths {
				p = x.rel(e, p)
				if !slices.Contains(edited, p) {
					edited = append(edited, p)
				}
			}
			if g := editGist(e.Text); g != "" && len(gists) < maxGists && !slices.Contains(gists, g) {
				gists = append(gists, g)
			}
		case e.Kind == transcript.KindToolResult && succeeded(e) && !x.textFailed(i):
			c := x.call(e)
			if c.Command == "" || trivial(c, e) || len(ran) == maxRan {
				continue
			}
			if k := commandKey(c.Command); !seen[k] && !readOnly(k) {
				seen[k] = true
				ran = append(ran, "`"+shortCommand(c.Command, maxRemedyCommand)+"`")
			}
		}
	}
	var b strings.Builder
	if len(edited) > 0 {
		if len(edited) > 4 {
			edited = append(edited[:4], "…")
		}
		b.WriteString("edit " + strings.Join(edited, ", "))
		if len(gists) > 0 {
			b.WriteString(" (" + strings.Join(gists, "; ") + ")")
		}
		b.WriteString(", ")
	}
	if len(ran) > 0 {
		b.WriteString("run " + strings.Join(ran, ", ") + ", ")
	}
	if b.Len() > 0 {
		b.WriteString("then ")
	}
	if success.Command != "" {
		b.WriteString("`" + shortCommand(success.Command, maxRemedyCommand) + "`")
	} else {
		b.WriteString(subject(success))
	}
	b.WriteString(" succeeds")
	return b.String()
}

// Bounds on what a fix quotes of the work between failure and success.
const (
	maxGists   = 2  // changed lines quoted
	maxGist    = 70 // characters of one changed line
	maxRan     = 2  // intermediate commands quoted
	minGistLen = 6  // shorter changed lines ("}", "end") say nothing
)

// readOnly reports checks that only look at the state of the repository:
// running them changes nothing, so they are no part of a fix.
func readOnly(key string) bool {
	switch key {
	case "git status", "git diff", "git log", "git show", "git branch", "git add":
		return true
	}
	return false
}

// editGist is the first line an edit adds: new_string lines not in
// old_string (Claude Code Edit/MultiEdit input), or "+" lines of a patch
// (Codex apply_patch). Whole-file writes have no gist.
func editGist(input string) string {
	var added []string
	if strings.HasPrefix(strings.TrimSpace(input), "{") {
		var in struct {
			Old   string `json:"old_string"`
			New   string `json:"new_string"`
			Edits []struct {
				Old string `json:"old_string"`
				New string `json:"new_string"`
			} `json:"edits"`
			Input string `json:"input"`
			Patch string `json:"patch"`
		}
		if json.Unmarshal([]byte(input), &in) != nil {
			return ""
		}
		if in.New == "" && len(in.Edits) > 0 {
			in.Old, in.New = in.Edits[0].Old, in.Edits[0].New
		}
		if in.New == "" {
			return patchGist(in.Input + in.Patch)
		}
		old := map[string]bool{}
		for l := range strings.Lines(in.Old) {
			old[strings.TrimSpace(l)] = true
		}
		for l := range strings.Lines(in.New) {
			if t := strings.TrimSpace(l); !old[t] {
				added = append(added, t)
			}
		}
	} else {
		return patchGist(input)
	}
	return firstGist(added)
}

// patchGist is the first added line of a unified or apply_patch diff.
func patchGist(patch string) string {
	var added []string
	for l := range strings.Lines(patch) {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			added = append(added, strings.TrimSpace(l[1:]))
		}
	}
	return firstGist(added)
}

// firstGist is the first line worth quoting: long enough to say something,
// not a comment.
func firstGist(lines []string) string {
	for _, l := range lines {
		if utf8.RuneCountInString(l) < minGistLen || strings.HasPrefix(l, "//") || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "--") {
			continue
		}
		return clip(strings.Join(strings.Fields(l), " "), maxGist)
	}
	return ""
}

// maxRemedyCommand bounds the command quoted in a fix.
const maxRemedyCommand = 80

// shortCommand is a command as a fix or an open question quotes it, in at
// most n bytes: without its message (commit messages, heredocs,
// substitutions) and output plumbing, which say nothing about what made
// it pass or fail.
func shortCommand(cmd string, n int) string {
	c := strings.Join(strings.Fields(cmd), " ")
	for _, cut := range []string{" -m ", " --message", " <<", " $(", " 2>&1", " | tail", " | head", " | grep"} {
		if i := strings.Index(c, cut); i > 0 {
			c = c[:i]
		}
	}
	return clipMiddle(c, n)
}

// clipMiddle bounds s to n bytes by eliding its middle: the end of a
// command chain ("git add <many files> && git commit") is the step that
// counts, and it names the check an open question is blocked on.
func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := (n-len("…"))*3/5, (n-len("…"))*2/5
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:head] + "…" + s[from:]
}

// subject names a call: its command, or its tool and file paths.
func subject(c *transcript.Event) string {
	switch {
	case c.Command != "":
		return "`" + shortCommand(c.Command, maxSignature) + "`"
	case len(c.FilePaths) > 0:
		return tool(c) + " " + clip(strings.Join(c.FilePaths, ", "), maxSignature)
	}
	return tool(c)
}

func tool(c *transcript.Event) string {
	switch {
	case c.Tool != "":
		return c.Tool
	case c.Subtype != "":
		return c.Subtype
	}
	return string(c.Kind)
}

// signature is the first meaningful line of an error's text, or what
// failed when the text says nothing.
func signature(e, call *transcript.Event) string {
	// Hook and tool messages quoted as JSON keep their newlines escaped.
	text := strings.ReplaceAll(e.Text, `\n`, "\n")
	if fs := findings(text); len(fs) > 0 {
		return fs[0]
	}
	var lines []string
	for line := range strings.Lines(text) {
		if l := strings.Join(strings.Fields(stripTags(line)), " "); informative(l) {
			lines = append(lines, l)
		}
	}
	// A line that says what failed (a test runner's FAIL, an exception by
	// its class) names the failure better than one that only mentions an
	// error (a wrapper's "Test failed. See above", a browser's log line).
	i := slices.IndexFunc(lines, func(l string) bool { return failureLine(l) || exceptionLine.MatchString(l) })
	if i < 0 {
		i = slices.IndexFunc(lines, errorish)
	}
	if i >= 0 {
		l := lines[i]
		// The exception a wrapper reports last is the cause ("Could not
		// start application x" … "** (BadMapError) expected a map"; a
		// Python traceback's last line): name both, or just the cause
		// when the first line is a bare traceback header.
		c := cause(lines[i+1:])
		if c != "" && strings.HasPrefix(l, "Traceback") {
			return clip(c, maxSignature)
		}
		// A header ("Pre-commit validation failed:") says less than the
		// line under it: take both.
		if strings.HasSuffix(l, ":") && i+1 < len(lines) {
			l += " " + lines[i+1]
		}
		if c != "" && !strings.Contains(l, c) {
			return clip(l, maxSignature*3/4) + " … " + clip(c, maxSignature*3/4)
		}
		return clip(l, maxSignature)
	}
	for line := range strings.Lines(text) {
		line = strings.Join(strings.Fields(stripTags(line)), " ")
		if !informative(line) {
			continue
		}
		return clip(line, maxSignature)
	}
	return subject(call) + " fails"
}

// informative reports a line that can name a failure: meaningful, with two
// words at least (not a bare "undefined" or a "### Error" heading), and
// not a line of what passed ("✔ provider keeps errors in-tree" is a test
// that passed, whatever words it holds) or a comment of echoed code.
func informative(line string) bool {
	if !meaningful(line) {
		return false
	}
	l := strings.TrimLeft(line, "#-*>• ")
	for _, p := range []string{"✔", "✓", "√", "ok ", "PASS", "pass ", "// ", "/*"} {
		if strings.HasPrefix(l, p) {
			return false
		}
	}
	n := 0
	for _, w := range strings.Fields(l) {
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			n++
		}
	}
	return n >= 2
}

// exceptionLine is a line naming an exception by its class: "** (BadMapError)
// expected a map", "ValueError: bad literal", "java.lang.IllegalStateException: x".
var exceptionLine = regexp.MustCompile(`^(?:\*\* \()?[A-Za-z_][\w.]*(?:Error|Exception)\b`)

// cause returns the last line of lines that names an exception, with the
// line under it when it ends in a colon (the value it complains about).
func cause(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if !exceptionLine.MatchString(lines[i]) {
			continue
		}
		c := lines[i]
		if strings.HasSuffix(c, ":") && i+1 < len(lines) {
			c += " " + lines[i+1]
		}
		return c
	}
	return ""
}

// errorish reports a line that names an error.
func errorish(line string) bool {
	l := strings.ToLower(line)
	for _, w := range []string{"error", "fail", "cannot", "can't", "not found", "undefined", "exception", "invalid", "denied", "refused"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// meaningful rejects the lines that carry no error: blank lines, bare
// exit codes and lone punctuation.
func meaningful(line string) bool {
	if strings.IndexFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return false
	}
	l := strings.ToLower(line)
	for _, p := range []string{"exit code", "exit status", "process exited with code", "command failed with exit code"} {
		if strings.HasPrefix(l, p) && len(strings.Fields(l)) <= len(strings.Fields(p))+1 {
			return false
		}
	}
	return true
}

// stripTags removes XML-ish wrappers agents put around errors
// (<tool_use_error>…</tool_use_error>).
func stripTags(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '>')
		tag := ""
		if j > 0 {
			tag = s[i+1 : i+j]
		}
		// Only wrapper-like names (tool_use_error, system-reminder): a
		// Go error's "<nil>" is part of the message.
		name := strings.TrimPrefix(tag, "/")
		if j < 0 || !isTagName(name) || !strings.ContainsAny(name, "_-") {
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		b.WriteString(s[:i])
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

func isTagName(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// clip trims s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

type cue int

const (
	none cue = iota
	preference
	strong
)

// strength classifies one sentence of a user prompt. Strong: a correction
// (episode.IsCorrection) or a rule that starts with "always", "never",
// "must" or states "you must"/"must not". Preference: "prefer"/"rather".
// Anything else is chatter.
func strength(s string) cue {
	if episode.IsCorrection(s) {
		return strong
	}
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '\u2019')
	})
	for len(words) > 0 && (words[0] == "please" || words[0] == "and" || words[0] == "also" || words[0] == "but") {
		words = words[1:]
	}
	if len(words) < 2 {
		return none
	}
	switch words[0] {
	case "always", "never", "must":
		return strong
	}
	for i, w := range words {
		switch w {
		case "must":
			if i > 0 && (words[i-1] == "you" || words[i-1] == "we" || words[i-1] == "it") {
				return strong
			}
		case "prefer", "preferably", "rather":
			return preference
		}
	}
	return none
}

// sentences splits a prompt into trimmed sentences; fenced code is skipped.
func sentences(text string) []string {
	var out []string
	inFence := false
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inFence = !inFence
			continue
		}
		if inFence || t == "" {
			continue
		}
		out = append(out, lineSentences(strings.TrimLeft(t, "-*> \t"))...)
	}
	return out
}

// lineSentences splits one line at its sentence ends.
func lineSentences(t string) []string {
	var out []string
	start := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '.', '!', '?':
			if i+1 == len(t) || t[i+1] == ' ' {
				if s := strings.TrimSpace(t[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
	}
	if s := strings.TrimSpace(t[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// todos reads the latest todo list: open items become questions, completed
// ones progress.
func (x *extractor) todos(it *Items) {
	var latest *transcript.Event
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if e.Kind == transcript.KindPlanUpdate && e.Subtype == transcript.SubtypeTodos && len(e.Todos) > 0 {
			latest = e
		}
	}
	if latest == nil {
		return
	}
	pending := 0
	for _, td := range latest.Todos {
		text := clip(strings.Join(strings.Fields(td.Content), " "), maxStatement)
		if text == "" {
			continue
		}
		switch td.Status {
		case "completed":
			it.Progress = append(it.Progress, text)
			it.Closed = append(it.Closed, text)
		case "in_progress":
			it.Current = append(it.Current, text)
			it.OpenQuestions = append(it.OpenQuestions, Question{
				Question: text, BlockedOn: []string{}, Priority: medallion.PriorityHigh, Evidence: x.evidence(latest.ID),
			})
		default:
			p := medallion.PriorityLow
			if pending < 2 {
				p = medallion.PriorityMedium
			}
			pending++
			it.OpenQuestions = append(it.OpenQuestions, Question{
				Question: text, BlockedOn: []string{}, Priority: p, Evidence: x.evidence(latest.ID),
			})
		}
	}
}

// plans records plans the user approved (ExitPlanMode answered OK).
func (x *extractor) plans(it *Items) {
	approved := map[string]string{} // tool call id → result id
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if e.Kind == transcript.KindToolResult && e.ToolCallID != "" && e.OK != nil && *e.OK {
			approved[e.ToolCallID] = e.ID
		}
	}
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if e.Kind != transcript.KindPlanUpdate || e.Subtype != transcript.SubtypePlan {
			continue
		}
		res, ok := approved[e.ToolCallID]
		if !ok || e.ToolCallID == "" {
			continue
		}
		first := ""
		for line := range strings.Lines(e.Text) {
			if l := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#*-> ")); l != "" {
				first = l
				break
			}
		}
		if first == "" {
			continue
		}
		it.Decisions = append(it.Decisions, Decision{
			Statement:  clip("Approved plan: "+first, maxStatement),
			Rationale:  rationaleApprovedPlan,
			Confidence: confidencePlan,
			Evidence:   x.evidence(e.ID, res),
		})
	}
}

// rel shows a path relative to the event's working directory when it lies
// under it.
func (x *extractor) rel(e *transcript.Event, p string) string {
	cwd := e.CWD
	if cwd == "" {
		cwd = x.cwd()
	}
	if cwd != "" && filepath.IsAbs(p) {
		if r, err := filepath.Rel(cwd, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			return r
		}
	}
	return p
}

// cwd is the episode's first known working directory.
func (x *extractor) cwd() string {
	for i := range x.ep.Events {
		if c := x.ep.Events[i].Event.CWD; c != "" {
			return c
		}
	}
	return ""
}

// files turns the files tools touched into subsystems (their directories)
// and entry points (the most used files).
func (x *extractor) files(it *Items) {
	type dir struct {
		edited, read []string
		ids          []string
	}
	dirs := map[string]*dir{}
	var dirOrder []string
	uses := map[string]int{}
	fileIDs := map[string][]string{}
	var fileOrder []string
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if e.Kind != transcript.KindToolCall {
			continue
		}
		edits := episode.EditsFiles(e.Tool)
		for _, p := range e.FilePaths {
			r := x.rel(e, p)
			if filepath.IsAbs(r) && x.cwd() != "" || artefact(r) {
				// Outside the working directory (a plan in the user's
				// home, a sibling checkout), or what a run left behind:
				// no part of this scope's code.
				continue
			}
			if uses[r] == 0 {
				fileOrder = append(fileOrder, r)
			}
			uses[r]++
			if ids := fileIDs[r]; len(ids) < maxEventIDs && (len(ids) == 0 || ids[len(ids)-1] != e.ID) {
				fileIDs[r] = append(ids, e.ID)
			}
			name := filepath.Dir(r)
			if name == "." {
				// Files at the root of the working directory belong to no
				// subsystem.
				continue
			}
			d := dirs[name]
			if d == nil {
				d = &dir{}
				dirs[name] = d
				dirOrder = append(dirOrder, name)
			}
			base := filepath.Base(r)
			if edits {
				if !slices.Contains(d.edited, base) {
					d.edited = append(d.edited, base)
				}
			} else if !slices.Contains(d.read, base) {
				d.read = append(d.read, base)
			}
			if len(d.ids) == 0 || d.ids[len(d.ids)-1] != e.ID {
				d.ids = append(d.ids, e.ID)
			}
		}
	}
	for _, name := range dirOrder {
		d := dirs[name]
		if len(d.edited) == 0 {
			// A folder only read is where the agent looked, not a part
			// of the project the session worked on; the entry points
			// keep the files it read most.
			continue
		}
		st := medallion.SubsystemInProgress
		notes := []string{"edited " + strings.Join(d.edited, ", ")}
		read := slices.DeleteFunc(slices.Clone(d.read), func(b string) bool { return slices.Contains(d.edited, b) })
		if len(read) > 0 {
			notes = append(notes, "read "+strings.Join(read, ", "))
		}
		it.Subsystems = append(it.Subsystems, Subsystem{
			Name: name, Status: st, Notes: clip(strings.Join(notes, "; "), maxStatement), Evidence: x.evidence(d.ids...),
		})
	}
	ranked := slices.Clone(fileOrder)
	slices.SortStableFunc(ranked, func(a, b string) int { return uses[b] - uses[a] })
	if len(ranked) > maxEntry {
		ranked = ranked[:maxEntry]
	}
	it.EntryPoints = ranked
	for _, p := range ranked {
		it.EntryEvidence = append(it.EntryEvidence, x.evidence(fileIDs[p]...))
	}
}

// artefactDirs hold what builds, tests and package managers write, not the
// project's own files.
var artefactDirs = map[string]bool{"node_modules": true, "test-results": true, "playwright-report": true,
	"coverage": true, "dist": true, "target": true, ".git": true, "__pycache__": true, ".next": true,
	".pytest_cache": true, "_build": true, "deps": true, "vendor": true}

// artefact reports a path a run left behind: under an artefact folder, or
// an image or a log.
func artefact(p string) bool {
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if artefactDirs[seg] {
			return true
		}
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".log", ".trace", ".zip":
		return true
	}
	return false
}

// maxCompaction bounds the compaction gist in the summary.
const maxCompaction = 480

// compaction keeps the gist of the latest compaction summary: the agent's
// account of the work so far, which the summary reports as progress.
// Claude Code's summaries open with a fixed preamble and an "Analysis:"
// section before "Summary:"; only what follows "Summary:" is kept.
func (x *extractor) compaction(it *Items) {
	for i := len(x.ep.Events) - 1; i >= 0; i-- {
		e := &x.ep.Events[i].Event
		if e.Kind != transcript.KindCompactionSummary {
			continue
		}
		text := e.Text
		if j := strings.Index(text, "Summary:"); j >= 0 {
			text = text[j+len("Summary:"):]
		}
		var kept []string
		for _, s := range sentences(text) {
			l := strings.ToLower(s)
			if strings.HasPrefix(l, "this session is being continued") || strings.HasPrefix(l, "the conversation is summarized") ||
				strings.HasPrefix(l, "context compacted") {
				continue
			}
			kept = append(kept, s)
		}
		if g := strings.Join(strings.Fields(strings.Join(kept, " ")), " "); g != "" {
			it.Compaction = clip(g, maxCompaction)
		}
		return
	}
}
