package transcript

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestJSONString compares the scanner's unquoting with encoding/json's.
func TestJSONString(t *testing.T) {
	for _, raw := range []string{
		`""`, `"plain"`, `"tab\tnew\nline\r\\ \"quoted\" \/ \b\f"`,
		`"caf\u00e9 \u2713"`, `"emoji \ud83d\ude00"`, `"lone \ud83d surrogate"`,
		`"low \ude00 first"`, `"bad \u12g4 hex"`, "\"raw \xff byte\"", `"ends with \\"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			want = "<invalid>"
		}
		got := jsonString([]byte(raw))
		if want != "<invalid>" && got != want {
			t.Errorf("jsonString(%s) = %q, want %q", raw, got, want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("jsonString(%s) = %q: invalid UTF-8", raw, got)
		}
	}
	for _, raw := range []string{`123`, `null`, `{"a":1}`, `[]`} {
		if got := jsonString([]byte(raw)); got != "" {
			t.Errorf("jsonString(%s) = %q, want empty", raw, got)
		}
	}
}

// TestEachRecord checks how a line is split into records and what is
// counted when it cannot be.
func TestEachRecord(t *testing.T) {
	cases := []struct {
		line    string
		records []string
		skipped map[string]int
	}{
		{`{"a":1}`, []string{`{"a":1}`}, nil},
		{"  {\"a\":1}\r", []string{`{"a":1}`}, nil},
		{`{"a":1}{"b":2}`, []string{`{"a":1}`, `{"b":2}`}, nil},
		{`{"a":1} {"b":"}{"}`, []string{`{"a":1}`, `{"b":"}{"}`}, nil},
		{`{"a":1}garbage`, []string{`{"a":1}`}, map[string]int{"trailing_garbage": 1}},
		{`{"a":1`, nil, map[string]int{"invalid_json": 1}},
		{"\x89PNG\x1a\x00", nil, map[string]int{"invalid_json": 1}},
		{``, nil, map[string]int{"empty_line": 1}},
		{"\t \r", nil, map[string]int{"empty_line": 1}},
		{`[1,2] "x" {"a":1}`, []string{`{"a":1}`}, map[string]int{"not_object": 2}},
	}
	for _, c := range cases {
		co := newCore(Options{})
		var got []string
		co.eachRecord([]byte(c.line), Position{}, func(raw []byte, index int) {
			if index != len(got)+co.stats.Skipped["not_object"] {
				t.Errorf("%q: record %q has index %d", c.line, raw, index)
			}
			got = append(got, string(raw))
		})
		if !slices.Equal(got, c.records) {
			t.Errorf("%q: records %q, want %q", c.line, got, c.records)
		}
		if len(co.stats.Skipped) != len(c.skipped) {
			t.Errorf("%q: skipped %v, want %v", c.line, co.stats.Skipped, c.skipped)
		}
		for k, n := range c.skipped {
			if co.stats.Skipped[k] != n {
				t.Errorf("%q: skipped %v, want %v", c.line, co.stats.Skipped, c.skipped)
			}
		}
	}
}

// TestTopLevelType only matches the record's own type.
func TestTopLevelType(t *testing.T) {
	cases := []struct {
		raw  string
		want bool
	}{
		{`{"parentUuid":null,"cwd":"/x","type":"progress","data":{"type":"hook_progress"}}`, true},
		{`{"type":"user","message":{"type":"progress"}}`, false},
		{`{"type":"user","content":"say \"type\":\"progress\""}`, false},
		{`{"a":[1],"type":"progress"}`, false}, // after a nested value: decoded fully, to be safe
		{`{"type":"progress"}{"type":"user"}`, false},
		// The pair deep in a long nested value, and a long one after it.
		{`{"type":"user","message":{"content":"` + strings.Repeat("x", 100<<10) + `\"type\":\"progress\","x":{"type":"progress"}}}`, false},
		{`{"cwd":"/x","type":"progress","data":{"output":"` + strings.Repeat("y", 100<<10) + `"}}`, true},
	}
	for _, c := range cases {
		if got := topLevelType([]byte(c.raw), progressPattern); got != c.want {
			t.Errorf("topLevelType(%s) = %v, want %v", c.raw, got, c.want)
		}
	}
}

// TestBoundText keeps head and tail, stays within the limit on rune
// boundaries, and strips long base64 runs.
func TestBoundText(t *testing.T) {
	long := strings.Repeat("héllo wörld ", 2000) // multi-byte runes everywhere
	blob := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 100)
	cases := []struct {
		name, in    string
		max         int
		wantBytes   int
		has, hasNot []string
	}{
		{"short", "exit status 1", 100, 0, []string{"exit status 1"}, nil},
		{"long", "START " + long + " END", 1000, len(long) + 10, []string{"START ", " END", "bytes elided]…"}, nil},
		{"base64", "before " + blob + " after", 8000, len(blob) + 13, []string{"before [binary data: 3 KB] after"}, []string{"iVBORw0KGgo"}},
		{"short base64 run kept", "sha " + strings.Repeat("ab12", 50), 8000, 0, []string{strings.Repeat("ab12", 50)}, nil},
	}
	for _, c := range cases {
		got, n := boundText(c.in, c.max)
		if len(got) > c.max || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes (max %d), valid UTF-8 %v", c.name, len(got), c.max, utf8.ValidString(got))
		}
		if n != c.wantBytes {
			t.Errorf("%s: original size %d, want %d", c.name, n, c.wantBytes)
		}
		for _, s := range c.has {
			if !strings.Contains(got, s) {
				t.Errorf("%s: %.120q lacks %q", c.name, got, s)
			}
		}
		for _, s := range c.hasNot {
			if strings.Contains(got, s) {
				t.Errorf("%s: %.120q still has %q", c.name, got, s)
			}
		}
	}
}

func TestSessionFromPath(t *testing.T) {
	cases := []struct {
		path string
		want PathInfo
	}{
		{"/home/u/.claude/projects/-home-u-app/7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57.jsonl", PathInfo{SessionID: "7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57"}},
		{"/home/u/.claude/projects/-home-u-app/7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57/subagents/agent-a1b2c3d.jsonl", PathInfo{ParentSessionID: "7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57", AgentID: "a1b2c3d"}},
		{"/home/u/.claude/projects/-home-u-app/7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57/subagents/agent-acompact-fffbd0.jsonl", PathInfo{ParentSessionID: "7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57", AgentID: "acompact-fffbd0"}},
		{"/home/u/.claude/projects/-home-u-app/agent-36541525.jsonl", PathInfo{AgentID: "36541525"}},
		{"/home/u/.codex/sessions/2026/03/02/rollout-2026-03-02T10-15-00-019c9a10-1111-7aaa-8bbb-0123456789ab.jsonl", PathInfo{SessionID: "019c9a10-1111-7aaa-8bbb-0123456789ab"}},
		{"/home/u/.codex/archived_sessions/rollout-2026-03-02T10-15-00-019c9a10-1111-7aaa-8bbb-0123456789ab.jsonl.zst", PathInfo{SessionID: "019c9a10-1111-7aaa-8bbb-0123456789ab"}},
		{"/var/log/acme/run-42.jsonl", PathInfo{SessionID: "run-42"}},
		{"", PathInfo{}},
	}
	for _, c := range cases {
		if got := SessionFromPath(c.path); got != c.want {
			t.Errorf("SessionFromPath(%q) = %+v, want %+v", c.path, got, c.want)
		}
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		line string
		want Format
	}{
		{`{"timestamp":"2026-03-02T10:15:00.010Z","type":"session_meta","payload":{"id":"x"}}`, FormatCodex},
		{`{"parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"},"uuid":"u"}`, FormatClaudeCode},
		{`{"type":"summary","summary":"Title","leafUuid":"u"}`, FormatClaudeCode},
		{`{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}`, FormatClaudeCode},
		{`{"type":"queue-operation","operation":"dequeue","timestamp":"t","sessionId":"s"}`, FormatClaudeCode},
		{`{"kind":"user_prompt","text":"hi"}`, FormatJSONL},
		{`{"sessionId":"s","projectHash":"9da8","startTime":"t","lastUpdated":"t","kind":"main"}`, FormatGemini},
		{`{"kind":"telemetry"}`, ""},
		{`not json`, ""},
		{`{"sessionId":42}`, ""},
	}
	for _, c := range cases {
		if got := Detect([]byte(c.line)); got != c.want {
			t.Errorf("Detect(%s) = %q, want %q", c.line, got, c.want)
		}
	}
}

// TestEventsOwnTheirText makes sure no event aliases the line buffer, which
// the tailer reuses for the next line.
func TestEventsOwnTheirText(t *testing.T) {
	lines := map[Format]string{
		FormatClaudeCode: `{"type":"assistant","sessionId":"s","uuid":"u","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"go test ./...","description":"run"}}]}}`,
		FormatCodex:      `{"timestamp":"2026-03-02T10:15:00Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"go test ./...\"}","call_id":"c"}}`,
		FormatJSONL:      `{"kind":"tool_call","session_id":"s","tool":"shell","command":"go test ./...","text":"go test ./..."}`,
		FormatGemini:     `{"id":"m","type":"gemini","content":"","toolCalls":[{"id":"c","name":"run_shell_command","args":{"command":"go test ./..."}}]}`,
	}
	for format, line := range lines {
		p, _ := New(format, Options{})
		buf := []byte(line)
		events := p.ParseLine(buf, Position{File: "f"})
		before, _ := json.Marshal(events)
		for i := range buf {
			buf[i] = 'X'
		}
		after, _ := json.Marshal(events)
		if len(events) != 1 || string(before) != string(after) {
			t.Errorf("%s: events changed with the line buffer:\n%s\n%s", format, before, after)
		}
	}
}

// TestOnSkip reports each skip with its position and the counted reason.
func TestOnSkip(t *testing.T) {
	var got []string
	p := NewClaudeCode(Options{OnSkip: func(pos Position, reason string) {
		got = append(got, itoa(int(pos.Offset))+" "+reason)
	}})
	p.ParseLine([]byte(`{"type":"progress","data":{}}`), Position{Offset: 0})
	p.ParseLine([]byte(`{"type":"mystery"}`), Position{Offset: 31})
	p.ParseLine([]byte(`{"type":`), Position{Offset: 50})
	want := []string{"0 noise:progress", "31 unknown_type:mystery", "50 invalid_json"}
	if !slices.Equal(got, want) {
		t.Errorf("OnSkip calls %q, want %q", got, want)
	}
	st := p.Stats()
	if st.Lines != 3 || st.Records != 2 || st.Skipped["invalid_json"] != 1 || st.TotalEvents() != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestOptionsBoundText applies the configured limits per kind.
func TestOptionsBoundText(t *testing.T) {
	out := strings.Repeat("x ", 3000)
	p := NewJSONL(Options{MaxText: 1000, MaxMessageText: 2000})
	for kind, max := range map[Kind]int{KindToolResult: 1000, KindUserPrompt: 2000, KindReasoning: 1000} {
		line, _ := json.Marshal(map[string]any{"kind": kind, "text": out})
		e := p.ParseLine(line, Position{})
		if len(e) != 1 || len(e[0].Text) > max || len(e[0].Text) < max-10 || e[0].TextBytes != len(out) {
			t.Errorf("%s: text of %d bytes (limit %d), text_bytes %d", kind, len(e[0].Text), max, e[0].TextBytes)
		}
	}
}

// TestJSONLDocExample parses the complete example in JSONL.md, so that the
// documentation cannot drift from the parser.
func TestJSONLDocExample(t *testing.T) {
	doc, err := readFile("JSONL.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(doc, "```jsonl\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("JSONL.md has no ```jsonl example")
	}
	p := NewJSONL(Options{})
	var kinds []Kind
	for line := range strings.Lines(example) {
		for _, e := range p.ParseLine([]byte(strings.TrimSuffix(line, "\n")), Position{Path: "2f0c9e1a-7d55-4b3e-9a61-5c8e2d4b7f10.jsonl"}) {
			kinds = append(kinds, e.Kind)
		}
	}
	st := p.Stats()
	if len(st.Skipped) != 0 {
		t.Errorf("the example has skipped lines: %v", st.Skipped)
	}
	for _, k := range Kinds {
		if k != KindToolCall && k != KindToolResult && st.Events[k] == 0 {
			t.Errorf("the example shows no %s event", k)
		}
	}
	if len(kinds) != 14 {
		t.Errorf("%d events, want 14", len(kinds))
	}
}

func readFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}

// TestIsElision: the line boundText leaves where it cut is the one
// IsElision knows, so readers of the text can skip it.
func TestIsElision(t *testing.T) {
	out, _ := boundText(strings.Repeat("word ", 400), 300)
	found := false
	for line := range strings.Lines(out) {
		if IsElision(strings.TrimSpace(line)) {
			found = true
		}
	}
	if !found {
		t.Errorf("no elision line in %q", out)
	}
	for _, line := range []string{"the tests were …[elided] on purpose", "…[ bytes elided]…", "…[12a bytes elided]…",
		"…[12 bytes elided]… and more", "see …[12 bytes elided]…", "…[-1 bytes elided]…"} {
		if IsElision(line) {
			t.Errorf("%q taken for the mark", line)
		}
	}
}
