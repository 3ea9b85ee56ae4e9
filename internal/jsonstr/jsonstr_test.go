package jsonstr

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"testing"
	"unicode/utf8"
)

// quoted is what encoding/json writes for s, with or without HTML
// escaping.
func quoted(t testing.TB, s string, html bool) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestEveryByte: every byte value at every place of a string, either side
// of each eight-byte boundary, is quoted as encoding/json quotes it, for
// a string and a byte slice, with and without HTML escaping.
func TestEveryByte(t *testing.T) {
	plain := []byte("abcdefghijklmnopqrstu")
	for _, html := range []bool{false, true} {
		for c := range 256 {
			for at := range len(plain) {
				s := append([]byte(nil), plain...)
				s[at] = byte(c)
				for _, in := range [][]byte{s, s[at:], s[:at+1]} {
					want := quoted(t, string(in), html)
					if got := Append(nil, string(in), html); !bytes.Equal(got, want) {
						t.Fatalf("html %v, byte %#x at %d of %q: %s, want %s", html, c, at, in, got, want)
					}
					if got := Append([]byte("x"), in, html); !bytes.Equal(got[1:], want) {
						t.Fatalf("html %v, byte %#x at %d of %q as bytes: %s, want %s", html, c, at, in, got[1:], want)
					}
				}
			}
		}
	}
}

// TestTexts: longer texts mixing escapes, runes of every length, invalid
// and cut UTF-8, U+2028 and U+2029 and U+FFFD itself.
func TestTexts(t *testing.T) {
	pieces := []string{"plain text ", "\"", "\\", "\n\t\r", "\x00\x1f\x7f", "<a href=\"x\">&amp;</a>", "é", "日本", "😀",
		"\u2028\u2029", "\ufffd", "\xff", "\xe6\x97", "\xed\xa0\x80", strconv.Itoa(12345), "        "}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		for _, html := range []bool{false, true} {
			want := quoted(t, string(b), html)
			if got := Append(nil, b, html); !bytes.Equal(got, want) {
				t.Fatalf("html %v, %q: %s, want %s", html, b, got, want)
			}
		}
	}
}

// TestSpecial checks special's promise against a byte-by-byte reading:
// no flag on a word of plain bytes, and the lowest flag on the first byte
// that is not. Words mix plain bytes with every byte value in every
// position.
func TestSpecial(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, html := range []bool{false, true} {
		safe := &plainSafe
		if html {
			safe = &htmlSafe
		}
		for n := range 1 << 19 {
			var w [8]byte
			for i := range w {
				w[i] = byte(' ' + rng.IntN(utf8.RuneSelf-' '))
				if !safe[w[i]] {
					w[i] = 'x'
				}
				if rng.IntN(8) == 0 {
					w[i] = byte(rng.UintN(256))
				}
			}
			if n < 256*8 { // each byte value in each position at least once
				w[n/256] = byte(n)
			}
			want := -1
			for i, c := range w {
				if !safe[c] {
					want = i
					break
				}
			}
			m := special(uint64(w[0])|uint64(w[1])<<8|uint64(w[2])<<16|uint64(w[3])<<24|
				uint64(w[4])<<32|uint64(w[5])<<40|uint64(w[6])<<48|uint64(w[7])<<56, html)
			got := -1
			if m != 0 {
				got = bits.TrailingZeros64(m) >> 3
			}
			if got != want {
				t.Fatalf("html %v, %q: first special byte %d, want %d", html, w, got, want)
			}
		}
	}
}

// TestNoAllocs: with room in dst, Append allocates nothing, a byte slice
// with runes beyond ASCII included.
func TestNoAllocs(t *testing.T) {
	in := []byte("a text with é, 日本 and \u2028, < and >, \"quoted\"\n")
	dst := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { _ = Append(dst[:0], in, true) }); n != 0 {
		t.Errorf("Append allocated %.0f times", n)
	}
	str := string(in)
	if n := testing.AllocsPerRun(100, func() { _ = Append(dst[:0], str, false) }); n != 0 {
		t.Errorf("Append of a string allocated %.0f times", n)
	}
}

// BenchmarkAppend times texts as events and medallions hold them.
func BenchmarkAppend(b *testing.B) {
	texts := []string{"0b5c6f2e-3c1d-4b7a-9f1e-2a6d8c4e9b10",
		"invariant text number 17 that the user stated in a long sentence with code and a path/to/file.go",
		"func main() {\n\tfmt.Println(\"hello\")\n}\n// a comment with <html> & \"quotes\"\n"}
	for _, s := range texts {
		b.Run(strconv.Itoa(len(s)), func(b *testing.B) {
			dst := make([]byte, 0, 4*len(s))
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				dst = Append(dst[:0], s, false)
			}
		})
	}
}
