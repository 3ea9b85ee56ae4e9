package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/render"
)

// legacyDoc is a Gemini CLI ≤ 0.38 session file as it is rewritten: the
// header with every message so far, pretty-printed.
func legacyDoc(t *testing.T, messages ...map[string]any) []byte {
	t.Helper()
	doc := map[string]any{
		"sessionId": "5b959dae-8655-4cd1-b10f-720b8c336ea2", "projectHash": strings.Repeat("ab", 32),
		"startTime": "2025-12-01T21:45:34.362Z", "lastUpdated": "2025-12-01T21:50:10.837Z", "messages": messages,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func shellCall(id, status, output string) map[string]any {
	c := map[string]any{"id": id, "name": "run_shell_command", "args": map[string]any{"command": "make test"}, "status": status}
	if output != "" {
		c["result"] = []any{map[string]any{"functionResponse": map[string]any{"id": id, "name": "run_shell_command", "response": map[string]any{"output": output}}}}
	}
	return c
}

// TestGeminiLegacyRewrites reads a whole-file session at each of its
// rewrites, as the ingest pipeline does: each read yields only what is new
// (a new message, a tool call's result once it is final), and a parser
// restored from the saved state (a restart between two rewrites) yields
// what the one that went on would have.
func TestGeminiLegacyRewrites(t *testing.T) {
	const path = "/home/u/.gemini/tmp/0f1e/chats/session-2025-12-01T21-45-5b959dae.json"
	user := map[string]any{"id": "u1", "timestamp": "2025-12-01T21:45:40.000Z", "type": "user", "content": "run the tests"}
	running := map[string]any{"id": "g1", "type": "gemini", "content": "Running them.", "toolCalls": []any{shellCall("c1", "executing", "")}}
	done := map[string]any{"id": "g1", "type": "gemini", "content": "Running them.", "toolCalls": []any{
		shellCall("c1", "success", "Command: make test\nDirectory: (root)\nOutput: FAIL\nError: (none)\nExit Code: 2\nSignal: (none)")}}
	answer := map[string]any{"id": "g2", "type": "gemini", "content": "The tests fail in parse_test.go."}
	versions := [][]byte{
		legacyDoc(t, user),
		legacyDoc(t, user, running),
		legacyDoc(t, user, done),
		legacyDoc(t, user, done, answer),
		legacyDoc(t, user, done, answer), // rewritten with nothing new
	}
	wantNew := [][]string{
		{"gm:meta:5b959dae-8655-4cd1-b10f-720b8c336ea2", "gm:msg:u1"},
		{"gm:msg:g1", "gm:call:c1"},
		{"gm:result:c1"},
		{"gm:msg:g2"},
		nil,
	}
	p := NewGemini(Options{})
	p.projectRoot = func(string, string) string { return "/src/parser" }
	if !p.WholeFile(path) || p.WholeFile(strings.TrimSuffix(path, ".json")+".jsonl") {
		t.Fatal("WholeFile does not tell .json from .jsonl")
	}
	var all []Event
	for i, v := range versions {
		// A restart before this read: a fresh parser with the saved state.
		state, err := p.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		restored := NewGemini(Options{})
		restored.projectRoot = p.projectRoot
		if err := restored.UnmarshalState(state); err != nil {
			t.Fatal(err)
		}
		events := p.ParseLine(v, Position{File: "f", Path: path})
		if again := restored.ParseLine(v, Position{File: "f", Path: path}); !reflect.DeepEqual(again, events) {
			t.Errorf("rewrite %d: a restored parser read\n%s\nthe running one\n%s", i, summary(again), summary(events))
		}
		var ids []string
		for _, e := range events {
			ids = append(ids, e.ID)
			if e.SessionID != "5b959dae-8655-4cd1-b10f-720b8c336ea2" || e.CWD != "/src/parser" || e.Agent != AgentGemini {
				t.Errorf("rewrite %d: event %s in session %q cwd %q", i, e.ID, e.SessionID, e.CWD)
			}
		}
		if !reflect.DeepEqual(ids, wantNew[i]) {
			t.Errorf("rewrite %d: new events %q, want %q", i, ids, wantNew[i])
		}
		all = append(all, events...)
	}
	res := find(all, func(e *Event) bool { return e.Kind == KindToolResult })
	if len(res) != 1 || res[0].ExitCode == nil || *res[0].ExitCode != 2 || *res[0].OK || res[0].Command != "make test" {
		t.Errorf("tool result %+v", res)
	}
	if n := p.Stats().Skipped["duplicate"]; n == 0 {
		t.Error("messages read again were not counted as duplicates")
	}
}

// TestGeminiHookContext: what a hook added — our save file — is cut out of
// the user's prompt, however Gemini CLI put it there, and a message that
// held only that is no prompt at all.
func TestGeminiHookContext(t *testing.T) {
	saveFile := render.Load([]*medallion.Medallion{{
		Meta:        medallion.Meta{MedallionID: "m", SchemaVersion: medallion.SchemaVersion, Status: medallion.StatusActive, Version: 2},
		Scope:       medallion.Scope{GraphNodes: []string{"repo:x"}},
		Affordances: medallion.Affordances{Invariants: []string{"never push to main"}},
	}}, render.Options{}).Text
	for _, tt := range []struct {
		name    string
		content any
		want    string // "" for no prompt
	}{
		{"headless prefix", "<hook_context>" + saveFile + "</hook_context>\n\nfix the parser", "fix the parser"},
		{"part of its own", []any{map[string]any{"text": "fix the parser"}, map[string]any{"text": "<hook_context>" + saveFile + "</hook_context>"}}, "fix the parser"},
		{"interactive, alone", []any{map[string]any{"text": "<hook_context>" + saveFile + "</hook_context>"}}, ""},
		{"an escaped closing tag inside", "<hook_context>a <\\/hook_context> b</hook_context>\n\nfix it", "fix it"},
		{"the save file pasted", saveFile, ""},
		{"session context", "<session_context>\nThis is the Gemini CLI.\n</session_context>", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			line, _ := json.Marshal(map[string]any{"id": "m1", "type": "user", "content": tt.content})
			p := NewGemini(Options{})
			events := p.ParseLine(line, Position{Path: "/x/chats/session-1.jsonl"})
			switch {
			case tt.want == "" && len(events) != 0:
				t.Errorf("events %s, want none", summary(events))
			case tt.want != "" && (len(events) != 1 || events[0].Text != tt.want || events[0].Kind != KindUserPrompt):
				t.Errorf("events %s, want the prompt %q", summary(events), tt.want)
			}
		})
	}
	if !isSaveFile(saveFile) || !isSaveFile(render.Load(nil, render.Options{}).Text) {
		t.Error("isSaveFile does not know render's preambles")
	}
}

// TestGeminiProjectRoot finds a chat file's project path the three ways
// Gemini CLI versions allow.
func TestGeminiProjectRoot(t *testing.T) {
	home := t.TempDir()
	write := func(rel, content string) string {
		path := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	sum := sha256.Sum256([]byte("/src/old"))
	hash := hex.EncodeToString(sum[:])
	write("projects.json", `{"projects": {"/src/muse": "muse", "/src/old": "old-1"}}`)
	marked := write("tmp/work/chats/session-a.jsonl", "")
	write("tmp/work/.project_root", "/src/work\n")
	byName := write("tmp/muse/chats/parent/sub.jsonl", "")
	byHash := write("tmp/"+hash+"/chats/session-b.json", "")
	unknown := write("tmp/other/chats/session-c.jsonl", "")
	for _, tt := range []struct{ path, hash, want string }{
		{marked, "", "/src/work"},
		{byName, "", "/src/muse"},
		{byHash, "", "/src/old"},
		{unknown, hash, "/src/old"},
		{unknown, "", ""},
		{"/nowhere/session.jsonl", "", ""},
	} {
		if got := GeminiProjectRoot(tt.path, tt.hash); got != tt.want {
			t.Errorf("GeminiProjectRoot(%s, %.8s) = %q, want %q", tt.path, tt.hash, got, tt.want)
		}
	}
}
