// Package jsonscan is a small, lenient JSON reader for hot paths: it finds
// where values end and walks the members of an object or the elements of
// an array, leaving what it does not need unread.
package jsonscan

import (
	"bytes"
	"errors"
	"strings"
)

// Why not encoding/json: a transcript line is mostly one large string (a tool output, a file, a
// base64 image) of which we keep a bounded slice. encoding/json validates
// the whole line and then rescans every nested value it hands to an
// Unmarshaler, a state-machine step per byte each time; the Claude Code
// adapter instead walks a record with these iterators, which find the end of
// a string with bytes.IndexByte and only unquote the strings it keeps. It is
// lenient: it checks structure (quotes, brackets, literals), not every
// escape or number, which is all a best-effort transcript reader needs.
// The SessionStart hook reads its input's cwd with it too
// (cmd/medallionctl), where encoding/json's first decode in a process cost
// more than the rest of reading.

// ErrSyntax is the one error of the package: the bytes are not the JSON
// they should be.
var ErrSyntax = errors.New("malformed JSON")

// SkipSpace returns the index of the first byte from b[i] on that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index just past the string whose opening quote is
// at b[i].
func SkipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, ErrSyntax
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

// SkipValue returns the index just past the JSON value starting at b[i].
func SkipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch c := b[i]; {
	case c == '"':
		return SkipString(b, i)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := SkipString(b, j)
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
		return 0, ErrSyntax
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
	return 0, ErrSyntax
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return 0, ErrSyntax
	}
	return i + len(lit), nil
}

// ObjectIter walks the fields of one JSON object:
//
//	it := NewObjectIter(raw)
//	for it.next() {
//		switch string(it.Key) { … it.Val … }
//	}
//
// Key is the raw key without quotes (the keys transcripts are read by have
// no escapes), QuotedKey the same with them, for a reader that unquotes it
// (jsonstr.Unquote), and Val the raw value. A value that is not an object
// yields no fields; Err tells an object that ended from one that broke off.
type ObjectIter struct {
	b                   []byte
	i                   int
	Key, QuotedKey, Val []byte
	first               bool
	err                 error
	end                 int // past the closing brace, once read
}

// NewObjectIter walks the object b holds (white space around it allowed).
func NewObjectIter(b []byte) ObjectIter {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ObjectIter{err: ErrSyntax}
	}
	return ObjectIter{b: b, i: i + 1, first: true}
}

// Err is why Next stopped before the object's end, nil if it did not.
func (it *ObjectIter) Err() error { return it.err }

// End is the index in b just past the object's closing brace once Next
// has read it, 0 before and when the object broke off (Err).
func (it *ObjectIter) End() int { return it.end }

// Next moves to the next member, and reports whether there is one.
func (it *ObjectIter) Next() bool {
	if it.err != nil || it.b == nil {
		return false
	}
	b := it.b
	i := SkipSpace(b, it.i)
	if i < len(b) && b[i] == '}' {
		it.b, it.end = nil, i+1
		return false
	}
	if !it.first {
		if i >= len(b) || b[i] != ',' {
			it.err = ErrSyntax
			return false
		}
		i = SkipSpace(b, i+1)
	}
	it.first = false
	if i >= len(b) || b[i] != '"' {
		it.err = ErrSyntax
		return false
	}
	end, err := SkipString(b, i)
	if err != nil {
		it.err = err
		return false
	}
	it.QuotedKey = b[i:end]
	it.Key = b[i+1 : end-1]
	i = SkipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		it.err = ErrSyntax
		return false
	}
	i = SkipSpace(b, i+1)
	end, err = SkipValue(b, i)
	if err != nil {
		it.err = err
		return false
	}
	it.Val, it.i = b[i:end], end
	return true
}

// ArrayIter walks the elements of one JSON array; val is each raw element.
// A value that is not an array yields no elements.
type ArrayIter struct {
	b     []byte
	i     int
	Val   []byte
	first bool
	err   error
}

// NewArrayIter walks the array b holds (white space around it allowed).
func NewArrayIter(b []byte) ArrayIter {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return ArrayIter{err: ErrSyntax}
	}
	return ArrayIter{b: b, i: i + 1, first: true}
}

// Err is why Next stopped before the array's end, nil if it did not.
func (it *ArrayIter) Err() error { return it.err }

// Next moves to the next element, and reports whether there is one.
func (it *ArrayIter) Next() bool {
	if it.err != nil || it.b == nil {
		return false
	}
	b := it.b
	i := SkipSpace(b, it.i)
	if i < len(b) && b[i] == ']' {
		it.b = nil
		return false
	}
	if !it.first {
		if i >= len(b) || b[i] != ',' {
			it.err = ErrSyntax
			return false
		}
		i = SkipSpace(b, i+1)
	}
	it.first = false
	end, err := SkipValue(b, i)
	if err != nil {
		it.err = err
		return false
	}
	it.Val, it.i = b[i:end], end
	return true
}
