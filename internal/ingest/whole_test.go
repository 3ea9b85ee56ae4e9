package ingest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// geminiLegacy is a Gemini CLI ≤ 0.38 session file with messages: one
// pretty-printed JSON document, rewritten whole on every change.
func geminiLegacy(t *testing.T, messages ...map[string]any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{
		"sessionId": "5b959dae-8655-4cd1-b10f-720b8c336ea2", "projectHash": "0f1e",
		"startTime": "2025-12-01T21:45:34.362Z", "lastUpdated": "2025-12-01T21:50:10.837Z", "messages": messages,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWholeFileRewrites follows a whole-file session through its rewrites
// (in place, half-written, by rename) with the daemon restarted before
// each read (a new pipeline on the same store): every event is stored
// exactly once, a half-written file waits for the next change, and the
// file's cwd (from .project_root) reaches the events.
func TestWholeFileRewrites(t *testing.T) {
	st := openStore(t)
	w := Watch{Name: "gm", Format: "gemini"}
	project := filepath.Join(t.TempDir(), "tmp", "0f1e")
	path := filepath.Join(project, "chats", "session-2025-12-01T21-45-5b959dae.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".project_root"), []byte("/src/parser\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	user := map[string]any{"id": "u1", "type": "user", "content": "run the tests"}
	call := func(status string) map[string]any {
		c := map[string]any{"id": "c1", "name": "run_shell_command", "args": map[string]any{"command": "make test"}, "status": status}
		if status == "success" {
			c["result"] = []any{map[string]any{"functionResponse": map[string]any{"id": "c1", "response": map[string]any{"output": "Output: FAIL\nExit Code: 2"}}}}
		}
		return map[string]any{"id": "g1", "type": "gemini", "content": "Running them.", "toolCalls": []any{c}}
	}
	answer := map[string]any{"id": "g2", "type": "gemini", "content": "parse_test.go fails."}
	steps := []struct {
		name  string
		write func()
		want  []string // every id stored so far
	}{
		{"first write", func() { writeNow(t, path, geminiLegacy(t, user)) },
			[]string{"gm:meta:5b959dae-8655-4cd1-b10f-720b8c336ea2", "gm:msg:u1"}},
		{"rewritten in place: a tool call running", func() { writeNow(t, path, geminiLegacy(t, user, call("executing"))) },
			[]string{"gm:call:c1", "gm:meta:5b959dae-8655-4cd1-b10f-720b8c336ea2", "gm:msg:g1", "gm:msg:u1"}},
		{"its result", func() { writeNow(t, path, geminiLegacy(t, user, call("success"))) },
			[]string{"gm:call:c1", "gm:meta:5b959dae-8655-4cd1-b10f-720b8c336ea2", "gm:msg:g1", "gm:msg:u1", "gm:result:c1"}},
		{"caught half-written", func() {
			full := geminiLegacy(t, user, call("success"), answer)
			writeNow(t, path, full[:len(full)/2])
		}, []string{"gm:call:c1", "gm:meta:5b959dae-8655-4cd1-b10f-720b8c336ea2", "gm:msg:g1", "gm:msg:u1", "gm:result:c1"}},
		{"finished", func() { writeNow(t, path, geminiLegacy(t, user, call("success"), answer)) },
			[]string{"gm:call:c1", "gm:meta:5b959dae-8655-4cd1-b10f-720b8c336ea2", "gm:msg:g1", "gm:msg:g2", "gm:msg:u1", "gm:result:c1"}},
		{"replaced by rename, nothing new", func() {
			tmp := path + ".tmp"
			writeNow(t, tmp, geminiLegacy(t, user, call("success"), answer))
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}, []string{"gm:call:c1", "gm:meta:5b959dae-8655-4cd1-b10f-720b8c336ea2", "gm:msg:g1", "gm:msg:g2", "gm:msg:u1", "gm:result:c1"}},
	}
	for _, step := range steps {
		step.write()
		p := ingestNow(t, st, w, path)
		got := stored(t, st)
		var ids []string
		for id, n := range got {
			ids = append(ids, id)
			if n != 1 {
				t.Errorf("%s: %s stored %d times", step.name, id, n)
			}
		}
		slices.Sort(ids)
		if !slices.Equal(ids, step.want) {
			t.Errorf("%s: stored %q, want %q", step.name, ids, step.want)
		}
		if s := p.Status(); s.Skipped["invalid_json"] > 0 || s.Skipped["not_object"] > 0 {
			t.Errorf("%s: skipped %v", step.name, s.Skipped)
		}
	}
	events := storedEvents(t, st)
	for _, e := range events {
		if !strings.Contains(e, "cwd=/src/parser") || !strings.Contains(e, "session=5b959dae-8655-4cd1-b10f-720b8c336ea2") {
			t.Errorf("event without the session's cwd or id: %s", e)
		}
	}
	// Unchanged since the last read: not parsed again (nothing to store,
	// no write).
	p := ingestNow(t, st, w, path)
	if s := p.Status(); s.Lines != 0 || s.Events != 0 {
		t.Errorf("an unchanged file was read again: %d lines, %d events", s.Lines, s.Events)
	}
	fs := fileState(t, st, path)
	if fi, err := os.Stat(path); err != nil || fs.Offset != fi.Size() || fs.Format != "gemini" {
		t.Errorf("file state %+v", fs)
	}
}

// writeNow replaces path's content in place (same inode), as Gemini CLI's
// writeFileSync does.
func writeNow(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
