package curate

import (
	"strings"
	"unicode"

	"github.com/medallionhq/medallion/internal/episode"
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
