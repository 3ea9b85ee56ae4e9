package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTermBytes caps a term: longer runs (hashes, base64, minified code)
// are cut, so one key never grows without bound.
const maxTermBytes = 48

// joiners are the characters that hold a code identifier or a path
// together: "max_line", "internal/store/badger.go", "repo:muse",
// "tier-1". Inside a word they split it into parts; the whole word is a
// term too.
const joiners = "_./:-"

// stopwords are English words too common to rank by; a query made of them
// alone finds nothing rather than everything.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for from has have if in into is it its
		of on or so that the their then there these this to was were will with not no do does did
		we you they i he she them our your`) {
		stopwords[w] = true
	}
}

// Terms splits text into index terms, in order, repeats kept (they count
// as term frequency). A word is a run of letters, digits and joiners. It
// gives its parts — split at joiners and at camelCase humps
// ("LatestForScope" → latest, scope; "HTTPServer" → http, server) —
// lowercased and with a plural "s" taken off, and, when it has more than
// one part, the parts run together ("latestforscope"), so the exact
// identifier ranks above its words met apart, however it is spelt. Parts of one
// letter and stopwords are dropped.
func Terms(text string) []string {
	var out []string
	for len(text) > 0 {
		start := strings.IndexFunc(text, isWordRune)
		if start < 0 {
			break
		}
		text = text[start:]
		end := strings.IndexFunc(text, func(r rune) bool { return !isWordRune(r) })
		if end < 0 {
			end = len(text)
		}
		out = appendWord(out, text[:end])
		text = text[end:]
	}
	return out
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(joiners, r)
}

// appendWord appends the terms of one word: its parts, then, for a word
// of several parts, the parts run together ("max_line", "maxLine" and
// "MaxLine" all give "maxline"), and for a path the same of its last
// element ("internal/store/badger.go" gives "badgergo", as "badger.go"
// does).
func appendWord(out []string, word string) []string {
	word = strings.Trim(word, joiners) // sentence dots, leading "./", "--flag"
	if word == "" {
		return out
	}
	var whole, last strings.Builder
	parts, lastParts := 0, 0
	for _, piece := range strings.FieldsFunc(word, func(r rune) bool { return strings.ContainsRune(joiners, r) }) {
		for _, part := range humps(piece) {
			parts++
			whole.WriteString(strings.ToLower(part))
			if t := normalize(part); t != "" {
				out = append(out, t)
			}
		}
	}
	if parts > 1 {
		out = appendCompound(out, whole.String())
	}
	if i := strings.LastIndexByte(word, '/'); i >= 0 && parts > 1 {
		for _, piece := range strings.FieldsFunc(word[i+1:], func(r rune) bool { return strings.ContainsRune(joiners, r) }) {
			for _, part := range humps(piece) {
				lastParts++
				last.WriteString(strings.ToLower(part))
			}
		}
		if lastParts > 1 {
			out = appendCompound(out, last.String())
		}
	}
	return out
}

func appendCompound(out []string, t string) []string {
	if t = clip(t); !stopwords[t] {
		out = append(out, t)
	}
	return out
}

// humps splits a camelCase or PascalCase piece: a lower-case letter
// followed by an upper-case one starts a part ("latestFor"), and so
// does the last capital of a run followed by a lower-case letter
// ("HTTPServer" → HTTP, Server). Digits stay with their letters ("utf8",
// "16MiB" → 16Mi, B).
func humps(s string) []string {
	var parts []string
	start := 0
	var prev rune
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
			if unicode.IsLower(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				parts = append(parts, s[start:i])
				start = i
			}
		}
		prev = r
	}
	return append(parts, s[start:])
}

// normalize lowercases one part, drops it when it is a stopword or one
// letter, and takes a plural off: "tests" → "test", "retries" → "retry",
// "classes" → "class"; "status", "analysis" and "class" stay.
func normalize(part string) string {
	t := strings.ToLower(part)
	if utf8.RuneCountInString(t) < 2 || stopwords[t] {
		return ""
	}
	switch {
	case len(t) > 4 && strings.HasSuffix(t, "ies"):
		t = t[:len(t)-3] + "y"
	case len(t) > 4 && (strings.HasSuffix(t, "sses") || strings.HasSuffix(t, "xes") || strings.HasSuffix(t, "ches") || strings.HasSuffix(t, "shes")):
		t = t[:len(t)-2]
	case len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us") && !strings.HasSuffix(t, "is"):
		t = t[:len(t)-1]
	}
	return clip(t)
}

// clip cuts a term to maxTermBytes on a rune boundary.
func clip(t string) string {
	if len(t) <= maxTermBytes {
		return t
	}
	cut := maxTermBytes
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return t[:cut]
}
