package curate

import (
	"fmt"
	"path/filepath"
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
// item "pattern" per check, its event ids the runs seen), is named in the
// summary ("Checked with `go test`"). A checkpoint holds only a few events, so one episode alone
// rarely shows a pattern.
const (
	minConvention = 3
	// maxConventions bounds the conventions of one medallion: they say
	// how the project checks its work, and the user's rules come first.
	maxConventions = 2
	// patternItem is the evidence item observations are counted under.
	patternItem = "pattern"
	// conventionPrefix opened a convention's invariant in medallions
	// written before conventions moved to the summary.
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

// projectCommand reports a shell command that runs the project's own
// checks or code: a check by its key ("go test", "bun run lint") or by its
// script ("bash scripts/lint.sh"), or any command of a language's
// toolchain ("go run ./cmd/import", "python -m app").
// What is left are commands about the machine and its services (docker,
// gh, curl, a database client), whose failures say nothing of the work.
func projectCommand(cmd string) bool {
	key := commandKey(cmd)
	f := strings.Fields(key)
	if len(f) == 0 {
		return false
	}
	if isCheck(key) || toolchains[f[0]] {
		return true
	}
	f = commandWords(cmd)
	for _, w := range f[1:min(len(f), 3)] {
		if strings.ContainsAny(w, "/.") && isCheck(filepath.Base(w)) {
			return true
		}
	}
	return false
}

// toolchains are the programs that build and run a project's code.
var toolchains = map[string]bool{"go": true, "cargo": true, "mix": true, "elixir": true, "python": true,
	"python3": true, "node": true, "deno": true, "bun": true, "npm": true, "pnpm": true, "yarn": true, "npx": true,
	"uv": true, "poetry": true, "ruby": true, "bundle": true, "rake": true, "make": true, "dotnet": true,
	"java": true, "mvn": true, "gradle": true, "php": true, "composer": true, "swift": true, "zig": true}

// conventions records the episode's checks as observations and returns
// the checks seen minConvention times in a session, for the summary's
// "Checked with" line. How the project checks its work is context for the
// next session, not a rule of the user's: a medallion written before kept
// it as an invariant, which is taken out here.
func (a *applier) conventions(obs []Observed) []string {
	a.m.Affordances.Invariants = slices.DeleteFunc(a.m.Affordances.Invariants, func(s string) bool {
		return strings.HasPrefix(s, conventionPrefix)
	})
	for _, o := range obs {
		a.record(patternItem, o.Pattern, o.Evidence)
	}
	var out []string
	for _, e := range a.m.Evidence {
		if e.Item == patternItem && len(e.EventIDs) >= minConvention && !slices.Contains(out, e.Text) && len(out) < maxConventions {
			out = append(out, e.Text)
		}
	}
	return out
}
