package curate

import "strings"

// asciiFields cuts text that is all ASCII into its lowered words in one
// pass, without strings.FieldsFunc's per-rune decoding and call; most
// sentences are ASCII. It returns ok false for any other text, which the
// caller cuts the general way. keep says which bytes make up words; on
// ASCII, lowering changes no byte's class, so the words are where keep
// says in text itself. Like strings.FieldsFunc it returns a non-nil slice.
func asciiFields(text string, keep *[128]bool) (fields []string, ok bool) {
	upper, n, in := false, 0, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 0x80 {
			return nil, false
		}
		upper = upper || 'A' <= c && c <= 'Z'
		if k := keep[c]; k != in {
			in = k
			if k {
				n++
			}
		}
	}
	if upper {
		text = strings.ToLower(text) // ASCII: the same bytes, lowered
	}
	fields = make([]string, 0, n)
	start := -1
	for i := 0; i < len(text); i++ {
		switch k := keep[text[i]]; {
		case k && start < 0:
			start = i
		case !k && start >= 0:
			fields = append(fields, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fields = append(fields, text[start:])
	}
	return fields, true
}

// asciiSet is the set of ASCII letters and digits and of the bytes of
// extra.
func asciiSet(extra string) *[128]bool {
	var set [128]bool
	for c := range set {
		set[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for i := range len(extra) {
		set[extra[i]] = true
	}
	return &set
}

// The bytes of ASCII words: of normalize's, of words' (contradict.go), of
// strength's.
var (
	normalChars   = asciiSet("")
	wordChars     = asciiSet("'_./-")
	strengthChars = asciiSet("'")
)
