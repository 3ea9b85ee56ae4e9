package jsonstr

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote returns the string a JSON string literal (quotes included) holds,
// as encoding/json decodes it: the escapes \" \\ \/ \b \f \n \r \t and
// \uXXXX (a surrogate pair as one character, a lone surrogate as U+FFFD),
// each byte of invalid UTF-8 as U+FFFD. It reports false for anything
// encoding/json refuses: no quotes, a control byte, another escape.
func Unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	plain, quote := true, false
	for _, c := range s {
		switch {
		case c < ' ':
			return "", false
		case c == '"':
			quote = true
		case c == '\\' || c >= utf8.RuneSelf:
			plain = false
		}
	}
	if plain {
		if quote {
			return "", false
		}
		return string(s), true
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(s[i : i+n])
			}
			i += n
			continue
		}
		if c == '"' {
			return "", false // a quote not escaped ends the string early
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", false // the escape of the closing quote
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, n, ok := UnicodeEscape(s[i:])
			if !ok {
				return "", false
			}
			b.WriteRune(r)
			i += n
			continue
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// UnicodeEscape decodes the \uXXXX escape at the start of s, with the
// one after it when the two are a surrogate pair, as encoding/json does: a
// lone surrogate is U+FFFD, and the escape after it is left to be read on
// its own. It returns the character and the bytes it read; ok is false
// when s does not start with \u and four hex digits.
func UnicodeEscape(s []byte) (r rune, n int, ok bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, 0, false
	}
	if r, ok = hex4(s[2:]); !ok {
		return 0, 0, false
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, true
	}
	if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if r2, ok := hex4(s[8:]); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12, true
			}
		}
	}
	return utf8.RuneError, 6, true
}

// hex4 reads the four hex digits that start s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
