package curate

import (
	"regexp"
	"strings"
)

// maxFindings bounds the entries one run yields: a lint run reporting
// fifty issues is one problem seen fifty times, not fifty fixes.
const maxFindings = 3

var (
	// ansi matches terminal colour and cursor escapes.
	ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)
	// credoFinding is a credo issue: "[R] ↘ Prefer using an implicit
	// `try` …", its location on the next line.
	credoFinding = regexp.MustCompile(`^\[[A-Z]\] [↘→↗↑↓] (.+)$`)
	// dialyzerWarning is dialyzer's short format header:
	// "lib/x.ex:94:7:pattern_match_cov", the message on the lines under it.
	dialyzerWarning = regexp.MustCompile(`^(\S+\.[a-z]+):\d+(?::\d+)?:([a-z_]+)$`)
	// compilerError is a diagnostic with a code: Rust's "error[E0308]:
	// mismatched types", TypeScript's "src/a.ts(3,5): error TS2345: …".
	compilerError = regexp.MustCompile(`(?:^error\[E\d+\]: .+|error TS\d+: .+)$`)
	// locatedLine is a "path:line[:col]" location line.
	locatedLine = regexp.MustCompile(`^(\S+\.[A-Za-z]+):\d+(?::\d+)?\b`)
)

// findings are the distinct problems a linter, type checker or compiler
// reported in a run's output, each with the file it is in, in order and
// at most maxFindings: a run with two credo issues has two things to fix,
// each fixed by its own edit. Headers, box drawing and ANSI codes are no
// findings.
func findings(text string) []string {
	var lines []string
	for line := range strings.Lines(ansi.ReplaceAllString(text, "")) {
		lines = append(lines, strings.Join(strings.Fields(strings.TrimLeft(strings.TrimSpace(line), "┃│║|")), " "))
	}
	var out []string
	add := func(f string) {
		f = clip(f, maxSignature)
		for _, o := range out {
			if o == f {
				return
			}
		}
		if len(out) < maxFindings {
			out = append(out, f)
		}
	}
	for i, l := range lines {
		switch {
		case credoFinding.MatchString(l):
			f := credoFinding.FindStringSubmatch(l)[1]
			if i+1 < len(lines) {
				if m := locatedLine.FindStringSubmatch(lines[i+1]); m != nil {
					f += " (" + m[1] + ")"
				}
			}
			add(f)
		case dialyzerWarning.MatchString(l):
			m := dialyzerWarning.FindStringSubmatch(l)
			var msg []string
			// The message runs to the separator rule or the next warning,
			// across the blank lines dialyzer puts around quoted types.
			for _, n := range lines[i+1:] {
				if n == "" {
					continue
				}
				if !meaningful(n) || dialyzerWarning.MatchString(n) || len(msg) == 4 {
					break
				}
				msg = append(msg, n)
			}
			add(m[2] + " in " + m[1] + ": " + strings.Join(msg, " "))
		case compilerError.MatchString(l):
			add(compilerError.FindString(l))
		}
	}
	return out
}
