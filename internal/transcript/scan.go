package transcript

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/jsonstr"
)

// A small JSON reader for the hot path.
//
// A transcript line is mostly one large string (a tool output, a file, a
// base64 image) of which we keep a bounded slice. encoding/json validates
// the whole line and then rescans every nested value it hands to an
// Unmarshaler, a state-machine step per byte each time; the Claude Code
// adapter instead walks a record with these iterators, which find the end of
// a string with bytes.IndexByte and only unquote the strings it keeps. It is
// lenient: it checks structure (quotes, brackets, literals), not every
// escape or number, which is all a best-effort transcript reader needs.

var errSyntax = errors.New("malformed JSON")

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string whose opening quote is
// at b[i].
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, errSyntax
		}
		end := j + k
		backslashes := 0
		for p := end - 1; p > i && b[p] == '\\'; p-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return end + 1, nil
		}
		j = end + 1
	}
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errSyntax
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '-' || '0' <= c && c <= '9':
		j := i + 1
		for j < len(b) && strings.IndexByte("0123456789.eE+-", b[j]) >= 0 {
			j++
		}
		return j, nil
	}
	return 0, errSyntax
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return 0, errSyntax
	}
	return i + len(lit), nil
}

// objectIter walks the fields of one JSON object:
//
//	it := newObjectIter(raw)
//	for it.next() {
//		switch string(it.key) { … it.val … }
//	}
//
// key is the raw key without quotes (the keys we look for have no escapes)
// and val the raw value. A value that is not an object yields no fields.
type objectIter struct {
	b        []byte
	i        int
	key, val []byte
	first    bool
	err      error
}

func newObjectIter(b []byte) objectIter {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return objectIter{err: errSyntax}
	}
	return objectIter{b: b, i: i + 1, first: true}
}

func (it *objectIter) next() bool {
	if it.err != nil || it.b == nil {
		return false
	}
	b := it.b
	i := skipSpace(b, it.i)
	if i < len(b) && b[i] == '}' {
		it.b = nil
		return false
	}
	if !it.first {
		if i >= len(b) || b[i] != ',' {
			it.err = errSyntax
			return false
		}
		i = skipSpace(b, i+1)
	}
	it.first = false
	if i >= len(b) || b[i] != '"' {
		it.err = errSyntax
		return false
	}
	end, err := skipString(b, i)
	if err != nil {
		it.err = err
		return false
	}
	it.key = b[i+1 : end-1]
	i = skipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		it.err = errSyntax
		return false
	}
	i = skipSpace(b, i+1)
	end, err = skipValue(b, i)
	if err != nil {
		it.err = err
		return false
	}
	it.val, it.i = b[i:end], end
	return true
}

// arrayIter walks the elements of one JSON array; val is each raw element.
// A value that is not an array yields no elements.
type arrayIter struct {
	b     []byte
	i     int
	val   []byte
	first bool
	err   error
}

func newArrayIter(b []byte) arrayIter {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return arrayIter{err: errSyntax}
	}
	return arrayIter{b: b, i: i + 1, first: true}
}

func (it *arrayIter) next() bool {
	if it.err != nil || it.b == nil {
		return false
	}
	b := it.b
	i := skipSpace(b, it.i)
	if i < len(b) && b[i] == ']' {
		it.b = nil
		return false
	}
	if !it.first {
		if i >= len(b) || b[i] != ',' {
			it.err = errSyntax
			return false
		}
		i = skipSpace(b, i+1)
	}
	it.first = false
	end, err := skipValue(b, i)
	if err != nil {
		it.err = err
		return false
	}
	it.val, it.i = b[i:end], end
	return true
}

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
