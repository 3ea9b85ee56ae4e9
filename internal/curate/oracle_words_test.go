package curate

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/transcript"
)

// The sentence cutting and report trimming as they were before the ASCII
// word cut (asciiFields) and the regexps' first-byte checks: the oracles
// scans_test.go holds the new ones to. Kept verbatim but for their names.

func oldWords(s string) []string {
	s = strings.ReplaceAll(strings.ToLower(s), "\u2019", "'")
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '_' || r == '.' || r == '/' || r == '-')
	})
}

func oldNormalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r))
	}), " ")
}

func oldNewSimText(s string) simText {
	n := oldNormalize(s)
	return simText{norm: n, words: oldWordSet(n)}
}

func oldWordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

func oldStrength(s string) cue {
	if episode.IsCorrection(s) {
		return strong
	}
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '\u2019')
	})
	for len(words) > 0 && (words[0] == "please" || words[0] == "and" || words[0] == "also" || words[0] == "but") {
		words = words[1:]
	}
	if len(words) < 2 {
		return none
	}
	switch words[0] {
	case "always", "never", "must":
		return strong
	}
	for i, w := range words {
		switch w {
		case "must":
			if i > 0 && (words[i-1] == "you" || words[i-1] == "we" || words[i-1] == "it") {
				return strong
			}
		case "prefer", "preferably", "rather":
			return preference
		}
	}
	return none
}

func oldReportLine(s string) string {
	s = strings.TrimSpace(unbold.Replace(s))
	s = reportLabel.ReplaceAllString(s, "")
	if strings.HasPrefix(s, "::") || strings.HasPrefix(s, "#") || strings.HasSuffix(s, ":") || fewerWords(s, minReportLineWords) {
		return ""
	}
	return s
}

func oldIsReportFiller(s string) bool {
	return reportFiller.MatchString(strings.ToLower(s))
}

func oldUserSentences(text string) []sentence {
	var out []sentence
	inFence, closing := false, ""
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "```"):
			inFence = !inFence
			continue
		case inFence:
			continue
		case closing != "":
			if strings.Contains(t, closing) {
				closing = ""
			}
			continue
		}
		if m := openTag.FindStringSubmatch(t); m != nil {
			closing = "</" + m[1] + ">"
			continue
		}
		if t == "" || pastedLine.MatchString(t) || emphasized.MatchString(t) || len(sourceRef.FindAllStringIndex(t, 2)) == 2 ||
			transcript.IsElision(t) {
			continue
		}
		t = strings.TrimLeft(t, "-*+ \t")
		step := stepMarker.MatchString(t)
		if step {
			t = stepMarker.ReplaceAllString(t, "")
		}
		for _, s := range lineSentences(t) {
			out = append(out, sentence{text: s, step: step})
		}
	}
	return out
}

func oldLeftItems(text string) []string {
	var out []string
	in := false
	for line := range strings.Lines(text) {
		l := strings.TrimSpace(line)
		switch {
		case leftHeading.MatchString(l):
			out, in = nil, true
		case leftInline.MatchString(l):
			out, in = []string{leftInline.FindStringSubmatch(l)[1]}, false
		case in && l == "":
			in = len(out) == 0 // a blank line before the list, not after it
		case in:
			m := listItem.FindStringSubmatch(l)
			if m == nil {
				in = false
				continue
			}
			if item := strings.Trim(strings.TrimSpace(m[1]), "*_ "); len(content(item)) >= minContentWords && len(out) < maxLeft {
				out = append(out, item)
			}
		}
	}
	return out
}

func oldIsPlan(text string) bool {
	return strings.Count(text, "- [ ]")+strings.Count(strings.ToLower(text), "not started") >= minPlanSteps
}

var oldClauseSep = regexp.MustCompile(`,\s|:\s|\s[-–—]+\s`)

// oldClauses is how clauseWords split a sentence before clauses: the
// words of each part are cut as they still are.
func oldClauses(s string) []string {
	if !strings.ContainsAny(s, ",:-–—") { // what clauseSep needs; most sentences have none
		return []string{s}
	}
	return oldClauseSep.Split(s, -1)
}
