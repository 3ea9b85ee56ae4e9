package curate

import (
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/transcript"
)

// The per-event text scans held to the code they replaced (oracle_test.go):
// the same answer on every text, the letters beyond ASCII that lower to
// ASCII ones (the dotted capital I U+0130, the Kelvin sign U+212A)
// included.

// scanFrags are the pieces random texts are made of: the words every scan
// looks for, in several cases and cut short, what separates them, and the
// bytes that make lowering differ from lowering ASCII alone.
var scanFrags = []string{
	"FAIL", "--- FAIL: T", "fail", "Fail", "fai", "failed", "failures", "errors", "Error", "ERROR:", "error[", "erro",
	"error[E0308]: x", "[E", "error[", "errorerror[E", "error TS2345: y", "TS", "fatal:", "panic: x", "PANIC: y", "Traceback (most recent call last):",
	"could not compile", "CoUlD NoT start application", "could", "not", "found", "not found", "NOT FOUND", "can't", "cannot",
	"Exception", "ValueError: bad", "** (BadMapError) x", "undefined", "invalid", "denied", "refused",
	"BUILD FAİLED", "2 faİled", "İ", "K", "\u212a", "ınvalid", "Fİle has not been read", "has not been read", "modified since",
	"MODIFİED SINCE", "nothing to commit", "nothing to", "has no upstream branch", "no changes added to commit", "fatal: pathspec",
	"Sibling tool call errored", "Sibling tool", "paths are ignored by one of your .gitignore files", "paths are ",
	"zsh:", "Exit code 1", "<tool_use_error>", "</tool_use_error>", "err<x-y>or", "<nil>", "** (", "3", "0", "12", " ", "  ",
	"\t", "\u00a0", "\u2003", "\u0085", "\r", "\r\n", "\n", "\n", `\n`, ":", "Pre-commit validation failed:", "│", "┃ ",
	"[R] ↘ Prefer x", "lib/a.ex:3:5", "lib/h.ex:94:7:pattern_match_cov", "\x1b[31m", "ß", "\xff", "\xc4", "\xe2", "→", "↘", "↑", "\xe2\x86", "\x86", "\xe2\x86\xe2\x86\x93", "⇒", ",",
	".", "x", "word", "Log: /tmp/run.log", "ok ", "✔ ",
	// Choice cues, hedges and narration, with curly apostrophes and the
	// letters beyond ASCII.
	"decided to", "DECİDED TO", "I chose", "going with", "instead of", "Rather Than", "switch to", "I'll use", "I’LL USE",
	"we\u2019ll use", "we'll", "will track", "will trac\u212a", "opted", "decision", "chosen", "because", "so that",
	"maybe", "let me", "Now ", "don't", "I don't want", "never", "must", "please", "ok", "go ahead with", "proceed with",
	"do you", "can you", "Summary: ", "SUMMARY :", "ſtatus:", "What I Did: ", "changes made:", "Result", "**Status**: ", "wHAT WAS CHANGED :",
	"Next steps:", "## Remaining work", "**Known Kimitations**", "- run the migration on staging", "ſtill open:", "NEXT STEP: deploy it to the cluster",
	"TODO: add the tests for the parser", "\n2. ", "3) ", "Step 2 - ", "ſTEP 1: ", "<details>", "</details>", "<context a=\"1\">", "> ", "# ", "| a |",
	"at foo (x.js:1)", "at https://x", "2024-01-02 10:00", "[12:30", "[INFO] ", "app.tsx:12:5 ", "x @ chunk.js:11570", "**Note**", "_⚠️ Potential issue_",
	"not started", "NOT STARTED", "Not ſtarted", "nOt StArTeD", "- [ ]", "- [x]", "[main 1a2b3c4] fix the parser\n 1 file changed", "[", " changed",
	" - ", " -- ", "\t–\t", " — ", " —– x", " -—", ":\n", ",\f", ", ", ":\v", " \xe2\x80 ", "-\xe2\x80\x93 ",
	"Perfect!", "all set.", "Let me", "Now, I'll", "İ have", "</analysis>", "<tag>", "ſ", "’", "don’t", "_a.b/c-d", "You MUST", "Prefer", "Always ", "what", "we should", "i prefer", "step 2: ", "looks like", "thanks", "hmmm", ",", ", ", " - ", "i'm checking", "this is likely", "?", "|", "a b c d e f", " the storage layer",
}

// randomText joins up to n random fragments.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n) {
		b.WriteString(scanFrags[r.IntN(len(scanFrags))])
	}
	return b.String()
}

// scanLines are whole lines of the kinds the line tests tell apart: the
// headings and labels of a list of what is left (with the long s and the
// Kelvin sign, which fold to ASCII letters), list items, pasted material,
// markup and steps, in several cases.
var scanLines = []string{
	"Next steps:", "NEXT STEPS", "## Remaining work", "**Known issues**", "Known limitations:", "Known issues:", "KNOWN LIMITATIONS",
	"ſtill open:", "Still to do:", "What's left:", "Not yet implemented:", "Follow-ups:", "todo", "Open items:", "Left to do:", "Suggested next steps:",
	"Possible follow ups", "Recommended next step:", "Limitations:", "Next step: run the migration on staging today", "ſtill to do: wire the parser into the daemon",
	"TODO: add the tests for the parser and the writer", "Remaining: the storage layer and its tests", "left to do: port the writer to the new format please",
	"- run the migration on staging before the release", "* add the storage layer tests for the writer", "1. port the writer to the new format", "2) x",
	"• document the new flag in the readme file", "", "   ", "Some prose line that is not a list.", "Done.",
	"Step 2: fix the parser", "step 3 - run the tests", "ſTEP 1: read the file", "STEP 4) go", "12. keep the writer", "9) keep it", "3) use tabs",
	"<details>", "</details>", "<context a=\"1\">", "<br/>", "> quoted text", "# heading", "###### h6", "| a | b |", "at foo (bar)", "at foo (x.js:1)",
	"at https://x.y", "at app.js:12", "2024-01-02 10:00 started", "[2024-01-02T10:00", "[12:30] x", "[INFO] started", "x @ chunk.js:11570",
	"[main 1a2b3c4] fix the parser", "[main (root-commit) abcdef0] init", " 2 files changed, 3 insertions(+)", "- [ ] Not Started",
	"lib/a.ex:3:5 warning", "app.tsx:12:5 and b.go:3", "**Note**", "_⚠️ Potential issue_", "__init__", "Please never commit to main.", "```", "…",
}

// randomLines joins up to n random lines, some with fragments added.
func randomLines(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n) {
		b.WriteString(scanLines[r.IntN(len(scanLines))])
		if r.IntN(4) == 0 {
			b.WriteString(randomText(r, 3))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// checkScans fails t where a scan of text differs from its oracle.
func checkScans(t *testing.T, text string) {
	t.Helper()
	if got, want := anyFailureLine(text), oldAnyFailureLine(text); got != want {
		t.Fatalf("anyFailureLine(%q) = %v, was %v", text, got, want)
	}
	for line := range strings.Lines(text) {
		if got, want := failureLine(line), oldFailureLine(line); got != want {
			t.Fatalf("failureLine(%q) = %v, was %v", line, got, want)
		}
	}
	if got, want := mayHaveFindings(text), oldMayHaveFindings(text); got != want {
		t.Fatalf("mayHaveFindings(%q) = %v, was %v", text, got, want)
	}
	if got, want := hasCredoArrow(text), strings.ContainsAny(text, credoArrows); got != want {
		t.Fatalf("hasCredoArrow(%q) = %v, ContainsAny %v", text, got, want)
	}
	for line := range strings.Lines(text) {
		if l := trimLine(line); oneWord(l) != oldOneWord(l) {
			t.Fatalf("oneWord(%q) = %v, was %v", l, oneWord(l), oldOneWord(l))
		}
	}
	if got, want := containsVia(text, "error[E", len("error")), strings.Contains(text, "error[E"); got != want {
		t.Fatalf("containsVia(%q, \"error[E\") = %v, want %v", text, got, want)
	}
	if got, want := editMisses.inLower(text), oldContainsLower(text, editMisses.words...); got != want {
		t.Fatalf("editMisses.inLower(%q) = %v, containsLower was %v", text, got, want)
	}
	for _, kind := range []transcript.Kind{transcript.KindToolResult, transcript.KindError} {
		one := 1
		e := &transcript.Event{Kind: kind, Text: text, ExitCode: &one}
		call := &transcript.Event{Kind: transcript.KindToolCall, Tool: "Bash", Command: "go test ./..."}
		if got, want := trivialResult(e), oldTrivialResult(e); got != want {
			t.Fatalf("trivialResult(%q) = %v, was %v", text, got, want)
		}
		if got, want := signatureOf(e, call, findings(e.Text)), oldSignature(e, call); got != want {
			t.Fatalf("signature(%q) = %q, was %q", text, got, want)
		}
		e.ExitCode = nil
		if got, want := textFailure(e, func() []string { return findings(e.Text) }), oldTextFailure(e); got != want {
			t.Fatalf("textFailure(%q) = %v, was %v", text, got, want)
		}
	}
	if got, want := userSentences(text), oldUserSentences(text); !slices.Equal(got, want) {
		t.Fatalf("userSentences(%q) = %v, was %v", text, got, want)
	}
	if got, want := leftItems(text), oldLeftItems(text); !slices.Equal(got, want) {
		t.Fatalf("leftItems(%q) = %q, was %q", text, got, want)
	}
	if got, want := isPlan(text), oldIsPlan(text); got != want {
		t.Fatalf("isPlan(%q) = %v, was %v", text, got, want)
	}
	if !mayReportCommit(text) && commitLine.MatchString(text) {
		t.Fatalf("mayReportCommit(%q) = false, and commitLine matches", text)
	}
	checkSentenceScans(t, text)
}

// checkSentenceScans fails t where a test of one sentence differs from
// its oracle.
func checkSentenceScans(t *testing.T, s string) {
	t.Helper()
	if got, want := choiceWeight(s), oldChoiceWeight(s); got != want {
		t.Fatalf("choiceWeight(%q) = %v, was %v", s, got, want)
	}
	if got, want := hasChoiceCue(s), oldHasChoiceCue(s); got != want {
		t.Fatalf("hasChoiceCue(%q) = %v, was %v", s, got, want)
	}
	for _, step := range []bool{false, true} {
		if got, want := classify(sentence{s, step}), oldClassify(sentence{s, step}); got != want {
			t.Fatalf("classify(%q, step %v) = %v, was %v", s, step, got, want)
		}
	}
	checkWordCuts(t, s)
}

// checkWordCuts fails t where a cut of s into words, or a trim of it as
// a report's sentence, differs from its oracle.
func checkWordCuts(t *testing.T, s string) {
	t.Helper()
	var got []string
	for _, part := range clauses(s) {
		got = append(got, part)
	}
	if want := oldClauses(s); !slices.Equal(got, want) {
		t.Fatalf("clauses(%q) = %q, was %q", s, got, want)
	}
	if got, want := words(s), oldWords(s); !slices.Equal(got, want) || (got == nil) != (want == nil) {
		t.Fatalf("words(%q) = %q, was %q", s, got, want)
	}
	if got, want := normalize(s), oldNormalize(s); got != want {
		t.Fatalf("normalize(%q) = %q, was %q", s, got, want)
	}
	if got, want := newSimText(s), oldNewSimText(s); got.norm != want.norm || !maps.Equal(got.words, want.words) {
		t.Fatalf("newSimText(%q) = %v, was %v", s, got, want)
	}
	if got, want := strength(s), oldStrength(s); got != want {
		t.Fatalf("strength(%q) = %v, was %v", s, got, want)
	}
	if got, want := reportLine(s), oldReportLine(s); got != want {
		t.Fatalf("reportLine(%q) = %q, was %q", s, got, want)
	}
	if got, want := isReportFiller(s), oldIsReportFiller(s); got != want {
		t.Fatalf("isReportFiller(%q) = %v, was %v", s, got, want)
	}
}

func TestScansMatchOld(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	n := 8000
	if raceBuild {
		n = 1000
	}
	for range n {
		checkScans(t, randomText(r, 40))
		checkScans(t, randomLines(r, 12))
	}
}

// TestScansMatchOldOnOutputs runs the scans over the generated Claude Code
// tool outputs of the benchmark, with failure words and the letters
// beyond ASCII spliced in.
func TestScansMatchOldOnOutputs(t *testing.T) {
	eps, _ := backfillEpisodes(t, 1, 40)
	r := rand.New(rand.NewPCG(9, 9))
	for _, ep := range eps {
		for _, be := range ep.Events {
			text := be.Event.Text
			checkScans(t, text)
			if len(text) > 0 {
				at := r.IntN(len(text))
				checkScans(t, text[:at]+randomText(r, 4)+text[at:])
			}
		}
	}
}

// TestScansMatchOldOnCorpus runs the scans over every event text of the
// shared corpus's Claude Code and Codex sessions, and over each sentence
// of them.
func TestScansMatchOldOnCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the whole corpus")
	}
	files := corpusFiles(t)
	n, seen := 0, 0
	for format, paths := range files {
		for _, path := range paths {
			for _, e := range parseFile(t, format, path) {
				if seen++; raceBuild && seen%8 != 0 {
					continue // a sample (see raceBuild)
				}
				checkScans(t, e.Text)
				n++
				// What the sentence tests are asked of: the sentences of
				// prompts and of the agent's messages.
				switch e.Kind {
				case transcript.KindUserPrompt:
					for _, s := range userSentences(e.Text) {
						checkSentenceScans(t, strings.Join(strings.Fields(s.text), " "))
					}
				case transcript.KindAssistantMessage:
					for _, s := range sentences(e.Text) {
						checkSentenceScans(t, s)
					}
				}
			}
		}
	}
	t.Logf("%d event texts", n)
	if _, err := os.Stat(filepath.Join(corpusDir, "claude-code")); err == nil && n == 0 {
		t.Error("no events in the corpus")
	}
}

// TestCredoArrows: hasCredoArrow finds each arrow through the bytes it
// takes them all to start with.
func TestCredoArrows(t *testing.T) {
	for _, r := range credoArrows {
		if a := string(r); !strings.HasPrefix(a, credoArrowHead) || len(a) != 3 || !hasCredoArrow("x"+a) {
			t.Errorf("%q (% x) is not found by hasCredoArrow", a, a)
		}
	}
}

// TestWordFinder holds wordFinder.index to what it promises: the start of
// the word (in the text with its ASCII letters lowered, for a folding
// finder) whose head ends first. The texts are short and long (searched
// in two halves), with words where the halves meet.
func TestWordFinder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range []*wordFinder{failureWords, noOps, editMisses, namingWords, choiceCueWords, cueFinders[0].words,
		newWordFinder(false, "ab", "b", "abc"), newWordFinder(true, "aa", "a a")} {
		for n := range 6000 {
			var text string
			switch n % 3 {
			case 0:
				text = randomText(r, 30)
			case 1:
				text = randomText(r, 400)
			case 2:
				// Filler without words, a word somewhere near its middle.
				fill := strings.Repeat("-", 500+r.IntN(1500))
				at := len(fill)/2 - 70 + r.IntN(140)
				text = fill[:at] + f.words[r.IntN(len(f.words))] + fill[at:]
			}
			if r.IntN(4) == 0 {
				text += f.words[r.IntN(len(f.words))]
			}
			checkIndex(t, f, text)
		}
	}
}

// checkIndex fails t where f.index(text) is not the start of the word
// whose head ends first.
func checkIndex(t *testing.T, f *wordFinder, text string) {
	t.Helper()
	hay := text
	if f.fold {
		hay = asciiLower(text)
	}
	headLen := map[string]int{}
	for b := range 64 {
		if f.last&(1<<b) != 0 {
			headLen[f.words[f.heads[b].word]] = f.heads[b].n
		}
	}
	firstEnd := -1 // where the first head of a word in hay ends
	for _, w := range f.words {
		for off := 0; ; {
			i := strings.Index(hay[off:], w)
			if i < 0 {
				break
			}
			if end := off + i + headLen[w] - 1; firstEnd < 0 || end < firstEnd {
				firstEnd = end
			}
			off += i + 1
		}
	}
	at := f.index(text)
	if firstEnd < 0 {
		if at >= 0 {
			t.Fatalf("%q: index(%q) = %d, want -1", f.words, text, at)
		}
		return
	}
	if at < 0 || !slices.ContainsFunc(f.words, func(w string) bool { return strings.HasPrefix(hay[at:], w) && at+headLen[w]-1 == firstEnd }) {
		t.Fatalf("%q: index(%q) = %d, want the word whose head ends at %d", f.words, text, at, firstEnd)
	}
}

// FuzzScans holds the scans to their oracles on any text.
func FuzzScans(f *testing.F) {
	r := rand.New(rand.NewPCG(4, 4))
	for range 50 {
		f.Add(randomText(r, 20))
		f.Add(randomLines(r, 8))
	}
	f.Add("2 faİled\nerror: x")
	f.Add("FAİLED\n\u212a\nTraceback (most recent call last):\nValueError: x")
	f.Add("Edit: Fİle has not been read yet")
	f.Fuzz(func(t *testing.T, text string) {
		checkScans(t, text)
	})
}

// FuzzWordFinder holds wordFinder.in to strings.Contains on any text and
// words, and index to what it promises.
func FuzzWordFinder(f *testing.F) {
	f.Add("could not compile", "could", "not", false)
	f.Add("ERROR: x", "error", "fail", true)
	f.Fuzz(func(t *testing.T, text, w1, w2 string, fold bool) {
		words := []string{w1, w2}
		for _, w := range words {
			if w == "" || strings.Contains(w, "\n") || fold && asciiLower(w) != w {
				return
			}
		}
		hay := text
		if fold {
			hay = asciiLower(text)
		}
		want := strings.Contains(hay, w1) || strings.Contains(hay, w2)
		wf := newWordFinder(fold, words...)
		if got := wf.in(text); got != want {
			t.Fatalf("in(%q) of %q (fold %v) = %v, want %v", text, words, fold, got, want)
		}
		// Long enough to be searched in two halves, the text where they
		// meet.
		pad := strings.Repeat("\x00", 400)
		checkIndex(t, wf, pad+text+pad)
	})
}

// asciiLower is s with its ASCII letters lowered.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
