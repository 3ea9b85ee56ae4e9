package transcript

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/jsonstr"
)

// Most of a long tool result is cut by boundText: of a 20 KB output, 4 KB
// are kept. A lazyText holds such a text as the raw JSON strings it is
// made of and, when it is long enough for that to pay, measures it
// (measureJSONString: its length and whether it is valid UTF-8, which
// costs about half a decode) and decodes only the head and tail that
// boundText keeps. Its results are byte for byte those of boundText over
// jsonString's decode (FuzzLazyBound holds it to that).

// jsonText is a raw JSON value kept undecoded: a long text whose decode
// can wait until it is known how much of it is kept.
type jsonText []byte

// String is the text, as jsonString decodes it.
func (t jsonText) String() string { return jsonString(t) }

// lazyFactor: a text up to lazyFactor times the bound is decoded whole.
// Measuring, then decoding the head and tail, pays only when most of the
// text is cut (BenchmarkBoundResult, for a bound of 4 KB: about even at
// 6 KB, 1.2-1.6× faster at 16 KB, 2× at 64 KB).
const lazyFactor = 3

// lazyText is a text made of pieces, some of them raw JSON strings.
type lazyText struct {
	pieces   []textPiece
	size     int    // the pieces' raw length, about the text's
	n        int    // the decoded length, once measured
	measured bool   // n is known, and every JSON piece reads fast
	text     string // the whole text, once decoded
	decoded  bool
}

// textPiece is a raw JSON string (quotes included) or a text.
type textPiece struct {
	raw    []byte
	text   string
	n      int // the decoded length, once measured
	isJSON bool
}

// addJSON appends the JSON string raw (any other value is "").
func (t *lazyText) addJSON(raw jsonText) {
	if len(raw) < 2 || raw[0] != '"' {
		return
	}
	t.pieces = append(t.pieces, textPiece{raw: raw, isJSON: true})
	t.size += len(raw) - 2
}

// addString appends s.
func (t *lazyText) addString(s string) {
	t.pieces = append(t.pieces, textPiece{text: s, n: len(s)})
	t.size += len(s)
}

// String is the whole text, decoded once.
func (t *lazyText) String() string {
	if t.decoded {
		return t.text
	}
	switch {
	case len(t.pieces) == 1 && t.pieces[0].isJSON && !t.measured:
		t.text = jsonString(t.pieces[0].raw)
	case len(t.pieces) == 1 && !t.pieces[0].isJSON:
		t.text = t.pieces[0].text
	default:
		t.measure()
		b := make([]byte, 0, t.n)
		for i := range t.pieces {
			b = t.pieces[i].appendHead(b, len(b)+t.pieces[i].n)
		}
		t.text = string(b)
	}
	t.decoded = true
	return t.text
}

// whole reports whether the text is decoded whole for a bound of max.
func (t *lazyText) whole(max int) bool {
	return t.decoded || t.size <= lazyFactor*max
}

// measure finds the decoded length of every piece; a JSON piece that
// appendUnescaped cannot decode exactly is decoded whole by jsonString.
func (t *lazyText) measure() {
	if t.measured {
		return
	}
	t.n = 0
	for i := range t.pieces {
		p := &t.pieces[i]
		if p.isJSON {
			if n, fast := measureJSONString(p.body()); fast {
				p.n = n
			} else {
				text := jsonString(p.raw)
				*p = textPiece{text: text, n: len(text)}
			}
		}
		t.n += p.n
	}
	t.measured = true
}

// bound is boundText(t.String(), max), decoding only what it keeps when
// the text is long.
func (t *lazyText) bound(max int) (string, int) {
	if t.whole(max) {
		return boundText(t.String(), max)
	}
	return t.cut(max)
}

// cut is bound for a long text: measured, then its head and tail decoded.
func (t *lazyText) cut(max int) (string, int) {
	t.measure()
	if t.n <= max {
		return boundText(t.String(), max)
	}
	marker, head, tail := elision(t.n, max)
	// Room for the few bytes a decode may write past what it was asked
	// for, and for the tail's decode from a little before it.
	b := make([]byte, 0, head+len(marker)+tail+tail/8+64)
	b = t.appendHead(b, head+1) // boundText looks at the byte after the head
	b = append(b[:runeHead(b, head)], marker...)
	start := len(b)
	b = t.appendTail(b, tail)
	if skip := runeTail(b[start:], 0); skip > 0 {
		b = append(b[:start], b[start+skip:]...)
	}
	s := scrubBase64(string(b))
	if len(s) == t.n {
		return s, 0
	}
	return s, t.n
}

// appendHead appends the text's first bytes until b holds at least limit
// bytes, or the whole text. The text is measured.
func (t *lazyText) appendHead(b []byte, limit int) []byte {
	for i := range t.pieces {
		if len(b) >= limit {
			break
		}
		b = t.pieces[i].appendHead(b, limit)
	}
	return b
}

// appendTail appends the last n bytes of the text (n ≤ t.n). The text is
// measured.
func (t *lazyText) appendTail(b []byte, n int) []byte {
	k := len(t.pieces) - 1
	for k > 0 && n > t.pieces[k].n {
		n -= t.pieces[k].n
		k--
	}
	b = t.pieces[k].appendTail(b, n)
	for i := k + 1; i < len(t.pieces); i++ {
		b = t.pieces[i].appendHead(b, len(b)+t.pieces[i].n)
	}
	return b
}

// appendHead appends the piece's first bytes until b holds at least
// limit bytes, or the whole piece.
func (p *textPiece) appendHead(b []byte, limit int) []byte {
	if p.isJSON {
		return appendUnescaped(b, p.body(), limit)
	}
	return append(b, p.text[:min(len(p.text), max(limit-len(b), 0))]...)
}

// appendTail appends the last n bytes of the piece (n ≤ p.n). A JSON
// piece is decoded from an escape boundary a little before the n bytes'
// raw start, then further back if that gave fewer.
func (p *textPiece) appendTail(b []byte, n int) []byte {
	if !p.isJSON {
		return append(b, p.text[len(p.text)-n:]...)
	}
	body := p.body()
	start := len(b)
	back := n + n/8 + 16 // escapes make the raw text a little longer
	for {
		from := escapeBoundary(body, len(body)-back)
		b = appendUnescaped(b[:start], body[from:], start+p.n)
		if got := len(b) - start; got >= n || from == 0 {
			n = min(n, got)
			copy(b[start:], b[len(b)-n:])
			return b[:start+n]
		}
		back *= 2
	}
}

// body is a JSON piece's raw text between its quotes.
func (p *textPiece) body() []byte { return p.raw[1 : len(p.raw)-1] }

// measureJSONString returns the length of what jsonString decodes from the
// body s of a JSON string, and whether appendUnescaped decodes it to the
// same bytes: whether s is valid UTF-8. jsonString repairs an invalid
// output with strings.ToValidUTF8, which merges a run of bad bytes into one
// U+FFFD: only a whole decode can do that. (An escaped byte of a valid
// character, \ then é's first byte, is copied as it is, the rest of the
// character after it: the output stays valid.)
//
// It reads s eight bytes at a time: the backslashes of a word are counted,
// not looked at one by one, as long as each starts an escape of one byte
// (\n, \t, \"…: each makes the text one byte shorter); a backslash before
// a backslash or a u sends the whole text to measureEscapes.
func measureJSONString(s []byte) (n int, fast bool) {
	n = len(s)
	var after uint64 // byte 0's flag when the previous word ended in a backslash
	i := 0
	for i+8 <= len(s) {
		w := binary.LittleEndian.Uint64(s[i:])
		if w&msbs != 0 {
			// A character from 0x80: count the bytes before it, check
			// the characters, and go on after them.
			k := bits.TrailingZeros64(w&msbs) >> 3
			bs := equalBytes(w, '\\') & (1<<(8*k) - 1)
			if next := bs<<8 | after; next&(equalBytes(w, 'u')|bs) != 0 {
				return measureEscapes(s)
			}
			n -= bits.OnesCount64(bs)
			for i += k; i < len(s) && s[i] >= utf8.RuneSelf; {
				size := validRune(s[i:])
				if size == 0 {
					return 0, false
				}
				i += size
			}
			after = 0
			continue
		}
		bs := equalBytes(w, '\\')
		if next := bs<<8 | after; next&(equalBytes(w, 'u')|bs) != 0 {
			return measureEscapes(s)
		}
		n -= bits.OnesCount64(bs)
		after = bs >> 56
		i += 8
	}
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case after != 0 && (c == '\\' || c == 'u'):
			return measureEscapes(s)
		case c == '\\':
			n--
			after = 1
		case c >= utf8.RuneSelf:
			size := validRune(s[i:])
			if size == 0 {
				return 0, false
			}
			i += size - 1
			after = 0
		default:
			after = 0
		}
	}
	return n, true
}

// validRune returns the length of the valid UTF-8 character s starts
// with, or 0. Two- and three-byte characters (accents, arrows, CJK) are
// checked here, without a call.
func validRune(s []byte) int {
	switch c := s[0]; {
	case 0xc2 <= c && c <= 0xdf:
		if len(s) >= 2 && s[1]&0xc0 == 0x80 {
			return 2
		}
	case 0xe0 <= c && c <= 0xef:
		lo, hi := byte(0x80), byte(0xbf)
		switch c {
		case 0xe0:
			lo = 0xa0 // shorter forms are overlong
		case 0xed:
			hi = 0x9f // the surrogates
		}
		if len(s) >= 3 && lo <= s[1] && s[1] <= hi && s[2]&0xc0 == 0x80 {
			return 3
		}
	default:
		if r, size := utf8.DecodeRune(s); r != utf8.RuneError || size > 1 {
			return size
		}
	}
	return 0
}

// measureEscapes is measureJSONString for a text with escapes that are not
// all of one byte (\\, \u): each is looked at, found eight bytes at a
// time.
func measureEscapes(s []byte) (n int, fast bool) {
	if !utf8.Valid(s) {
		return 0, false
	}
	n = len(s)
	for i := 0; i < len(s); {
		if len(s)-i >= 8 {
			if m := equalBytes(binary.LittleEndian.Uint64(s[i:]), '\\'); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
			} else {
				i += 8
				continue
			}
		} else if s[i] != '\\' {
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] != 'u' {
			n, i = n-1, i+2 // \n, \t, \" and the like: most escapes
			continue
		}
		raw, dec := escapeSize(s[i:])
		n += dec - raw
		i += raw
	}
	return n, true
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
	low7 = 0x7f7f7f7f7f7f7f7f
)

// equalBytes flags, by the high bit of its byte, each byte of w equal to
// c, an ASCII byte: the xor leaves a zero byte there, and a byte is zero
// when neither its high bit nor, added to 0x7f, its low seven bits carry.
func equalBytes(w uint64, c byte) uint64 {
	x := w ^ (uint64(c) * lsbs)
	return ^(x&low7 + low7 | x) & msbs
}

// escapeSize returns the raw and decoded lengths of the escape that starts
// s, as jsonString reads it.
func escapeSize(s []byte) (raw, dec int) {
	switch {
	case len(s) < 2:
		return 1, 0 // a lone backslash at the end is dropped
	case s[1] != 'u':
		return 2, 1
	}
	r, n, ok := jsonstr.UnicodeEscape(s)
	if !ok {
		return 2, utf8.RuneLen(utf8.RuneError)
	}
	return n, utf8.RuneLen(r)
}

// appendUnescaped appends the value of the JSON string body s, as
// jsonString decodes it, until b holds at least limit bytes (it may hold a
// few more). s must be one measureJSONString calls fast: it is copied as
// it is between escapes, eight bytes at a time while b has room.
func appendUnescaped(b, s []byte, limit int) []byte {
	for len(s) > 0 && len(b) < limit {
		var k int
		if n := len(b); len(s) >= 8 && cap(b)-n >= 8 {
			w := binary.LittleEndian.Uint64(s)
			b = b[:n+8]
			binary.LittleEndian.PutUint64(b[n:], w)
			m := equalBytes(w, '\\')
			if m == 0 {
				s = s[8:]
				continue
			}
			k = bits.TrailingZeros64(m) >> 3
			b = b[:n+k]
		} else {
			k = bytes.IndexByte(s, '\\')
			if k < 0 {
				k = len(s)
			}
			if take := limit - len(b); take < k {
				return append(b, s[:take]...)
			}
			b = append(b, s[:k]...)
		}
		s = s[k:]
		if len(s) < 2 {
			break // the end, or a lone backslash there
		}
		switch c := s[1]; c {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'u':
			r, n, ok := jsonstr.UnicodeEscape(s)
			if !ok {
				r, n = utf8.RuneError, 2
			}
			b = utf8.AppendRune(b, r)
			s = s[n:]
			continue
		default: // \" \\ \/ and, leniently, anything else
			b = append(b, c)
		}
		s = s[2:]
	}
	return b
}

// escapeBoundary returns the greatest j ≤ i at which no escape of s is
// cut: the byte before it is not one an escape continues after (the
// backslash, the u, the hex digits of \uXXXX and of a surrogate pair's
// second half). A decode of s[j:] is the end of the decode of s.
func escapeBoundary(s []byte, i int) int {
	for ; i > 0; i-- {
		if c := s[i-1]; c != '\\' && c != 'u' && !isHex(c) {
			return i
		}
	}
	return 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// resultHeadBytes is as much of a tool result's start as toolResult's
// checks look at: its prefixes, and the exit code after "Exit code ".
const resultHeadBytes = 128

// resultHead returns enough of the start of a tool result for toolResult's
// checks: resultHeadBytes, or the whole text when it is not longer, when
// it is decoded whole anyway for a bound of max, or when an exit code's
// digits may run past them.
func resultHead(t *lazyText, max int) string {
	if t.whole(max) {
		return t.String()
	}
	if t.measure(); t.n <= resultHeadBytes {
		return t.String()
	}
	var buf [resultHeadBytes + 16]byte
	head := string(t.appendHead(buf[:0], resultHeadBytes)[:resultHeadBytes])
	if rest, ok := strings.CutPrefix(head, "Exit code "); ok && strings.TrimLeft(rest, "-0123456789") == "" {
		return t.String()
	}
	return head
}
