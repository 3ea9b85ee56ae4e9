package curate

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/transcript"
)

// Bounds on the agent's final report as the summary keeps it.
const (
	// reportWords is the fewest words an assistant message needs to count
	// as a report rather than an acknowledgement ("Done.").
	reportWords = 12
	// reportOpening is how many of the report's first sentences are kept,
	// filler aside: an agent opens its report with what it did and what it
	// left, which is where the next session starts.
	reportOpening  = 4
	maxReportLines = 6
	maxReportLine  = 220
)

// choiceCues mark a sentence that states a choice and why, which the next
// session needs so as not to reopen it.
var choiceCues = []string{
	"decided", "decision", "chose", "chosen", "instead of", "rather than", "will use",
	"switched to", "because", "opted", "went with", "so that",
}

// report keeps the agent's own account of the episode: the last assistant
// message of substance, its opening sentences and every sentence that
// states a choice. The summary carries it, most recent first, so that what
// was done and decided reaches the next session in the agent's words
// without each sentence becoming a medallion item.
func (x *extractor) report(it *Items) {
	for i := len(x.ep.Events) - 1; i >= 0; i-- {
		e := &x.ep.Events[i].Event
		if e.Kind != transcript.KindAssistantMessage || fewerWords(e.Text, reportWords) {
			continue
		}
		var out []string
		opening := 0
		for _, s := range sentences(e.Text) {
			if len(out) == maxReportLines {
				break
			}
			s = reportLine(s)
			if s == "" || isReportFiller(s) {
				continue
			}
			if opening < reportOpening || hasChoiceCue(s) {
				out = append(out, clip(s, maxReportLine))
			}
			opening++
		}
		if len(out) == 0 {
			continue
		}
		it.Report = out
		return
	}
}

// reportFiller is a sentence of a report that tells the next session
// nothing: an exclamation ("Perfect!"), the agent announcing its next step
// ("Now let me write the summary.", "Now I have all the information
// needed.") or a tag of a summary prompt ("<analysis>"). The opening of a
// report is taken after these, so it says what was done.
var reportFiller = regexp.MustCompile(`^(?:(?:perfect|great|excellent|good|done|all set|got it|ok(?:ay)?|sure|alright|awesome)\b[\s.!,:]*$|(?:now,? )?let me\b|(?:now,? )?i(?:'ll| will| have| can| need| understand| see)\b|</?[a-z_]+>$)`)

// fillerHeads are the first bytes of what reportFiller matches.
const fillerHeads = "pgedaosnli<"

// isReportFiller reports whether s, lowered, is reportFiller. Most
// sentences open with a letter no filler opens with: they are told by
// their first rune lowered, without lowering the whole sentence for the
// regexp.
func isReportFiller(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	if r = unicode.ToLower(r); r >= utf8.RuneSelf || strings.IndexByte(fillerHeads, byte(r)) < 0 {
		return false
	}
	return reportFiller.MatchString(strings.ToLower(s))
}

// minReportLineWords is the fewest words a line of the report needs: "1.",
// "✅" or "Changes made" head a list, they do not report.
const minReportLineWords = 3

// reportLabel is a label opening a report's sentence ("Summary: …", "What
// was done: …"), left over once the markup is gone.
var reportLabel = regexp.MustCompile(`^(?i:summary|what (?:was|i) (?:done|did|changed)|changes(?: made)?|result|status)\s*:\s*`)

// unbold takes Markdown's bold markup off a text. Only "**": "__" is also
// Python's dunder ("__init__.py"), which must stay.
var unbold = strings.NewReplacer("**", "")

// reportLine is a sentence of a report as the summary keeps it: without
// bold markup and a leading label; "" for a line that says nothing by
// itself: the lead-in of a list ("It includes:"), a list number or a
// heading, a harness directive ("::git-commit{…}").
func reportLine(s string) string {
	s = strings.TrimSpace(unbold.Replace(s))
	s = trimReportLabel(s)
	if strings.HasPrefix(s, "::") || strings.HasPrefix(s, "#") || strings.HasSuffix(s, ":") || fewerWords(s, minReportLineWords) {
		return ""
	}
	return s
}

// labelHeads are the first bytes of what reportLabel matches, lowered
// for ASCII;
// 0xc5 leads the long s (U+017F), which folds to "s".
const labelHeads = "swcr\xc5"

// trimReportLabel is s without reportLabel. The label is anchored at the
// start and cannot match again after itself, so cutting its one match
// off is what ReplaceAllString did; a sentence whose first byte no label
// starts with is not searched.
func trimReportLabel(s string) string {
	if !opensWith(s, labelHeads) {
		return s
	}
	if loc := reportLabel.FindStringIndex(s); loc != nil {
		return s[loc[1]:]
	}
	return s
}

// opensWith reports whether the first byte of s, an ASCII letter lowered,
// is one of heads: a check that s cannot match a regexp anchored at its
// start before running it.
func opensWith(s, heads string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if 'A' <= c && c <= 'Z' {
		c += 'a' - 'A'
	}
	return strings.IndexByte(heads, c) >= 0
}

// hasChoiceCue reports whether s, lowered, holds one of choiceCues.
func hasChoiceCue(s string) bool {
	return choiceCueWords.inLower(s)
}

// choiceCueWords finds choiceCues in one pass.
var choiceCueWords = newWordFinder(true, choiceCues...)
