package curate

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/medallionhq/medallion/internal/transcript"
)

// The per-event text scans as they were before they were made one pass
// each (wordFinder): the oracles the differential tests and fuzz targets
// hold the new ones to. They are kept verbatim but for their names.

var oldLowered = sync.Pool{New: func() any { return new([]byte) }}

func oldLowerASCII(bp *[]byte, text string) []byte {
	low := append((*bp)[:0], text...)
	*bp = low
	for i, c := range low {
		if 'A' <= c && c <= 'Z' {
			low[i] = c + 'a' - 'A'
		}
	}
	return low
}

func oldContainsLower(text string, words ...string) bool {
	if strings.Contains(text, "\u0130") || strings.Contains(text, "\u212a") {
		l := strings.ToLower(text)
		return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(l, w) })
	}
	bp := oldLowered.Get().(*[]byte)
	defer oldLowered.Put(bp)
	low := oldLowerASCII(bp, text)
	return slices.ContainsFunc(words, func(w string) bool { return bytes.Contains(low, []byte(w)) })
}

func oldAnyFailureLine(text string) bool {
	if i := strings.IndexByte(text, 0xc4); i >= 0 && strings.Contains(text[i:], "\u0130") {
		for line := range strings.Lines(text) {
			if oldFailureLine(line) {
				return true
			}
		}
		return false
	}
	bp := oldLowered.Get().(*[]byte)
	defer oldLowered.Put(bp)
	low := oldLowerASCII(bp, text)
	for _, w := range failureWords.words {
		for off := 0; off < len(low); {
			j := bytes.Index(low[off:], []byte(w))
			if j < 0 {
				break
			}
			start, end := lineAround(text, off+j)
			if oldFailureLine(text[start:end]) {
				return true
			}
			off = end
		}
	}
	return false
}

func oldFailureLine(line string) bool {
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
	if !strings.Contains(low, "fail") && !strings.Contains(low, "errors") {
		return false
	}
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

func oldTextFailure(e *transcript.Event) bool {
	if e.Kind != transcript.KindToolResult || failed(e) {
		return false
	}
	return oldAnyFailureLine(e.Text) || len(oldFindings(e.Text)) > 0
}

func oldTrivialResult(result *transcript.Event) bool {
	if shellMisuse(result.Text) {
		return true
	}
	for _, o := range noOps.words {
		if strings.Contains(result.Text, o) {
			return true
		}
	}
	return false
}

func oldSignature(e, call *transcript.Event) string {
	// Hook and tool messages quoted as JSON keep their newlines escaped.
	text := strings.ReplaceAll(e.Text, `\n`, "\n")
	if fs := oldFindings(text); len(fs) > 0 {
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
		c := oldCause(lines[i+1:])
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

func oldCause(lines []string) string {
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

func oldMayHaveFindings(text string) bool {
	if strings.IndexByte(text, '\x1b') >= 0 || strings.Contains(text, "error[E") ||
		strings.Contains(text, "TS") && strings.Contains(text, "error") {
		return true
	}
	if strings.ContainsAny(text, "↘→↗↑↓") && anyLineWith(text, '[', credoHead) {
		return true
	}
	// Without escapes, a line of one word is its own normalised form.
	return anyLineWith(text, ':', func(line string) bool {
		l := trimLine(line)
		return oldOneWord(l) && isDialyzerWarning(l)
	})
}

func oldChoiceWeight(s string) int {
	if strings.HasSuffix(s, "?") || strings.ContainsAny(s, "|*") || fewerWords(s, minChoiceWords) {
		return 0
	}
	l := strings.ReplaceAll(strings.ToLower(s), "\u2019", "'")
	// The cues first: most sentences have none, and then the hedges and
	// the narration pattern have nothing to cancel.
	w := 0
	for _, c := range agentChoiceCues {
		if strings.Contains(l, c.phrase) {
			w = max(w, c.weight)
		}
	}
	if w == 0 {
		return 0
	}
	for _, h := range hedges {
		if strings.Contains(l, h) {
			return 0
		}
	}
	if narration.MatchString(l) {
		return 0
	}
	return w
}

func oldHasChoiceCue(s string) bool {
	l := strings.ToLower(s)
	for _, c := range choiceCues {
		if strings.Contains(l, c) {
			return true
		}
	}
	return false
}

func oldClassify(s sentence) act {
	if oldQuestion(s.text) || oldChatter(s.text) || oldApproval(s.text) {
		return actDrop
	}
	switch c := strength(s.text); {
	case c == strong:
		return actRule
	case c == preference:
		return actPreference
	case s.step:
		return actDrop
	}
	ws := opening(s.text)
	if hasAny(ws, ruleCues) {
		return actRule
	}
	if reports(ws) {
		return actReport
	}
	if len(content(s.text)) < minRequestWords {
		// A request of two words ("check again", "show tools") says too
		// little to guide a later session.
		return actDrop
	}
	return actRequest
}

func oldQuestion(s string) bool {
	if strings.HasSuffix(strings.TrimRight(s, " *_)\"'`"), "?") {
		return true
	}
	ws := opening(s)
	return asks(ws) && !slices.Contains(ws, ",")
}

func oldChatter(s string) bool {
	l := strings.ReplaceAll(strings.ToLower(s), "\u2019", "'")
	for _, c := range chatterOpeners {
		if strings.HasPrefix(l, c) {
			return true
		}
	}
	n := 0
	for w := range content(s) {
		if !acks[w] {
			n++
		}
	}
	return n < minContentWords
}

func oldApproval(s string) bool {
	// "go ahead with the regression test", "proceed with the migration":
	// whatever follows names what the agent proposed.
	if ws := opening(s); len(ws) > 1 && (ws[0] == "go" && ws[1] == "ahead" || (ws[0] == "proceed" || ws[0] == "continue") && ws[1] == "with") {
		return true
	}
	for w := range content(s) {
		if !acks[w] && !approvalWords[w] && !stretched.MatchString(w) && strings.Trim(w, "0123456789") != "" {
			return false
		}
	}
	return true
}

func oldFindings(text string) []string {
	if !oldMayHaveFindings(text) {
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
		if !strings.HasPrefix(t, "[") && !oldOneWord(t) && !strings.Contains(t, "error") {
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

func oldOneWord(t string) bool {
	return strings.IndexFunc(t, unicode.IsSpace) < 0
}
