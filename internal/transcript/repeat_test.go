package transcript

import "testing"

// TestClaudeCodeCopiedResult pins what an event id means: one record of the
// conversation. Older Claude Code versions copied the earlier history into a
// resumed session's file under the new sessionId, so the same tool result
// (same uuid, same tool_use id) appears twice in one file. The copy is the
// same record, not a second result: it is skipped and counted as
// "duplicate:result", never silently, and the id stays the tool_use id so a
// re-parse after a restart (which has forgotten the first) yields that same
// id and the store's marker drops it.
func TestClaudeCodeCopiedResult(t *testing.T) {
	call := `{"type":"assistant","uuid":"a1","sessionId":"s1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"go test ./..."}}]}}`
	result := func(session string) string {
		return `{"type":"user","uuid":"r1","sessionId":"` + session + `","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}`
	}
	lines := []string{call, result("s1"), result("s2")}

	p := NewClaudeCode(Options{})
	var results []Event
	for i, l := range lines {
		for _, e := range p.ParseLine([]byte(l), Position{File: "f", Path: "/p/s1.jsonl", Offset: int64(i * 1000)}) {
			if e.Kind == KindToolResult {
				results = append(results, e)
			}
		}
	}
	if len(results) != 1 || results[0].ID != "cc:result:toolu_1" || results[0].SessionID != "s1" {
		t.Fatalf("results %+v, want one cc:result:toolu_1 in session s1", results)
	}
	if n := p.Stats().Skipped["duplicate:result"]; n != 1 {
		t.Errorf("duplicate:result %d, want 1 (a repeat is counted, not dropped silently)", n)
	}

	// A fresh parser that starts at the copy (a restart between the lines)
	// emits it under the same id, which the store already holds.
	fresh := NewClaudeCode(Options{})
	got := fresh.ParseLine([]byte(result("s2")), Position{File: "f", Path: "/p/s1.jsonl", Offset: 2000})
	if len(got) != 1 || got[0].ID != results[0].ID {
		t.Fatalf("resumed parse gave %+v, want the id %s again", got, results[0].ID)
	}
}
