// Package jsonstr quotes strings exactly as encoding/json does, without
// reflection: the store's events (internal/transcript) and the exports of
// medallions (internal/medallion) are written by hand, fast, and must stay
// byte for byte what encoding/json writes, since what older builds wrote
// with encoding/json sits beside them.
package jsonstr

import (
	"math/bits"
	"unicode/utf8"
)

// Append appends s quoted as encoding/json quotes a string: \" \\ \b \f
// \n \r \t, other control bytes as \u00XX, each byte of invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped (they end a line in JavaScript). With
// html it also escapes <, > and & (\u003c, \u003e, \u0026), as
// json.Marshal does; without, as a json.Encoder with SetEscapeHTML(false).
func Append[S ~string | ~[]byte](dst []byte, s S, html bool) []byte {
	safe := &plainSafe
	if html {
		safe = &htmlSafe
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most of a text needs no escape: skip it eight bytes at a time,
		// to the first byte that may.
		if len(s)-i >= 8 {
			m := special(uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
				uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56, html)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else if safe[s[i]] {
			i++
			continue
		}
		if c := s[i]; c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // the other controls, and <, > and & with html
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		// At most four bytes: converted on the stack for a []byte.
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// plainSafe and htmlSafe mark the bytes encoding/json copies into a
// string as they are, without and with HTML escaping: ASCII but the
// controls, '"' and '\\' (and '<', '>', '&'). Bytes from 0x80 are not
// marked: they need a look at their UTF-8.
var plainSafe, htmlSafe = func() (plain, html [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return plain, html
}()

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// special flags, by the high bit of its byte, each of the eight bytes of w
// (little-endian) that Append does not copy as it is: a byte with the high
// bit set (not ASCII), below 0x20 (subtracting 0x20 borrows), or '"' or
// '\\' (and with html '<', '>' or '&'): xor with it leaves a zero, from
// which subtracting 1 borrows. A borrow can flag a byte above a flagged
// one wrongly, never one below, so the lowest flag is exact.
func special(w uint64, html bool) uint64 {
	q, bs := w^('"'*lsbs), w^('\\'*lsbs)
	m := w | (w - ' '*lsbs) | (q-lsbs)&^q | (bs-lsbs)&^bs
	if html {
		lt, gt, amp := w^('<'*lsbs), w^('>'*lsbs), w^('&'*lsbs)
		m |= (lt-lsbs)&^lt | (gt-lsbs)&^gt | (amp-lsbs)&^amp
	}
	return m & msbs
}
