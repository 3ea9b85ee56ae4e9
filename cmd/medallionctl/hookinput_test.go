package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// hookInputs are inputs an agent sends, and some no agent should.
var hookInputs = []string{
	`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/home/me/repo","hook_event_name":"SessionStart","source":"startup"}`,
	` {"cwd" : "/a b/\u00e9\"q\"" , "x": {"cwd": "/nested"}, "y": [1, "}", {"z": null}]}` + "\n",
	`{"CWD":"/upper"}`, `{"Cwd":"/a","cwd":"/b"}`, `{"cwd":"/a","cwd":null}`, `{"cwd":null}`, `{}`, `{"cwd":5}`,
	`{"cwd":"/a\ud83d"}`, `{"cwd":"/a\q"}`, `{"cwd":"/a"}trailing`, `{"cwd":"/a"`, `[{"cwd":"/a"}]`, `null`, ``, `   `,
	`{"cwd":"/a",}`, `{,"cwd":"/a"}`, `{"cwd" "/a"}`, `{"a":tru,"cwd":"/x"}`, `{"k\u0065y":1,"c\u0077d":"/esc"}`,
	`{"cwd":"/a"}{"cwd":"/b"}`, "{\"cwd\":\"/ctl\x01\"}", `{"source":"resume","cwd":"/r","extra":{"deep":[[[{}]]]}}`,
}

func TestReadHookCWD(t *testing.T) {
	for _, in := range hookInputs {
		checkHookCWD(t, []byte(in))
	}
	// The agent may keep stdin open: the object's end is enough, however
	// it arrives.
	in := hookInputs[0]
	got, err := readHookCWD(iotest.OneByteReader(io.MultiReader(strings.NewReader(in), blockingReader{t})))
	if err != nil || got != "/home/me/repo" {
		t.Errorf("one byte at a time, stdin left open: %q, %v", got, err)
	}
	big := `{"pad":"` + strings.Repeat("x", maxHookInput) + `","cwd":"/a"}`
	if _, err := readHookCWD(strings.NewReader(big)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an input over %d bytes: %v", maxHookInput, err)
	}
}

// blockingReader fails the test if it is read: the input before it should
// have been enough.
type blockingReader struct{ t *testing.T }

func (b blockingReader) Read([]byte) (int, error) {
	b.t.Error("read past the end of the hook's JSON object")
	return 0, io.EOF
}

// FuzzReadHookCWD holds readHookCWD to encoding/json decoding the input
// into the struct the hook used to: the same cwd wherever encoding/json
// takes the input. Where it refuses it, readHookCWD may be more lenient
// (it does not check members other than cwd), and must not panic.
func FuzzReadHookCWD(f *testing.F) {
	for _, in := range hookInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 4096 {
			return
		}
		checkHookCWD(t, in)
	})
}

func checkHookCWD(t *testing.T, in []byte) {
	t.Helper()
	var want struct {
		CWD string `json:"cwd"`
	}
	wantErr := json.NewDecoder(bytes.NewReader(in)).Decode(&want)
	got, err := readHookCWD(bytes.NewReader(in))
	if wantErr != nil {
		return
	}
	if bytes.HasPrefix(bytes.TrimLeft(in, " \t\r\n"), []byte("null")) {
		// A top-level null decodes into nothing; the hook needs an object.
		return
	}
	if err != nil || got != want.CWD {
		t.Errorf("readHookCWD(%q) = %q, %v; encoding/json: %q", in, got, err, want.CWD)
	}
}
