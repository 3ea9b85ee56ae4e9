package jsonscan

import (
	"slices"
	"testing"
)

// TestIterators walks objects and arrays, well formed and not.
func TestIterators(t *testing.T) {
	cases := []struct {
		raw     string
		keys    []string
		wantErr bool
	}{
		{`{}`, nil, false},
		{` { "a" : 1 , "b":"x\"}" ,"c":{"d":[1,{"e":"]"}]},"f":true,"g":null,"h":-1.5e3} `, []string{"a", "b", "c", "f", "g", "h"}, false},
		{`{"a":1 "b":2}`, []string{"a"}, true},
		{`{"a":}`, nil, true},
		{`{"a":tru}`, nil, true},
		{`{"a":"unterminated}`, nil, true},
		{`{"a":{"b":1}`, []string{"a"}, true},
		{`[1,2]`, nil, true},
		{``, nil, true},
	}
	for _, c := range cases {
		it := NewObjectIter([]byte(c.raw))
		var keys []string
		for it.Next() {
			keys = append(keys, string(it.Key))
		}
		if !slices.Equal(keys, c.keys) || (it.Err() != nil) != c.wantErr {
			t.Errorf("%s: keys %q err %v, want %q err %v", c.raw, keys, it.Err(), c.keys, c.wantErr)
		}
	}

	a := NewArrayIter([]byte(`[ 1, "two" ,{"three":3},[4] ,null]`))
	var vals []string
	for a.Next() {
		vals = append(vals, string(a.Val))
	}
	if want := []string{`1`, `"two"`, `{"three":3}`, `[4]`, `null`}; !slices.Equal(vals, want) || a.Err() != nil {
		t.Errorf("array values %q err %v, want %q", vals, a.Err(), want)
	}
}

// TestObjectEnd: End is past the closing brace once it is read, 0 while
// members remain and for an object that broke off; QuotedKey is the key
// as written.
func TestObjectEnd(t *testing.T) {
	raw := []byte(` {"a\"b":1} tail`)
	it := NewObjectIter(raw)
	if !it.Next() || string(it.QuotedKey) != `"a\"b"` || string(it.Key) != `a\"b` || it.End() != 0 {
		t.Fatalf("first member: %q %q, End %d", it.QuotedKey, it.Key, it.End())
	}
	if it.Next() || it.Err() != nil || string(raw[:it.End()]) != ` {"a\"b":1}` {
		t.Errorf("after the last member: End %d, Err %v", it.End(), it.Err())
	}
	broken := NewObjectIter([]byte(`{"a":1`))
	for broken.Next() {
	}
	if broken.Err() == nil || broken.End() != 0 {
		t.Errorf("a broken object: End %d, Err %v", broken.End(), broken.Err())
	}
}

// TestNextUnread: a value left unread is skipped by the next call, Rest
// starts at it, Advance trusts a nested walk's length and has Value read a
// value whose walk broke off, and End marks an array's end as an object's.
func TestNextUnread(t *testing.T) {
	raw := []byte(`{"a":{"x":1} ,"b" : [1,{"y":tru}], "c":"s","d":[2]} tail`)
	it := NewObjectIter(raw)

	if !it.NextUnread() || string(it.Key) != "a" || string(it.Rest()[:7]) != `{"x":1}` {
		t.Fatalf("a: key %q rest %q", it.Key, it.Rest())
	}
	x := NewObjectIter(it.Rest())
	for x.Next() {
	}
	if !it.Advance(x.End()) || string(it.Val) != `{"x":1}` || it.Rest() != nil {
		t.Fatalf("a: Advance(%d): Val %q", x.End(), it.Val)
	}

	if !it.NextUnread() || string(it.Key) != "b" {
		t.Fatalf("b: key %q, err %v", it.Key, it.Err())
	}
	a := NewArrayIter(it.Rest())
	if !a.NextUnread() || !a.Value() || string(a.Val) != "1" {
		t.Fatalf("b[0]: %q, err %v", a.Val, a.Err())
	}
	if !a.NextUnread() {
		t.Fatalf("b[1]: err %v", a.Err())
	}
	y := NewObjectIter(a.Rest())
	for y.Next() {
	}
	if y.Err() == nil || y.End() != 0 || !a.Advance(y.End()) || string(a.Val) != `{"y":tru}` {
		t.Fatalf("b[1], broken off: y err %v end %d, Val %q", y.Err(), y.End(), a.Val)
	}
	if a.NextUnread() || a.Err() != nil || a.End() != len(`[1,{"y":tru}]`) {
		t.Fatalf("b's end: End %d, Err %v", a.End(), a.Err())
	}
	if !it.Advance(a.End()) || string(it.Val) != `[1,{"y":tru}]` {
		t.Fatalf("b: Val %q", it.Val)
	}

	if !it.NextUnread() || string(it.Key) != "c" || !it.Value() || string(it.Val) != `"s"` {
		t.Fatalf("c: key %q Val %q", it.Key, it.Val)
	}
	if !it.NextUnread() || string(it.Key) != "d" { // left unread: skipped
		t.Fatalf("d: key %q", it.Key)
	}
	if it.NextUnread() || it.Err() != nil || string(raw[:it.End()]) != `{"a":{"x":1} ,"b" : [1,{"y":tru}], "c":"s","d":[2]}` {
		t.Fatalf("end: End %d, Err %v", it.End(), it.Err())
	}

	for _, broken := range []string{`{"a":`, `{"a":  `, `[1,`, `[`, `{"a":"open`, `{"a":[1}`} {
		o, arr := NewObjectIter([]byte(broken)), NewArrayIter([]byte(broken))
		for o.NextUnread() && o.Value() {
		}
		for arr.NextUnread() && arr.Value() {
		}
		if o.Err() == nil && arr.Err() == nil {
			t.Errorf("%s: no error", broken)
		}
	}
}
