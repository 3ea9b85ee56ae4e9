package transcript

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzParseLine feeds arbitrary lines to every parser: none may panic, the
// same bytes must give the same events, and every event must keep the
// model's promises. Seeds live in testdata/fuzz/FuzzParseLine (lines taken
// from our fixtures: glued records, images, Codex twins, junk).
func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}`))
	f.Add([]byte(`{"timestamp":"2026-03-02T10:15:00Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}`))
	f.Add([]byte(`{"kind":"tool_result","exit_code":1,"text":"boom"}`))
	f.Add([]byte(`{"id":"g","type":"gemini","content":"ok","thoughts":[{"subject":"s","description":"d"}],"toolCalls":[{"id":"c","name":"run_shell_command","args":{"command":"ls"},"status":"success","result":[{"functionResponse":{"id":"c","response":{"output":"Output: x\nExit Code: 1"}}}]}]}`))
	f.Add([]byte(`{"id":"u","type":"user","content":[{"text":"<hook_context>x</hook_context>\n\nhi"}]}`))
	opts := Options{MaxText: 300, MaxMessageText: 600}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, format := range Formats {
			p1, _ := New(format, opts)
			p2, _ := New(format, opts)
			pos := Position{File: "fuzz", Path: "/x/rollout-2026-01-01T00-00-00-019c9a10-1111-7aaa-8bbb-0123456789ab.jsonl", Offset: 7}
			a := p1.ParseLine(line, pos)
			b := p2.ParseLine(line, pos)
			if len(a) != len(b) {
				t.Fatalf("%s: %d events, then %d", format, len(a), len(b))
			}
			for i := range a {
				e := &a[i]
				if e.ID == "" || e.ID != b[i].ID || !e.Kind.Valid() || e.Agent == "" {
					t.Fatalf("%s: event %d: id %q/%q kind %q agent %q", format, i, e.ID, b[i].ID, e.Kind, e.Agent)
				}
				if len(e.Text) > opts.MaxMessageText || !utf8.ValidString(e.Text) {
					t.Fatalf("%s: text of %d bytes, valid UTF-8 %v", format, len(e.Text), utf8.ValidString(e.Text))
				}
				if n := longestBase64Run(e.Text); n >= minBase64Run {
					t.Fatalf("%s: %d bytes of base64 kept", format, n)
				}
				if _, err := json.Marshal(e); err != nil {
					t.Fatalf("%s: event does not marshal: %v", format, err)
				}
			}
			st := p1.Stats()
			if st.Lines != 1 || st.TotalEvents() != len(a) {
				t.Fatalf("%s: stats %+v for %d events", format, st, len(a))
			}
			// A saved state restores exactly: the restored parser saves
			// the same bytes and reads the line again as p1 does.
			if sp, ok := p1.(Stateful); ok {
				state, err := sp.MarshalState()
				if err != nil {
					t.Fatalf("%s: MarshalState: %v", format, err)
				}
				p3, _ := New(format, opts)
				if err := p3.(Stateful).UnmarshalState(state); err != nil {
					t.Fatalf("%s: UnmarshalState: %v", format, err)
				}
				if again, _ := p3.(Stateful).MarshalState(); !bytes.Equal(again, state) {
					t.Fatalf("%s: state %s restored as %s", format, state, again)
				}
				if x, y := p1.ParseLine(line, pos), p3.ParseLine(line, pos); !reflect.DeepEqual(x, y) {
					t.Fatalf("%s: the restored parser reads the line again as %+v, the original as %+v", format, y, x)
				}
			}
		}
	})
}
