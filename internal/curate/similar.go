package curate

import (
	"strings"
	"unicode"
)

// normalize lower-cases s and reduces it to words of letters and digits
// separated by single spaces, so that texts differing only in case, space
// or punctuation compare equal.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r))
	}), " ")
}

// similarThreshold is the Jaccard similarity of word sets above which two
// texts are the same item.
const similarThreshold = 0.8

// similar reports whether two texts say the same thing: equal once
// normalized, or word sets with a Jaccard similarity of at least 0.8.
func similar(a, b string) bool {
	na, nb := normalize(a), normalize(b)
	if na == nb {
		return true
	}
	wa, wb := wordSet(na), wordSet(nb)
	if len(wa) == 0 || len(wb) == 0 {
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

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

// dedupBy keeps the first of each group of similar items, in order.
func dedupBy[T any](items []T, text func(T) string) []T {
	var out []T
	for _, it := range items {
		dup := false
		for _, o := range out {
			if similar(text(it), text(o)) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, it)
		}
	}
	return out
}

// dedupTexts merges similar texts, keeping the first and the evidence of
// all.
func dedupTexts(items []Text) []Text {
	var out []Text
	for _, it := range items {
		merged := false
		for i := range out {
			if similar(it.Text, out[i].Text) {
				out[i].Evidence.EventIDs = append(out[i].Evidence.EventIDs, it.Evidence.EventIDs...)
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, it)
		}
	}
	return out
}
