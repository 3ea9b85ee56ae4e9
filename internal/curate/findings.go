package curate

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
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
// over every result. Each test is one a finding's pattern needs: "error[E"
// or "error" and "TS" for a compiler's diagnostic; an arrow and a line
// opening with "[X]" for credo; a line of one word with a colon for
// dialyzer. The lines are looked for through the byte they need ('[', ':'),
// so that a long output whose lines have neither is not split into lines:
// Claude Code numbers every line of a file it reads with an arrow. A text
// with terminal escapes takes the whole path, since removing them can
// change where a line starts. "error[E" is looked for through its "[E":
// words of code and prose have an e every few bytes, '[' seldom.
func mayHaveFindings(text string) bool {
	if strings.IndexByte(text, '\x1b') >= 0 || containsVia(text, "error[E", len("error")) ||
		strings.Contains(text, "TS") && strings.Contains(text, "error") {
		return true
	}
	if hasCredoArrow(text) && anyLineWith(text, '[', credoHead) {
		return true
	}
	// Without escapes, a line of one word is its own normalised form.
	return anyLineWith(text, ':', func(line string) bool {
		l := trimLine(line)
		return oneWord(l) && isDialyzerWarning(l)
	})
}

// containsVia is strings.Contains(text, w), found through w[at:], whose
// first byte is rarer in text than w's: strings.Index looks for a word's
// first byte and compares from there.
func containsVia(text, w string, at int) bool {
	head, tail := w[:at], w[at:]
	for off := at; off < len(text); {
		i := strings.Index(text[off:], tail)
		if i < 0 {
			return false
		}
		if start := off + i - at; text[start:start+at] == head {
			return true
		}
		off += i + 1
	}
	return false
}

// credoArrows are the arrows of credo's issues (credoFinding). They are
// encoded alike but for their last byte, credoArrowHead.
const credoArrows = "↘→↗↑↓"

const credoArrowHead = "\xe2\x86"

// hasCredoArrow is strings.ContainsAny(text, credoArrows). ContainsAny
// decodes every rune of text and looks for it among the arrows when they
// are not ASCII; this finds the bytes they start with by strings.Index,
// and tests the byte after. A valid encoding in text is always decoded as
// its rune: it starts with a byte that continues no other.
func hasCredoArrow(text string) bool {
	for off := 0; ; {
		i := strings.Index(text[off:], credoArrowHead)
		if i < 0 {
			return false
		}
		at := off + i
		if at+3 <= len(text) && strings.Contains(credoArrows, text[at:at+3]) {
			return true
		}
		off = at + 1
	}
}

// anyLineWith reports whether test holds for a line of text holding the
// byte c; each such line is tested once, the others not at all.
func anyLineWith(text string, c byte, test func(line string) bool) bool {
	for off := 0; off < len(text); {
		i := strings.IndexByte(text[off:], c)
		if i < 0 {
			return false
		}
		start, end := lineAround(text, off+i)
		if test(text[start:end]) {
			return true
		}
		off = end
	}
	return false
}

// lineAround returns the bounds of the line of text holding the byte at
// at: where it starts, and where it ends past its newline.
func lineAround(text string, at int) (start, end int) {
	start = strings.LastIndexByte(text[:at], '\n') + 1
	end = len(text)
	if k := strings.IndexByte(text[at:], '\n'); k >= 0 {
		end = at + k + 1
	}
	return start, end
}

// credoHead reports a line that opens as a credo issue does ("[R] …",
// credoFinding), once trimmed: the brackets and the letter are the same in
// its normalised form.
func credoHead(line string) bool {
	t := trimLine(line)
	return len(t) > 3 && t[0] == '[' && 'A' <= t[1] && t[1] <= 'Z' && t[2] == ']'
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

// oneWord reports a trimmed line without spaces. Its ASCII bytes are
// told by a table, faster than decoding them for unicode.IsSpace: most
// lines are ASCII, and mayHaveFindings asks of every line with a colon.
func oneWord(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] >= utf8.RuneSelf {
			return strings.IndexFunc(t[i:], unicode.IsSpace) < 0
		}
		if asciiSpace[t[i]] {
			return false
		}
	}
	return true
}

// asciiSpace marks the ASCII bytes unicode.IsSpace holds for.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// isDialyzerWarning reports a normalised line that is a dialyzer header;
// the header is one word with a colon, so a line with a space or without
// a colon is none, and is told so without the pattern.
func isDialyzerWarning(l string) bool {
	return strings.IndexByte(l, ' ') < 0 && strings.IndexByte(l, ':') >= 0 && dialyzerWarning.MatchString(l)
}
