package curate

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/medallionhq/medallion/internal/transcript"
)

// Signatures: the line a failure is known by.

// signature is the first meaningful line of an error's text, or what
// failed when the text says nothing.
func signature(e, call *transcript.Event) string {
	return signatureOf(e, call, findings(e.Text))
}

// signatureOf is signature, given fs, the findings of e's text: the
// extractor works them out once per event (extractor.findingsAt).
func signatureOf(e, call *transcript.Event, fs []string) string {
	text := e.Text
	if strings.Contains(text, `\n`) {
		// Hook and tool messages quoted as JSON keep their newlines
		// escaped.
		text = strings.ReplaceAll(text, `\n`, "\n")
		fs = findings(text)
	}
	if len(fs) > 0 {
		return fs[0]
	}
	ls := errorLines(slices.Collect(strings.Lines(text)))
	// A line that says what failed (a test runner's FAIL, an exception by
	// its class) names the failure better than one that only mentions an
	// error (a wrapper's "Test failed. See above", a browser's log line).
	i, l := ls.next(0, true, func(l string) bool { return failureLine(l) || isExceptionLine(l) })
	if i < 0 {
		i, l = ls.next(0, true, errorish)
	}
	if i >= 0 {
		// The exception a wrapper reports last is the cause ("Could not
		// start application x" … "** (BadMapError) expected a map"; a
		// Python traceback's last line): name both, or just the cause
		// when the first line is a bare traceback header.
		c := ls.cause(i + 1)
		if c != "" && strings.HasPrefix(l, "Traceback") {
			return clip(c, maxSignature)
		}
		// A header ("Pre-commit validation failed:") says less than the
		// line under it: take both.
		if strings.HasSuffix(l, ":") {
			if _, n := ls.next(i+1, false, nil); n != "" {
				l += " " + n
			}
		}
		if c != "" && !strings.Contains(l, c) {
			return clip(l, maxSignature*3/4) + " … " + clip(c, maxSignature*3/4)
		}
		return clip(l, maxSignature)
	}
	if _, l := ls.next(0, false, nil); l != "" {
		return clip(l, maxSignature)
	}
	return subject(call) + " fails"
}

// errorLines are the lines of an error's text. A failure is named by its
// informative lines, each without tags and with its spaces collapsed; the
// lines are made so only when looked at, and most are not: a failing
// run's output is mostly lines that name no failure, and what names one
// holds one of namingWords.
type errorLines []string

// next returns the first informative line from the raw line at index
// from on that test holds for (any, when test is nil), made so, and its
// index; -1 and "" when there is none. With naming, the lines that cannot
// name a failure (mayName) are passed over unmade: test is then one of
// failureLine, isExceptionLine and errorish.
func (ls errorLines) next(from int, naming bool, test func(string) bool) (int, string) {
	for j := from; j < len(ls); j++ {
		if naming && !mayName(ls[j]) {
			continue
		}
		if l := collapseSpaces(stripTags(ls[j])); informative(l) && (test == nil || test(l)) {
			return j, l
		}
	}
	return -1, ""
}

// cause returns the last informative line from index from on that names
// an exception, with the informative line under it when it ends in a
// colon (the value it complains about).
func (ls errorLines) cause(from int) string {
	k, c := -1, ""
	for j := from; j < len(ls); {
		i, l := ls.next(j, true, isExceptionLine)
		if i < 0 {
			break
		}
		k, c, j = i, l, i+1
	}
	if strings.HasSuffix(c, ":") {
		if _, n := ls.next(k+1, false, nil); n != "" {
			c += " " + n
		}
	}
	return c
}

// namingWords are what a line needs to pass failureLine, isExceptionLine
// or errorish, in any case: "could" for "could not", "found" for "not
// found", which a line may hold with other spaces than the made line's.
var namingWords = newWordFinder(true, "error", "fail", "fatal", "panic", "traceback", "could",
	"cannot", "can't", "found", "undefined", "exception", "invalid", "denied", "refused")

// mayName reports whether a raw line, once made (without tags, its spaces
// collapsed), may pass failureLine, isExceptionLine or errorish: only if
// it holds one of namingWords. Collapsing spaces keeps every word whole,
// but removing a tag can join two, and of the letters beyond ASCII two
// lower to an ASCII letter (lowersToASCII): a line with a tag or one of
// those is made and tested.
func mayName(raw string) bool {
	return strings.IndexByte(raw, '<') >= 0 || lowersToASCII(raw) || namingWords.in(raw)
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
	if isPointer(l) {
		return false
	}
	n := 0
	for w := range strings.FieldsSeq(l) {
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			n++
		}
	}
	return n >= 2
}

// pointer is a line that only points at a file: a label and a path
// ("Error Context: test-results/x/error-context.md", "Log: /tmp/run.log").
// What failed is in the file, not in the line.
var pointer = regexp.MustCompile(`^[\w -]{1,30}:\s*\S*[/\\]\S*$`)

// isPointer is pointer.MatchString, without the pattern for a line that
// lacks what it needs: a colon within its first 31 bytes (the label's
// letters are ASCII and hold none), a slash after it. Signatures test every
// line of an error's output.
func isPointer(l string) bool {
	i := strings.IndexByte(l, ':')
	return i >= 1 && i <= 30 && strings.ContainsAny(l[i:], `/\`) && pointer.MatchString(l)
}

// exceptionLine is a line naming an exception by its class: "** (BadMapError)
// expected a map", "ValueError: bad literal", "java.lang.IllegalStateException: x".
var exceptionLine = regexp.MustCompile(`^(?:\*\* \()?[A-Za-z_][\w.]*(?:Error|Exception)\b`)

// isExceptionLine is exceptionLine.MatchString, without the pattern for a
// line holding neither word.
func isExceptionLine(l string) bool {
	return (strings.Contains(l, "Error") || strings.Contains(l, "Exception")) && exceptionLine.MatchString(l)
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
	// Each prefix below starts with e, p or c, and no letter but those
	// lowers to them: a line starting otherwise is not lowered.
	if c := line[0] | 0x20; c != 'e' && c != 'p' && c != 'c' { // |0x20 lowers a letter
		return true
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
	if strings.IndexByte(s, '<') < 0 {
		return s // most lines: no copy
	}
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
