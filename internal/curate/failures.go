package curate

import (
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Failures: errors paired with the later success that fixed them (known
// fixes), errors left failing (open work), and blocking hooks.

type openError struct {
	index int
	event *transcript.Event
	call  *transcript.Event
	key   string
	// sig is what the failure is known by: one finding of a run that
	// reported several, or the whole failure's signature, worked out once
	// (every later failure and success compares with it); "" until known.
	sig string
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
	// The latest success of each subject, in order of the first: its
	// remedy walks the episode from its start, so it is worked out once
	// per subject after the walk, not at every success (which made a long
	// episode quadratic).
	type success struct {
		index int
		call  *transcript.Event
	}
	successes := map[string]success{}
	var subjects []string
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
		if x.trivialAt(i, c) {
			continue
		}
		key := episode.CallKey(c)
		switch {
		case failed(e) || x.textFailed(i):
			if key == "" || c.Command == "" {
				// Only a shell command's failure can be fixed or left
				// open: a browser tool reporting console errors or an
				// edit missing its target is a step of the session, and
				// its next success fixes nothing a later session needs.
				continue
			}
			fs := x.findingsAt(i)
			sig := signatureOf(e, c, fs)
			if r := tries[key]; r.sig == sig {
				r.n++
				r.last = e.ID
				tries[key] = r
			} else {
				tries[key] = repeat{sig: sig, n: 1, call: c, first: e.ID, last: e.ID}
			}
			// The same check failing differently after edits: the earlier
			// error is gone, and what changed in between got past it.
			for _, k := range slices.Clone(order) {
				oe := open[k]
				if !sameCheck(oe.call, c) || oe.signature() == sig || slices.Contains(fs, oe.signature()) || !x.changedBetween(oe.index, i) {
					continue
				}
				delete(open, k)
				order = slices.DeleteFunc(order, func(o string) bool { return o == k })
				x.fixedPast(it, oe, i, c, e)
			}
			if sub := blockedKey(subject(c)); !slices.ContainsFunc(it.Moved, func(m Moved) bool { return m.Subject == sub }) && x.editedBefore(i) {
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
			open[key] = openError{index: i, event: e, call: c, key: key, sig: sig}
			order = append(slices.DeleteFunc(order, func(k string) bool { return k == key }), key)
		case succeeded(e):
			lastSuccess = i
			delete(tries, key)
			sub := blockedKey(subject(c))
			if _, ok := successes[sub]; !ok {
				subjects = append(subjects, sub)
			}
			successes[sub] = success{index: i, call: c}
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
		if !projectCommand(oe.call.Command) {
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
	for _, sub := range subjects {
		s := successes[sub]
		it.Successes = append(it.Successes, Success{Subject: sub, Remedy: x.remedy(-1, s.index, s.call),
			Evidence: x.evidence(x.ep.Events[s.index].Event.ID)})
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
	r, bare := x.remedyOf(oe.index, i, c)
	if bare && oe.call != nil && sameCheck(oe.call, c) {
		// The same check passed with nothing edited or run in between (a
		// flaky run, other flags, a change made out of sight): "`X`
		// succeeds" is no lesson the next session can act on. The
		// failure is closed all the same.
		it.Closed = append(it.Closed, "Unresolved: "+sig)
		return
	}
	it.AvoidRepeating = append(it.AvoidRepeating, Text{
		Text:       "when " + sig + ": " + r,
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

// editedBefore reports whether a file was edited before event i: the
// episode's first edit is found once.
func (x *extractor) editedBefore(i int) bool {
	if x.firstEdit == 0 {
		x.firstEdit = len(x.ep.Events) + 1
		for j := range x.ep.Events {
			if e := &x.ep.Events[j].Event; e.Kind == transcript.KindToolCall && episode.EditsFiles(e.Tool) {
				x.firstEdit = j + 1
				break
			}
		}
	}
	return x.firstEdit-1 < i
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

// textFailure reports a command whose output shows a failure its exit
// status hides (output piped through tail or grep): failing tests, build
// and lint errors, crashes. found returns the findings of its text.
func textFailure(e *transcript.Event, found func() []string) bool {
	if e.Kind != transcript.KindToolResult || failed(e) {
		return false
	}
	return anyFailureLine(e.Text) || len(found()) > 0
}

// anyFailureLine reports whether a line of text is a failureLine. Only
// the lines holding one of failureWords can be, so it finds those words
// in one pass over the text (ASCII letters in any case) rather than
// testing every line: a backfill runs this over every output the agents
// read. Two letters beyond ASCII lower to one of its: the Kelvin sign to
// k, which no lowered test of failureLine holds, and the dotted capital I
// to i, which "failed" does ("2 faİled"); a text with it is tested line by
// line.
func anyFailureLine(text string) bool {
	// IndexByte first: it is many times faster than Contains over the
	// long texts without the letter's lead byte that most outputs are.
	if i := strings.IndexByte(text, 0xc4); i >= 0 && strings.Contains(text[i:], "\u0130") {
		for line := range strings.Lines(text) {
			if failureLine(line) {
				return true
			}
		}
		return false
	}
	for off := 0; off < len(text); {
		j := failureWords.index(text[off:])
		if j < 0 {
			break
		}
		start, end := lineAround(text, off+j)
		if failureLine(text[start:end]) {
			return true
		}
		off = end
	}
	return false
}

// failureWords are what every test of failureLine needs in its line, in
// any case: most output lines have none.
var failureWords = newWordFinder(true, "fail", "error", "fatal", "panic", "traceback", "could not")

// failurePhrases say a build failed wherever they are in a line.
var failurePhrases = newWordFinder(true, "could not compile", "build failed", "could not start application")

// countWords are the words a count of failures needs (failureLine).
var countWords = newWordFinder(true, "fail", "errors")

// failureLine reports a line that says something failed.
func failureLine(line string) bool {
	l := strings.TrimSpace(line)
	// The lowered tests fold the ASCII letters of l as they compare
	// rather than lower a copy of it: most lines come here for holding a
	// failure word (code handling errors) and fail them all. Of the
	// letters beyond ASCII, only the dotted capital I lowers into a word
	// they look for (see anyFailureLine); a line with it is lowered.
	low := l
	if strings.Contains(l, "\u0130") {
		low = strings.ToLower(l)
	}
	switch {
	case strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "--- FAIL") || strings.HasPrefix(l, "FAILED"),
		strings.HasPrefix(l, "** (") && strings.Contains(l, "Error"),
		hasPrefixFold(low, "error:") || hasPrefixFold(low, "error[") || hasPrefixFold(low, "fatal:"),
		strings.HasPrefix(l, "panic: "), strings.HasPrefix(l, "Traceback (most recent call last)"),
		failurePhrases.in(low):
		return true
	}
	// "3 failures", "2 failed", "11 tests, 4 failures": a count that is
	// not zero. Only a line with one of those words is split (a line with
	// "error" alone, common in code, is not).
	if !countWords.in(low) {
		return false
	}
	f := strings.Fields(strings.ToLower(l))
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
