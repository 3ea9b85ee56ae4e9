package curate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/transcript"
)

// Repeated patterns (seed 004, Tier 0): the same failed attempt made again
// unchanged is a dead end the next session should not walk into, and the
// same check run again and again is how the project verifies its work — a
// convention.

// repeat is a call's run of identical failures.
type repeat struct {
	sig         string
	n           int
	call        *transcript.Event
	first, last string // event ids
}

// deadEnds records the attempts that failed the same way at least twice
// and never succeeded in the episode (a success clears them: the fix says
// what worked).
func (x *extractor) deadEnds(it *Items, tries map[string]repeat) {
	keys := make([]string, 0, len(tries))
	for k, r := range tries {
		if r.n >= 2 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := tries[k]
		it.AvoidRepeating = append(it.AvoidRepeating, Text{
			Text:       fmt.Sprintf("don't retry %s unchanged: it failed %d times with %s", subject(r.call), r.n, r.sig),
			Confidence: confidenceFix,
			Evidence:   x.evidence(r.first, r.last),
		})
	}
}

// Conventions: a check seen at least minConvention times in a session,
// counted across its checkpoints in the medallion's evidence (an entry for
// item "pattern" per check, its event ids the runs seen), becomes an
// invariant. A checkpoint holds only a few events, so one episode alone
// rarely shows a pattern.
const (
	minConvention = 3
	// confidenceConvention is observed practice, below the user's word.
	confidenceConvention = 0.6
	// maxConventions bounds the conventions of one medallion: they say
	// how the project checks its work, and the user's rules come first.
	maxConventions = 2
	// patternItem is the evidence item observations are counted under.
	patternItem = "pattern"
	// conventionPrefix opens a convention's invariant.
	conventionPrefix = "Convention: the work is checked with "
)

// checkWords mark a command that verifies the work: tests, linters, type
// checkers, formatters and builds.
var checkWords = []string{"test", "lint", "check", "vet", "build", "compile", "credo", "dialyzer", "clippy",
	"tsc", "typecheck", "pytest", "rspec", "jest", "vitest", "eslint", "ruff", "mypy", "fmt", "format", "llvm-cov"}

// Observed is a pattern the episode showed, with the events it was seen
// in.
type Observed struct {
	Pattern  string   `json:"pattern"`
	Evidence Evidence `json:"evidence"`
}

// checks reports the checks the episode ran, with their calls.
func (x *extractor) checks(it *Items) {
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if e.Kind != transcript.KindToolCall || e.Command == "" {
			continue
		}
		key := commandKey(e.Command)
		if !isCheck(key) {
			continue
		}
		p := "`" + key + "`"
		if j := slices.IndexFunc(it.Checks, func(o Observed) bool { return o.Pattern == p }); j >= 0 {
			it.Checks[j].Evidence.EventIDs = append(it.Checks[j].Evidence.EventIDs, e.ID)
			continue
		}
		it.Checks = append(it.Checks, Observed{Pattern: p, Evidence: x.evidence(e.ID)})
	}
}

// isCheck reports whether a command key names a check.
func isCheck(key string) bool {
	f := strings.Fields(key)
	if len(f) == 0 || exploratory[f[0]] || f[0] == "git" {
		return false
	}
	for _, w := range checkWords {
		for _, p := range f {
			if strings.Contains(p, w) {
				return true
			}
		}
	}
	return false
}

// conventions records the episode's checks as observations and turns a
// check seen minConvention times in a session into an invariant.
func (a *applier) conventions(obs []Observed) {
	for _, o := range obs {
		seen := a.record(patternItem, o.Pattern, o.Evidence)
		if len(seen) < minConvention {
			continue
		}
		text := conventionPrefix + o.Pattern
		inv := a.m.Affordances.Invariants
		n := 0
		for _, s := range inv {
			if strings.HasPrefix(s, conventionPrefix) {
				n++
			}
		}
		if slices.Contains(inv, text) || n >= maxConventions {
			continue
		}
		a.invariants([]Text{{Text: text, Confidence: confidenceConvention, Evidence: Evidence{
			SessionID: o.Evidence.SessionID, EventIDs: slices.Clone(seen)}}})
	}
}
