package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// unquoteCases are literals encoding/json takes and refuses.
var unquoteCases = []string{
	`""`, `"plain"`, `"/home/me/my repo"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\uD83D\uDE00"`,
	`"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, "\"caf\xc3\xa9\"",
	"\"bad \xff utf8 \xc3\"", `"\x41"`, `"\u12"`, `"\u12g4"`, `"tab	inside"`, `"\"`, `"`, `abc`, `'x'`,
	`"a"b"`, "\"\x00\"", `"\`, `"\\"`,
}

func TestUnquoteIsEncodingJSON(t *testing.T) {
	for _, c := range unquoteCases {
		checkUnquote(t, []byte(c))
	}
}

func FuzzUnquote(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkUnquote(t, raw)
	})
}

// checkUnquote holds Unquote to encoding/json on raw.
func checkUnquote(t *testing.T, raw []byte) {
	t.Helper()
	var want string
	wantErr := json.Unmarshal(raw, &want)
	got, ok := Unquote(raw)
	if wantErr == nil && (raw[0] != '"' || len(bytes.TrimSpace(raw)) != len(raw)) {
		// null, or whitespace around a string: not a bare literal.
		return
	}
	if ok != (wantErr == nil) || got != want {
		t.Errorf("Unquote(%q) = %q, %v; encoding/json: %q, %v", raw, got, ok, want, wantErr)
	}
}
