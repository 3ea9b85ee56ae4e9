package curate

import (
	"math/bits"
	"strings"
)

// wordFinder finds any of a few words in a text in one pass over it.
// Tier 0 asks every tool output whether it holds one of a handful of words
// (failure words, git's refusals, an edit's misses), and a backfill reads
// every output the agents read: one strings.Index pass per word read each
// output that many times, and the case-insensitive sets read a lowered
// copy of it besides.
//
// It is Baeza-Yates and Gonnet's shift-and search for all the words at
// once: a bit per byte of each word's head (its first bytes, as many as
// the 64 bits of the state hold for all), set while the text read so far
// ends with the head up to that byte. A head found whole is a candidate,
// compared with its whole word.
type wordFinder struct {
	words []string
	// fold compares ASCII letters case-insensitively: the words are then
	// lower-case, and a byte of the text matches a word's letter when it
	// is that letter or its upper case. Other bytes match only
	// themselves, as in a text whose ASCII letters alone were lowered.
	fold bool
	// mask holds, for each byte, the bits of the head positions it
	// matches.
	mask [256]uint64
	// first and last are the bits of the heads' first and last bytes.
	first, last uint64
	// heads[b] is the word whose head ends at bit b, and the head's
	// length.
	heads [64]struct{ word, n int }
}

// newWordFinder returns the finder of words: at most 64, each of one byte
// at least and without a newline; with fold, lower-case ASCII matched in
// any case.
func newWordFinder(fold bool, words ...string) *wordFinder {
	if len(words) == 0 || len(words) > 64 {
		panic("wordFinder: no words, or more than 64")
	}
	f := &wordFinder{words: words, fold: fold}
	total := 0
	for _, w := range words {
		total += len(w)
	}
	// Each head is its whole word when all fit, else an equal share of
	// the 64 bits.
	headLen := 64
	if total > 64 {
		headLen = 64 / len(words)
	}
	bit := 0
	for i, w := range words {
		if w == "" || strings.IndexByte(w, '\n') >= 0 {
			panic("wordFinder: an empty word or one with a newline: " + w)
		}
		n := min(len(w), headLen)
		f.first |= 1 << bit
		for j := range n {
			c := w[j]
			f.mask[c] |= 1 << (bit + j)
			if fold && 'a' <= c && c <= 'z' {
				f.mask[c-'a'+'A'] |= 1 << (bit + j)
			}
		}
		bit += n
		f.last |= 1 << (bit - 1)
		f.heads[bit-1] = struct{ word, n int }{i, n}
	}
	return f
}

// index returns where a word of the set starts in s, or -1: the word whose
// head ends first in s. A word holds no newline, so it is on the first
// line of s that holds one.
//
// Each byte's step waits for the one before it, so a long s is searched
// in two halves side by side, which a CPU runs at once: the first half's
// heads end before the second's. The second half starts a head's length
// early, so as to see each head that ends in it whole.
func (f *wordFinder) index(s string) int {
	const overlap = 64 - 1 // the longest head, but for its last byte
	if len(s) < 8*overlap {
		return f.scan(s, 0, 0)
	}
	mid := len(s) / 2
	a, b := s[:mid], s[mid-overlap:]
	var da, db uint64
	second := -1 // the second half's first word
	for i := 0; i < len(a); i++ {
		da = (da<<1 | f.first) & f.mask[a[i]]
		db = (db<<1 | f.first) & f.mask[b[i]]
		if (da|db)&f.last == 0 {
			continue
		}
		if start := f.word(s, i, da&f.last); start >= 0 {
			return start
		}
		if second < 0 && i >= overlap {
			second = f.word(s, mid-overlap+i, db&f.last)
		}
	}
	if second >= 0 {
		return second
	}
	return f.scan(s, mid-overlap+len(a), db)
}

// scan is index of s from byte from on, with d the state after the bytes
// before it, one byte after the other.
func (f *wordFinder) scan(s string, from int, d uint64) int {
	for i := from; i < len(s); i++ {
		d = (d<<1 | f.first) & f.mask[s[i]]
		if d&f.last == 0 {
			continue
		}
		if start := f.word(s, i, d&f.last); start >= 0 {
			return start
		}
	}
	return -1
}

// word returns where the first word whose head ends at byte i of s (the
// bits ends of the state) starts, when the word is there whole; else -1.
func (f *wordFinder) word(s string, i int, ends uint64) int {
	for ; ends != 0; ends &= ends - 1 {
		h := f.heads[bits.TrailingZeros64(ends)]
		if start := i + 1 - h.n; f.hasPrefix(s[start:], f.words[h.word]) {
			return start
		}
	}
	return -1
}

// in reports whether s holds a word of the set.
func (f *wordFinder) in(s string) bool { return f.index(s) >= 0 }

// hasPrefix reports whether s starts with w, as the set compares.
func (f *wordFinder) hasPrefix(s, w string) bool {
	if !f.fold {
		return strings.HasPrefix(s, w)
	}
	return hasPrefixFold(s, w)
}

// hasPrefixFold reports whether s, its ASCII letters lowered, starts with
// w.
func hasPrefixFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for i := range len(w) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// lowersToASCII reports whether text holds one of the two letters beyond
// ASCII that strings.ToLower lowers to an ASCII one: the dotted capital I
// (to i) and the Kelvin sign (to k). A folding wordFinder finds its words
// in any other text as it would in the text lowered by strings.ToLower,
// since lowering maps no other letter into ASCII or out of it.
func lowersToASCII(text string) bool {
	// IndexByte first: it is many times faster than Contains over the
	// long texts without the letter's lead byte that most outputs are.
	// The Kelvin sign's lead byte is that of arrows, box drawing and
	// curly quotes, common in outputs: it is found through its next byte.
	return strings.IndexByte(text, 0xc4) >= 0 && strings.Contains(text, "\u0130") ||
		containsVia(text, "\u212a", 1)
}

// inLower reports whether strings.ToLower(text) holds a word of f, a
// folding finder, without lowering text when the fold alone gives the
// same answer (lowersToASCII).
func (f *wordFinder) inLower(text string) bool {
	if lowersToASCII(text) {
		text = strings.ToLower(text)
	}
	return f.in(text)
}
