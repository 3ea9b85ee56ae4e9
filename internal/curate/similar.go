package curate

import (
	"slices"
	"strings"
	"unicode"
)

// normalize lower-cases s and reduces it to words of letters and digits
// separated by single spaces, so that texts differing only in case, space
// or punctuation compare equal.
func normalize(s string) string {
	return strings.Join(normalWords(s), " ")
}

// normalWords is the words normalize joins.
func normalWords(s string) []string {
	if ws, ok := asciiFields(s, normalChars); ok {
		return ws
	}
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r))
	})
}

// similarThreshold is the Jaccard similarity of word sets above which two
// texts are the same item.
const similarThreshold = 0.8

// similar reports whether two texts say the same thing: equal once
// normalized, or word sets with a Jaccard similarity of at least 0.8.
func similar(a, b string) bool {
	return newSimText(a).similar(newSimText(b))
}

// simText is a text as similar compares it, worked out once where one text
// is compared with many (the dedups, a merge).
type simText struct {
	norm  string
	words map[string]bool
}

// newSimText cuts s into words once: the words of its normal form, which
// are its words joined by single spaces, are those words again.
func newSimText(s string) simText {
	ws := normalWords(s)
	set := make(map[string]bool, len(ws))
	for _, w := range ws {
		set[w] = true
	}
	return simText{norm: strings.Join(ws, " "), words: set}
}

func (a simText) similar(b simText) bool {
	if a.norm == b.norm {
		return true
	}
	wa, wb := a.words, b.words
	if len(wa) == 0 || len(wb) == 0 {
		return false
	}
	// The shared words are at most the smaller set and the union at least
	// the larger: sets this far apart in size cannot be similar.
	if float64(min(len(wa), len(wb))) < similarThreshold*float64(max(len(wa), len(wb))) {
		return false
	}
	inter := 0
	for w := range wa {
		if wb[w] {
			inter++
		}
	}
	union := len(wa) + len(wb) - inter
	return float64(inter)/float64(union) >= similarThreshold
}

// dedupBy keeps the first of each group of similar items, in order.
func dedupBy[T any](items []T, text func(T) string) []T {
	var out []T
	var kept []simText
	for _, it := range items {
		st := newSimText(text(it))
		if !slices.ContainsFunc(kept, st.similar) {
			out = append(out, it)
			kept = append(kept, st)
		}
	}
	return out
}

// dedupTexts merges similar texts, keeping the first and the evidence of
// all.
func dedupTexts(items []Text) []Text {
	var out []Text
	var kept []simText
	for _, it := range items {
		st := newSimText(it.Text)
		if i := slices.IndexFunc(kept, st.similar); i >= 0 {
			out[i].Evidence.EventIDs = append(out[i].Evidence.EventIDs, it.Evidence.EventIDs...)
			continue
		}
		out = append(out, it)
		kept = append(kept, st)
	}
	return out
}
