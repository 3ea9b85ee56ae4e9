package jsonscan

import (
	"fmt"
	"strings"
	"testing"
)

// The reference for NextUnread: ObjectIter.Next and ArrayIter.Next as they
// were before it (commit 5a14441), every value skipped whole before it was
// handed out. Kept frozen here, not shared with the package's code.

type oldObjectIter struct {
	b        []byte
	i        int
	Key, Val []byte
	first    bool
	err      error
	end      int
}

func newOldObjectIter(b []byte) oldObjectIter {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return oldObjectIter{err: ErrSyntax}
	}
	return oldObjectIter{b: b, i: i + 1, first: true}
}

func (it *oldObjectIter) Next() bool {
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

type oldArrayIter struct {
	b     []byte
	i     int
	Val   []byte
	first bool
	err   error
}

func newOldArrayIter(b []byte) oldArrayIter {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return oldArrayIter{err: ErrSyntax}
	}
	return oldArrayIter{b: b, i: i + 1, first: true}
}

func (it *oldArrayIter) Next() bool {
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

// walkOld writes what a reader reads of the value v walking it the old
// way: each member skipped, then walked if it is an object or an array.
func walkOld(tr *strings.Builder, v []byte) {
	switch v[0] {
	case '{':
		it := newOldObjectIter(v)
		tr.WriteString("{")
		for it.Next() {
			fmt.Fprintf(tr, "%q:", it.Key)
			walkOld(tr, it.Val)
		}
		fmt.Fprintf(tr, "}%v,%d ", it.err != nil, it.end)
	case '[':
		it := newOldArrayIter(v)
		tr.WriteString("[")
		for it.Next() {
			walkOld(tr, it.Val)
		}
		fmt.Fprintf(tr, "]%v ", it.err != nil)
	default:
		fmt.Fprintf(tr, "%q ", v)
	}
}

// walkNext is walkOld with the package's Next.
func walkNext(tr *strings.Builder, v []byte) {
	switch v[0] {
	case '{':
		it := NewObjectIter(v)
		tr.WriteString("{")
		for it.Next() {
			fmt.Fprintf(tr, "%q:", it.Key)
			walkNext(tr, it.Val)
		}
		fmt.Fprintf(tr, "}%v,%d ", it.Err() != nil, it.End())
	case '[':
		it := NewArrayIter(v)
		tr.WriteString("[")
		for it.Next() {
			walkNext(tr, it.Val)
		}
		fmt.Fprintf(tr, "]%v ", it.Err() != nil)
	default:
		fmt.Fprintf(tr, "%q ", v)
	}
}

// walkInPlace writes what a reader reads of the value at the start of b
// walking it in place (NextUnread, Rest, Advance), as the Claude Code
// adapter does, and returns its length, 0 if the walk broke off or the
// value is a scalar other than a string. What is read of a value that
// does not end is dropped, as the old walk never got to it.
func walkInPlace(tr *strings.Builder, b []byte) int {
	switch b[0] {
	case '"':
		end, err := SkipString(b, 0)
		if err != nil {
			return 0
		}
		fmt.Fprintf(tr, "%q ", b[:end])
		return end
	case '{':
		it := NewObjectIter(b)
		tr.WriteString("{")
		for it.NextUnread() {
			var sub strings.Builder
			fmt.Fprintf(&sub, "%q:", it.Key)
			if !walkMember(tr, &sub, &it.walk) {
				break
			}
		}
		fmt.Fprintf(tr, "}%v,%d ", it.Err() != nil, it.End())
		return it.End()
	case '[':
		it := NewArrayIter(b)
		tr.WriteString("[")
		for it.NextUnread() {
			var sub strings.Builder
			if !walkMember(tr, &sub, &it.walk) {
				break
			}
		}
		fmt.Fprintf(tr, "]%v ", it.Err() != nil)
		return it.End()
	}
	return 0
}

// walkMember walks the unread value w stopped at into sub, and adds sub
// to tr once the value is known to end.
func walkMember(tr, sub *strings.Builder, w *walk) bool {
	n := walkInPlace(sub, w.Rest())
	if !w.Advance(n) {
		return false
	}
	if n == 0 && w.Val[0] != '{' && w.Val[0] != '[' {
		fmt.Fprintf(sub, "%q ", w.Val)
	}
	tr.WriteString(sub.String())
	return true
}

// checkWalks holds the in-place walk and Next to the old walk over b: the
// same reading of any value that ends, and for the in-place walk, a length
// only where SkipValue finds that one.
func checkWalks(t *testing.T, b []byte) {
	if len(b) == 0 {
		return
	}
	var in strings.Builder
	n := walkInPlace(&in, b)
	end, err := SkipValue(b, 0)
	if n > 0 && (err != nil || end != n) {
		t.Fatalf("%q: in place the value is %d bytes, SkipValue says %d, %v", b, n, end, err)
	}
	if err != nil {
		return
	}
	var old, next strings.Builder
	walkOld(&old, b[:end])
	walkNext(&next, b[:end])
	if b[0] == '{' || b[0] == '[' || b[0] == '"' {
		if in.String() != old.String() {
			t.Fatalf("%q:\nin place %s\nold      %s", b, in.String(), old.String())
		}
	}
	if next.String() != old.String() {
		t.Fatalf("%q:\nNext %s\nold  %s", b, next.String(), old.String())
	}
}

var walkSeeds = []string{
	`{}`, `[]`, `"x"`, `{"a":1}`,
	` { "a" : 1 , "b":"x\"}" ,"c":{"d":[1,{"e":"]"}]},"f":true,"g":null,"h":-1.5e3} `,
	`{"a":1 "b":2}`, `{"a":}`, `{"a":tru}`, `{"a":"unterminated}`, `{"a":{"b":1}`,
	`{"a":[1}]}`, `{"a":{"b":tru},"c":2}`, `{"a":[{"b" 1}],"c":[1,}`, `[1,[2,{"x":[3]}],"s\\"]`,
	`{"m":{"content":[{"type":"tool_result","content":"long\n\"text\""}]},"t":{"stdout":"x"}}`,
	`{"a":{}}{"b":1}`, `[`, `[1,`, `{"a":`, `{"a": `, `{"a":[ `, `{"a":[}]`, `{"a":1,}`, `[1,]`, `{"a":"\\\\"}`, `{"a":{"b":[1,2}}`,
}

// TestWalkInPlace runs checkWalks over hand-picked values, well formed and
// not.
func TestWalkInPlace(t *testing.T) {
	for _, s := range walkSeeds {
		checkWalks(t, []byte(s))
	}
}

// FuzzWalkInPlace is TestWalkInPlace over any bytes.
func FuzzWalkInPlace(f *testing.F) {
	for _, s := range walkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkWalks)
}
