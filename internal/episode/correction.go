package episode

import (
	"strings"
	"unicode"
)

// IsCorrection reports whether a user prompt corrects the agent or states a
// rule for it: "No, use the stream writer", "Don't touch the API",
// "Never commit to main", "always use tabs", "Stop.", "That's wrong".
//
// It is deliberately conservative — a checkpoint fires on it, and Tier 0
// curation turns it into an invariant — so it looks only for clear forms:
//
//   - a sentence that starts (after an optional "please", "but", "and",
//     "so", "ok", "okay"), or a clause after a comma that starts after one
//     of those, with "no" followed by punctuation ("No," "no."
//     "No!"), "nope", "stop", "wrong", "don't"/"dont", "do not", "never",
//     "instead";
//   - anywhere, the phrases "always use", "never use", "don't use", "do not
//     use", "stop using", "that's wrong", "that is wrong",
//     "this is wrong", "that's not what I", "you shouldn't", "you should not".
//
// So "No need to rush", "I don't know why this fails" and "stream it
// instead of buffering" (a request, not a correction) are not corrections,
// while "It works, but don't log the token" is.
func IsCorrection(text string) bool {
	words := tokenize(text)
	for i, w := range words {
		if w.sentenceStart || i > 0 && words[i-1].punctAfter {
			// A clause after a comma counts only behind a filler: "It
			// works, but don't …", not "Whatever you tried, never …".
			j := i
			for j < len(words) && fillers[words[j].text] {
				j++
			}
			if (w.sentenceStart || j > i) && j < len(words) && startsCorrection(words, j) {
				return true
			}
		}
		for _, p := range phrases {
			if matchPhrase(words, i, p) {
				return true
			}
		}
	}
	return false
}

// fillers may precede a correction at the start of a sentence.
var fillers = map[string]bool{"please": true, "but": true, "and": true, "so": true, "ok": true, "okay": true, "hmm": true, "well": true}

// phrases are corrections wherever they appear.
var phrases = [][]string{
	{"always", "use"}, {"never", "use"}, {"don't", "use"}, {"dont", "use"}, {"do", "not", "use"},
	{"stop", "using"},
	{"that's", "wrong"}, {"that", "is", "wrong"}, {"this", "is", "wrong"}, {"that's", "not", "what", "i"},
	{"you", "shouldn't"}, {"you", "should", "not"},
}

func startsCorrection(words []word, i int) bool {
	w := words[i]
	switch w.text {
	case "no":
		// "No, …", "no." but not "no need", "no worries".
		return w.punctAfter || i == len(words)-1
	case "never":
		return i+1 >= len(words) || words[i+1].text != "mind"
	case "nope", "stop", "wrong", "don't", "dont", "instead":
		return true
	case "do":
		return i+1 < len(words) && words[i+1].text == "not" && !w.punctAfter
	}
	return false
}

func matchPhrase(words []word, i int, p []string) bool {
	if i+len(p) > len(words) {
		return false
	}
	for k, s := range p {
		if words[i+k].text != s {
			return false
		}
		// A phrase does not run across punctuation ("stop, using" is two
		// thoughts).
		if k < len(p)-1 && words[i+k].punctAfter {
			return false
		}
	}
	return true
}

// word is a lower-cased word of the prompt.
type word struct {
	text string
	// sentenceStart: first word of the text, of a line, or after . ! ? ;
	sentenceStart bool
	// punctAfter: punctuation follows the word directly (",", ".", "!" …).
	punctAfter bool
}

// tokenize splits text into words of letters, digits and apostrophes (a
// typographic apostrophe becomes "'"), noting sentence starts and trailing
// punctuation.
func tokenize(text string) []word {
	var out []word
	var b strings.Builder
	start := true
	flush := func() {
		if b.Len() > 0 {
			out = append(out, word{text: strings.Trim(b.String(), "'"), sentenceStart: start})
			b.Reset()
			start = false
		}
	}
	for _, r := range text {
		switch {
		case r == '\'' || r == '\u2019':
			b.WriteByte('\'')
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case r == '\n' || r == '.' || r == '!' || r == '?' || r == ';':
			flush()
			if n := len(out); n > 0 && r != '\n' {
				out[n-1].punctAfter = true
			}
			start = true
		case unicode.IsPunct(r):
			flush()
			if n := len(out); n > 0 {
				out[n-1].punctAfter = true
			}
		default:
			flush()
		}
	}
	flush()
	return out
}
