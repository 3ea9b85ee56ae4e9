package curate

import (
	"regexp"
	"strings"
	"unicode"
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
	if !mayHaveFindings(text) {
		return nil
	}
	if strings.IndexByte(text, '\x1b') >= 0 {
		text = ansi.ReplaceAllString(text, "")
	}
	// Each line trimmed of spaces and box drawing; its inner spaces are
	// collapsed (the normalised line) only where a pattern may match, so
	// a long output is not copied line by line.
	var lines []string
	for line := range strings.Lines(text) {
		lines = append(lines, trimLine(line))
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
	for i, t := range lines {
		// What each pattern needs of the line, tested before the copy.
		if !strings.HasPrefix(t, "[") && !oneWord(t) && !strings.Contains(t, "error") {
			continue
		}
		l := collapseSpaces(t)
		switch {
		case strings.HasPrefix(l, "[") && credoFinding.MatchString(l):
			f := credoFinding.FindStringSubmatch(l)[1]
			if i+1 < len(lines) {
				if m := locatedLine.FindStringSubmatch(collapseSpaces(lines[i+1])); m != nil {
					f += " (" + m[1] + ")"
				}
			}
			add(f)
		case isDialyzerWarning(l):
			m := dialyzerWarning.FindStringSubmatch(l)
			var msg []string
			// The message runs to the separator rule or the next warning,
			// across the blank lines dialyzer puts around quoted types.
			for _, n := range lines[i+1:] {
				if n == "" {
					continue
				}
				n = collapseSpaces(n)
				if !meaningful(n) || isDialyzerWarning(n) || len(msg) == 4 {
					break
				}
				msg = append(msg, n)
			}
			add(m[2] + " in " + m[1] + ": " + strings.Join(msg, " "))
		case (strings.Contains(l, "error[E") || strings.Contains(l, "error TS")) && compilerError.MatchString(l):
			add(compilerError.FindString(l))
		}
	}
	return out
}

// mayHaveFindings is false for a text in which findings cannot find
// anything, found without its per-line copies and patterns: most tool
// output (file reads, listings, logs) has none, and a backfill runs this
// over every result. Each test is one a finding's pattern needs: an arrow
// for credo, "error" for a compiler's diagnostic, a line of one word with
// a colon for dialyzer; a text with terminal escapes takes the whole path,
// since removing them can change where a line starts.
func mayHaveFindings(text string) bool {
	if strings.Contains(text, "error") || strings.ContainsAny(text, "↘→↗↑↓") || strings.IndexByte(text, '\x1b') >= 0 {
		return true
	}
	for line := range strings.Lines(text) {
		// Without escapes, a line of one word is its own normalised form.
		if l := trimLine(line); oneWord(l) && isDialyzerWarning(l) {
			return true
		}
	}
	return false
}

// trimLine is a line of output without its surrounding spaces and the box
// drawing a tool puts before it.
func trimLine(line string) string {
	return strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "┃│║|"))
}

// collapseSpaces is strings.Join(strings.Fields(s), " "), without the
// copies when s is already so (most lines are).
func collapseSpaces(s string) string {
	prevSpace := true // a leading space is collapsed too
	for _, r := range s {
		space := unicode.IsSpace(r)
		if space && (r != ' ' || prevSpace) {
			return strings.Join(strings.Fields(s), " ")
		}
		prevSpace = space
	}
	if prevSpace && s != "" {
		return strings.Join(strings.Fields(s), " ") // a trailing space
	}
	return s
}

// oneWord reports a trimmed line without spaces.
func oneWord(t string) bool {
	return strings.IndexFunc(t, unicode.IsSpace) < 0
}

// isDialyzerWarning reports a normalised line that is a dialyzer header;
// the header is one word with a colon, so a line with a space or without
// a colon is none, and is told so without the pattern.
func isDialyzerWarning(l string) bool {
	return strings.IndexByte(l, ' ') < 0 && strings.IndexByte(l, ':') >= 0 && dialyzerWarning.MatchString(l)
}
