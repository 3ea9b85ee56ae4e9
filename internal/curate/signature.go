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
	// Hook and tool messages quoted as JSON keep their newlines escaped.
	text := strings.ReplaceAll(e.Text, `\n`, "\n")
	if fs := findings(text); len(fs) > 0 {
		return fs[0]
	}
	var lines []string
	for line := range strings.Lines(text) {
		if l := collapseSpaces(stripTags(line)); informative(l) {
			lines = append(lines, l)
		}
	}
	// A line that says what failed (a test runner's FAIL, an exception by
	// its class) names the failure better than one that only mentions an
	// error (a wrapper's "Test failed. See above", a browser's log line).
	i := slices.IndexFunc(lines, func(l string) bool { return failureLine(l) || isExceptionLine(l) })
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
		line = collapseSpaces(stripTags(line))
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

// cause returns the last line of lines that names an exception, with the
// line under it when it ends in a colon (the value it complains about).
func cause(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if !isExceptionLine(lines[i]) {
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
