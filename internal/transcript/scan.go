package transcript

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/jsonstr"
)

// The values a record's walk (internal/jsonscan) hands over, read as the
// parsers keep them.

// jsonString returns the value of a raw JSON string, or "" for any other
// value. Invalid UTF-8 and lone surrogates become U+FFFD, as encoding/json
// does.
func jsonString(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		if utf8.Valid(s) {
			return string(s)
		}
		return strings.ToValidUTF8(string(s), "\uFFFD")
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			b.Write(s)
			break
		}
		b.Write(s[:k])
		s = s[k:]
		if len(s) < 2 {
			break
		}
		switch c := s[1]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, n, ok := jsonstr.UnicodeEscape(s)
			if !ok { // leniently, as the replacement character
				r, n = utf8.RuneError, 2
			}
			b.WriteRune(r)
			s = s[n:]
			continue
		default: // \" \\ \/ and, leniently, anything else
			b.WriteByte(c)
		}
		s = s[2:]
	}
	out := b.String()
	if !utf8.ValidString(out) {
		out = strings.ToValidUTF8(out, "\uFFFD")
	}
	return out
}

// rawJSON returns a raw JSON value as text, with any invalid UTF-8 replaced:
// it is kept as it is written when its shape is not the expected one.
func rawJSON(raw []byte) string {
	if utf8.Valid(raw) {
		return string(raw)
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD")
}

// jsonTrue reports whether a raw value is the literal true.
func jsonTrue(raw []byte) bool { return string(raw) == "true" }

// jsonInt returns a raw JSON integer, or 0.
func jsonInt(raw []byte) int {
	n, _ := parseExitCode(string(raw))
	return n
}
