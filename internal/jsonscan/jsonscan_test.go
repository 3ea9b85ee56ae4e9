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
