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

// A nested value is read twice when its container's walk skips it to hand
// it out whole (Next, Val) and the reader then walks it: a tool result's
// string, four levels down a Claude Code record, was scanned at every
// level. NextUnread leaves a value unread instead: the reader walks it from
// Rest and tells the container where it ended (Advance), or has it skipped
// (Value). A walk that broke off hands its value back with 0, and it is
// skipped as Next would have: what a container accepts does not change.
// Walk in place only a value that starts with '{', '[' or '"', and set a
// field of your own for it only once Advance says it was read: a nested
// walk may break off where SkipValue would not (a bad literal, a missing
// comma inside), and the reader then keeps what it read, as it did walking
// the Val Next handed out; where SkipValue fails too, the value is open to
// the end of b (a string or bracket never closed), and so is every value
// around it: the outermost walk fails as it did.

// walk is what ObjectIter and ArrayIter share: the reading of the items of
// one container, in turn.
type walk struct {
	b      []byte // nil once the container is closed
	i      int    // where the next item or the closing byte is looked for; the unread value's start
	Val    []byte
	first  bool
	unread bool // NextUnread stopped at a value (at i) not read yet
	err    error
	end    int // past the closing byte, once read
}

// open starts the walk of the container b holds (white space around it
// allowed), which opens with the byte c.
func open(b []byte, c byte) walk {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != c {
		return walk{err: ErrSyntax}
	}
	return walk{b: b, i: i + 1, first: true}
}

// Err is why the walk stopped before the container's end, nil if it did
// not.
func (w *walk) Err() error { return w.err }

// End is the index in b just past the container's closing byte once it
// has been read, 0 before and when the container broke off (Err).
func (w *walk) End() int { return w.end }

// item moves to the start of the next item, past its comma, and reports
// whether there is one; a value left unread is skipped first.
func (w *walk) item(close byte) bool {
	if w.unread && !w.Value() {
		return false
	}
	if w.err != nil || w.b == nil {
		return false
	}
	b := w.b
	i := SkipSpace(b, w.i)
	if i < len(b) && b[i] == close {
		w.b, w.end = nil, i+1
		return false
	}
	if !w.first {
		if i >= len(b) || b[i] != ',' {
			w.err = ErrSyntax
			return false
		}
		i = SkipSpace(b, i+1)
	}
	w.first = false
	w.i = i
	return true
}

// stopAt leaves the walk at the value starting at b[i], unread.
func (w *walk) stopAt(i int) bool {
	if i >= len(w.b) { // where SkipValue fails
		w.err = ErrSyntax
		return false
	}
	w.i, w.unread = i, true
	return true
}

// Value reads the value NextUnread stopped at into Val, as Next does, and
// reports whether it is well formed; when it is not, the walk is over
// (Err). After a value was read it only reports whether the walk is
// still on.
func (w *walk) Value() bool {
	if !w.unread {
		return w.err == nil
	}
	w.unread = false
	end, err := SkipValue(w.b, w.i)
	if err != nil {
		w.err = err
		return false
	}
	w.Val, w.i = w.b[w.i:end], end
	return true
}

// Rest is the value NextUnread stopped at (never empty) and all that
// follows it in b, for a nested walk; nil once the value is read.
func (w *walk) Rest() []byte {
	if !w.unread {
		return nil
	}
	return w.b[w.i:]
}

// Advance moves past the value NextUnread stopped at, which a walk of
// Rest found to be n bytes long (the nested iterator's End); n = 0, for a
// walk that broke off or did not happen, has Value read it instead. Val is
// the value either way; Advance reports what Value does.
func (w *walk) Advance(n int) bool {
	if n <= 0 || !w.unread {
		return w.Value()
	}
	checkAdvance(w.b, w.i, n)
	w.unread = false
	w.Val, w.i = w.b[w.i:w.i+n], w.i+n
	return true
}

// ObjectIter walks the fields of one JSON object:
//
//	it := NewObjectIter(raw)
//	for it.Next() {
//		switch string(it.Key) { … it.Val … }
//	}
//
// Key is the raw key without quotes (the keys transcripts are read by have
// no escapes), QuotedKey the same with them, for a reader that unquotes it
// (jsonstr.Unquote), and Val the raw value. A value that is not an object
// yields no fields; Err tells an object that ended from one that broke off,
// and End is past its closing brace. NextUnread, Rest, Advance and Value
// read a nested value once (see above).
type ObjectIter struct {
	walk
	Key, QuotedKey []byte
}

// NewObjectIter walks the object b holds (white space around it allowed).
func NewObjectIter(b []byte) ObjectIter {
	return ObjectIter{walk: open(b, '{')}
}

// Next moves to the next member, and reports whether there is one.
func (it *ObjectIter) Next() bool {
	return it.NextUnread() && it.Value()
}

// NextUnread moves to the next member and reads its key, leaving the value
// unread: the caller reads it with Value, or walks Rest and calls Advance.
// A value left unread is skipped by the next call.
func (it *ObjectIter) NextUnread() bool {
	if !it.item('}') {
		return false
	}
	b, i := it.b, it.i
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
	return it.stopAt(SkipSpace(b, i+1))
}

// ArrayIter walks the elements of one JSON array; Val is each raw element.
// A value that is not an array yields no elements. Its End, NextUnread,
// Rest, Advance and Value are ObjectIter's.
type ArrayIter struct {
	walk
}

// NewArrayIter walks the array b holds (white space around it allowed).
func NewArrayIter(b []byte) ArrayIter {
	return ArrayIter{walk: open(b, '[')}
}

// Next moves to the next element, and reports whether there is one.
func (it *ArrayIter) Next() bool {
	return it.NextUnread() && it.Value()
}

// NextUnread moves to the next element, leaving it unread.
func (it *ArrayIter) NextUnread() bool {
	return it.item(']') && it.stopAt(it.i)
}
