package curate

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/episode"
)

// Sentences and cue words: how Tier 0 cuts text into statements and weighs
// their force.

// clip trims s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

type cue int

const (
	none cue = iota
	preference
	strong
)

// strength classifies one sentence of a user prompt. Strong: a correction
// (episode.IsCorrection) or a rule that starts with "always", "never",
// "must" or states "you must"/"must not". Preference: "prefer"/"rather".
// Anything else is chatter.
func strength(s string) cue {
	if episode.IsCorrection(s) {
		return strong
	}
	words := strengthWords(s)
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

// strengthWords is the lowered words strength weighs: letters, digits and
// apostrophes, straight or curly.
func strengthWords(s string) []string {
	if ws, ok := asciiFields(s, strengthChars); ok {
		return ws
	}
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '\u2019')
	})
}

// sentences splits a prompt into trimmed sentences; fenced code is skipped.
func sentences(text string) []string {
	var out []string
	inFence := false
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inFence = !inFence
			continue
		}
		if inFence || t == "" {
			continue
		}
		out = append(out, lineSentences(strings.TrimLeft(t, "-*> \t"))...)
	}
	return out
}

// lineSentences splits one line at its sentence ends.
func lineSentences(t string) []string {
	var out []string
	start := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '.', '!', '?':
			if i+1 == len(t) || t[i+1] == ' ' {
				if s := strings.TrimSpace(t[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
	}
	if s := strings.TrimSpace(t[start:]); s != "" {
		out = append(out, s)
	}
	return out
}
