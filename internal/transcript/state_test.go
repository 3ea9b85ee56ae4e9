package transcript

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// stateFixtures are our transcripts whose lines depend on earlier lines:
// queued prompts delivered later, results naming their calls, reply pieces
// written twice, a copied result; Codex session identity, cwd, pending
// calls and event_msg / response_item twins a second apart.
var stateFixtures = []struct {
	format Format
	path   string
}{
	{FormatClaudeCode, "testdata/transcripts/claude-code/5e551011-2222-4333-8444-000000000014.jsonl"},
	{FormatCodex, "testdata/transcripts/codex/rollout-2026-03-02T10-00-00-019c9a10-aaaa-7bbb-8ccc-000000000014.jsonl"},
	// Session identity from the header, messages appended again, a
	// conversation re-sent by $set.
	{FormatGemini, fixtureDir + "/gemini/inventory/chats/session-2026-11-20T10-00-3f2a9c1e.jsonl"},
}

// parseFrom parses lines[from:] of data (split after '\n') with p and
// returns the events.
func parseFrom(p Parser, path string, lines [][]byte, offsets []int64, from, to int) []Event {
	var out []Event
	for i := from; i < to; i++ {
		out = append(out, p.ParseLine(bytes.TrimSuffix(lines[i], []byte("\n")), Position{File: "fp", Path: path, Offset: offsets[i]})...)
	}
	return out
}

// TestStateResume cuts each fixture at every line boundary: a parser reads
// the head, its state goes through MarshalState into a fresh parser (as the
// ingest pipeline does across a restart), which reads the tail. The events
// must be exactly those of one parser reading the whole file. A fresh
// parser without the state must get some of them wrong, or the fixture
// would not test anything.
func TestStateResume(t *testing.T) {
	for _, fx := range stateFixtures {
		t.Run(string(fx.format), func(t *testing.T) {
			data, err := os.ReadFile(fx.path)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("/home/dev/.sessions", filepath.Base(fx.path))
			lines := bytes.SplitAfter(data, []byte("\n"))
			lines = lines[:len(lines)-1] // after the last '\n'
			offsets := make([]int64, len(lines))
			for i := 1; i < len(lines); i++ {
				offsets[i] = offsets[i-1] + int64(len(lines[i-1]))
			}
			newParser := func() Parser {
				p, err := New(fx.format, Options{})
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			want := parseFrom(newParser(), path, lines, offsets, 0, len(lines))
			differs := 0
			for cut := 0; cut <= len(lines); cut++ {
				head := newParser()
				got := parseFrom(head, path, lines, offsets, 0, cut)
				state, err := head.(Stateful).MarshalState()
				if err != nil {
					t.Fatal(err)
				}
				tail := newParser()
				if err := tail.(Stateful).UnmarshalState(state); err != nil {
					t.Fatalf("cut %d: %v", cut, err)
				}
				got = append(got, parseFrom(tail, path, lines, offsets, cut, len(lines))...)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("cut at line %d: the resumed parser's events differ from one pass\n got %s\nwant %s", cut, summary(got), summary(want))
				}
				// The same cut with a fresh parser: what happened before
				// states were saved.
				lost := parseFrom(newParser(), path, lines, offsets, 0, cut)
				lost = append(lost, parseFrom(newParser(), path, lines, offsets, cut, len(lines))...)
				if !reflect.DeepEqual(lost, want) {
					differs++
				}
			}
			if differs < len(lines)/2 {
				t.Errorf("a fresh parser gets only %d of %d cuts wrong; the fixture hardly depends on state", differs, len(lines)+1)
			}
			t.Logf("%d lines, %d events; without the state %d of %d cuts would differ", len(lines), len(want), differs, len(lines)+1)
		})
	}
}

func summary(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = string(e.Kind) + " " + e.ID + " " + e.SessionID + " " + e.Tool
	}
	return out
}

// TestStateRejected: a state of another format or version, or not JSON,
// is refused and leaves the parser as it was.
func TestStateRejected(t *testing.T) {
	cc := NewClaudeCode(Options{})
	cc.ParseLine([]byte(`{"type":"queue-operation","operation":"enqueue","sessionId":"s","content":"go on"}`), Position{Path: "/p/s.jsonl"})
	before, err := cc.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	cx := NewCodex(Options{})
	cxState, err := cx.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{
		cxState,
		[]byte(`{"v":99,"format":"claude-code"}`),
		[]byte(`{"format":"claude-code"}`),
		[]byte(`not json`),
		nil,
	} {
		if err := cc.UnmarshalState(bad); err == nil {
			t.Errorf("UnmarshalState(%q) = nil, want an error", bad)
		}
		after, _ := cc.MarshalState()
		if !bytes.Equal(after, before) {
			t.Errorf("UnmarshalState(%q) changed the state: %s, was %s", bad, after, before)
		}
	}
	if err := cx.UnmarshalState(before); err == nil {
		t.Error("a codex parser took a claude-code state")
	}
}

// TestStateBounded: a state holding more than the parser's bounds is cut
// to them on restore.
func TestStateBounded(t *testing.T) {
	s := ccState{stateHeader: stateHeader{V: stateVersion, Format: FormatClaudeCode}, Calls: map[string]callState{}}
	for i := range maxCalls + 10 {
		id := "toolu_" + string(rune('a'+i%26)) + strconv.Itoa(i)
		s.Answered = append(s.Answered, id)
		s.Calls[id] = callState{Tool: "Bash"}
	}
	for range maxQueued + 3 {
		s.Queued = append(s.Queued, textKey("go on"))
	}
	data, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	p := NewClaudeCode(Options{})
	if err := p.UnmarshalState(data); err != nil {
		t.Fatal(err)
	}
	if len(p.calls) != maxCalls || len(p.answered) != maxCalls || len(p.answeredOrder) != maxCalls || len(p.queued) != maxQueued {
		t.Errorf("restored %d calls, %d answered (%d in order), %d queued; want %d, %d, %d", len(p.calls), len(p.answered), len(p.answeredOrder), len(p.queued), maxCalls, maxCalls, maxQueued)
	}
	if p.answeredOrder[0] != s.Answered[10] {
		t.Errorf("the oldest answered ids should go first: kept %s first", p.answeredOrder[0])
	}
}

// TestStateScrubbed: every adapter's state says whether it was saved
// through a redactor, and StateScrubbed reads it from the header alone.
func TestStateScrubbed(t *testing.T) {
	scrub := func(s string) string { return s }
	for _, f := range []Format{FormatClaudeCode, FormatCodex, FormatGemini} {
		for _, redact := range []func(string) string{nil, scrub} {
			p, err := New(f, Options{Redact: redact})
			if err != nil {
				t.Fatal(err)
			}
			state, err := p.(Stateful).MarshalState()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := StateScrubbed(state), redact != nil; got != want {
				t.Errorf("%s, redactor %v: StateScrubbed = %v for %s", f, redact != nil, got, state)
			}
		}
	}
	for _, state := range []string{"", "null", "[]", `{"v":1}`, `{"calls":{},"scrubbed":true}`, `{"v":1,"format":"codex","scrubbed":false}`, `{"v":1,`} {
		if StateScrubbed([]byte(state)) {
			t.Errorf("StateScrubbed(%q) = true", state)
		}
	}
}

// TestStateCWDScrubbed: a Codex and a Gemini state keep the session's
// working directory, written to disk like a command: through the redactor.
func TestStateCWDScrubbed(t *testing.T) {
	redact := func(s string) string { return strings.ReplaceAll(s, "/home/", "/[R]/") }
	for _, fx := range stateFixtures[1:] {
		data, err := os.ReadFile(fx.path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(fx.format, Options{Redact: redact})
		if err != nil {
			t.Fatal(err)
		}
		var cwd string
		for line := range bytes.Lines(data) {
			for _, e := range p.ParseLine(line, Position{Path: fx.path}) {
				cwd = cmp.Or(e.CWD, cwd)
			}
		}
		if !strings.Contains(cwd, "/home/") {
			t.Fatalf("%s: the fixture's cwd %q has nothing to scrub", fx.format, cwd)
		}
		state, err := p.(Stateful).MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(state), cwd) || !strings.Contains(string(state), redact(cwd)) {
			t.Errorf("%s: the state keeps the cwd %q unscrubbed: %s", fx.format, cwd, state)
		}
	}
}
