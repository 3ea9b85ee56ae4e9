package curate

import (
	"slices"
	"testing"

	"github.com/medallionhq/medallion/internal/transcript"
)

func TestEditGist(t *testing.T) {
	for _, tt := range []struct{ name, input, want string }{
		{"edit adds a line", `{"file_path":"a.ex","old_string":"use ExUnit.Case\n","new_string":"use ExUnit.Case\nimport Phoenix.ConnTest\n"}`, "import Phoenix.ConnTest"},
		{"edit skips short and comment lines", `{"old_string":"x","new_string":"end\n# keep\nconfig :app, port: 4002"}`, "config :app, port: 4002"},
		{"multi edit", `{"edits":[{"old_string":"a","new_string":"alias Spotter.Otel"}]}`, "alias Spotter.Otel"},
		{"codex patch", "*** Begin Patch\n*** Update File: a.ts\n-  old()\n+  compaction: { auto: true }\n*** End Patch", "compaction: { auto: true }"},
		{"whole-file write", `{"file_path":"a.go","content":"package a"}`, ""},
		{"not json", `{"old_string":`, ""},
	} {
		if got := editGist(tt.input); got != tt.want {
			t.Errorf("%s: editGist = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestFixAcrossCheckpoints checks that an error in one checkpoint is a known
// fix in a later one when the same check passes (with the edit's gist) or
// fails with a different error after edits, and stays open otherwise.
func TestFixAcrossCheckpoints(t *testing.T) {
	for _, tt := range []struct {
		name   string
		second func(b *builder)
		fix    string
	}{
		{"passes", func(b *builder) {
			b.add(transcript.Event{Kind: transcript.KindToolCall, Tool: "Edit", ToolCallID: "e1", FilePaths: []string{"/repo/config/test.exs"},
				Text: `{"old_string":"import Config","new_string":"import Config\nconfig :app, secret_key_base: \"x\""}`})
			b.run("c2", "Bash", "mix test test/a_test.exs", nil, true, "5 tests, 0 failures")
		}, "when ** (RuntimeError) no :secret_key_base configuration found: edit config/test.exs (config :app, secret_key_base: \"x\"), then `mix test test/a_test.exs` succeeds"},
		{"gets past it", func(b *builder) {
			b.add(transcript.Event{Kind: transcript.KindToolCall, Tool: "Edit", ToolCallID: "e1", FilePaths: []string{"/repo/config/test.exs"},
				Text: `{"old_string":"import Config","new_string":"import Config\nconfig :app, secret_key_base: \"x\""}`})
			b.run("c2", "Bash", "mix test", nil, false, "** (RuntimeError) Phoenix LiveView requires lazy_html")
		}, "when ** (RuntimeError) no :secret_key_base configuration found: edit config/test.exs (config :app, secret_key_base: \"x\"), then `mix test` gets past it"},
		{"same error again", func(b *builder) {
			b.add(transcript.Event{Kind: transcript.KindToolCall, Tool: "Edit", ToolCallID: "e1", FilePaths: []string{"/repo/lib/a.ex"}, Text: `{"old_string":"a","new_string":"b = 1 + 2"}`})
			b.run("c2", "Bash", "mix test", nil, false, "** (RuntimeError) no :secret_key_base configuration found")
		}, ""},
		{"different error, nothing edited", func(b *builder) {
			b.run("c2", "Bash", "mix test", nil, false, "** (RuntimeError) Phoenix LiveView requires lazy_html")
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b1 builder
			b1.run("c1", "Bash", "mix test", nil, false, "** (RuntimeError) no :secret_key_base configuration found")
			m := Apply(nil, []string{"repo:muse"}, Extract(b1.episode()), t0)
			var b2 builder
			tt.second(&b2)
			m = Apply(m, []string{"repo:muse"}, Extract(b2.episode()), t0)
			fixes := m.Affordances.AvoidRepeating
			if tt.fix == "" {
				if len(fixes) != 0 {
					t.Errorf("fixes %q, want none", fixes)
				}
				return
			}
			if !slices.Contains(fixes, tt.fix) {
				t.Errorf("fixes %q, want %q", fixes, tt.fix)
			}
			for _, q := range m.OpenQuestions {
				if q.Question == "Unresolved: ** (RuntimeError) no :secret_key_base configuration found" {
					t.Errorf("fixed error still open: %+v", m.OpenQuestions)
				}
			}
		})
	}
}
