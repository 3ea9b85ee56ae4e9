package transcript

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestClaudeCodeQueued checks that prompts typed while the agent was busy
// are the user's words once: the enqueue is the prompt, a later delivery of
// the same text as a user record is dropped, harness text queued the same
// way stays boilerplate, and other queue operations are noise.
func TestClaudeCodeQueued(t *testing.T) {
	const sid = `"sessionId":"s1"`
	enqueue := func(text string) string {
		return `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-08T21:05:48Z",` + sid + `,"content":"` + text + `"}`
	}
	dequeue := `{"type":"queue-operation","operation":"dequeue","timestamp":"2026-01-08T21:05:55Z",` + sid + `}`
	remove := `{"type":"queue-operation","operation":"remove","timestamp":"2026-01-08T21:05:55Z",` + sid + `}`
	user := func(uuid, text string) string {
		return `{"type":"user","uuid":"` + uuid + `",` + sid + `,"message":{"role":"user","content":"` + text + `"}}`
	}
	type prompt struct {
		text, subtype string
		boilerplate   bool
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  []prompt
		noise int
		dups  int
	}{
		{"delivered later", []string{enqueue("don't produce code"), dequeue, user("u1", "don't produce code")},
			[]prompt{{"don't produce code", SubtypeQueued, false}}, 1, 1},
		{"removed from the queue", []string{enqueue("check again"), remove},
			[]prompt{{"check again", SubtypeQueued, false}}, 1, 0},
		{"same words typed again later", []string{enqueue("go on"), dequeue, user("u1", "go on"), user("u2", "go on")},
			[]prompt{{"go on", SubtypeQueued, false}, {"go on", "", false}}, 1, 1},
		{"task notification", []string{enqueue("<task-notification>done</task-notification>")},
			[]prompt{{"<task-notification>done</task-notification>", "task_notification", true}}, 0, 0},
		{"empty enqueue", []string{enqueue(""), dequeue}, nil, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewClaudeCode(Options{})
			var got []prompt
			for i, l := range tc.lines {
				for _, e := range p.ParseLine([]byte(l), Position{File: "f", Path: "/p/s1.jsonl", Offset: int64(i * 100)}) {
					if e.Kind != KindUserPrompt {
						t.Fatalf("line %d: kind %s", i, e.Kind)
					}
					got = append(got, prompt{e.Text, e.Subtype, e.Boilerplate})
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("prompts %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("prompt %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			if n := p.Stats().Skipped["noise:queue-operation"]; n != tc.noise {
				t.Errorf("noise:queue-operation %d, want %d", n, tc.noise)
			}
			if n := p.Stats().Skipped["duplicate:queued"]; n != tc.dups {
				t.Errorf("duplicate:queued %d, want %d", n, tc.dups)
			}
		})
	}
}

// TestClaudeCodeApprovedPlan checks that the prompt Claude Code writes when
// the user approves a plan into a cleared context (a user record with
// planContent) is flagged as the agent's plan, not the user's words, and
// keeps the whole plan up to the bound of a message.
func TestClaudeCodeApprovedPlan(t *testing.T) {
	plan := "# Plan: one source of truth\n\n" + strings.Repeat("- step with enough words to make the plan long\n", 200)
	text, _ := json.Marshal("Implement the following plan:\n\n" + plan)
	pc, _ := json.Marshal(plan)
	line := `{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":` + string(text) +
		`},"planContent":` + string(pc) + `}`
	p := NewClaudeCode(Options{})
	evs := p.ParseLine([]byte(line), Position{File: "f", Path: "/p/s1.jsonl"})
	if len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	e := evs[0]
	if e.Kind != KindUserPrompt || e.Subtype != SubtypeApprovedPlan || !e.Boilerplate {
		t.Errorf("kind %s subtype %q boilerplate %v, want an approved plan flagged as boilerplate", e.Kind, e.Subtype, e.Boilerplate)
	}
	if len(e.Text) <= DefaultMaxText {
		t.Errorf("plan text cut to %d bytes, want the message bound (%d)", len(e.Text), DefaultMaxMessageText)
	}
	// The same prompt without planContent is the user's.
	line = `{"type":"user","uuid":"u2","sessionId":"s1","message":{"role":"user","content":` + string(text) + `}}`
	if e := p.ParseLine([]byte(line), Position{File: "f", Path: "/p/s1.jsonl", Offset: 100})[0]; e.Boilerplate {
		t.Errorf("a prompt without planContent flagged %q", e.Subtype)
	}
}
