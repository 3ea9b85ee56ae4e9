package transcript

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtureDir holds our own hand-written transcripts in the real formats.
const fixtureDir = "../../testdata/transcripts"

// fixtureFormat maps each fixture folder to its format.
var fixtureFormat = map[string]Format{
	"claude-code": FormatClaudeCode,
	"codex":       FormatCodex,
	"gemini":      FormatGemini,
	"jsonl":       FormatJSONL,
}

// fixtures lists every fixture file, relative to fixtureDir.
func fixtures(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(fixtureDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			rel, _ := filepath.Rel(fixtureDir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures in " + fixtureDir)
	}
	return files
}

func formatOf(t *testing.T, rel string) Format {
	t.Helper()
	f, ok := fixtureFormat[strings.SplitN(rel, "/", 2)[0]]
	if !ok {
		t.Fatalf("fixture %s is in no format folder", rel)
	}
	return f
}

// parseFixture parses a fixture as the tailer would, with a fingerprint
// that does not depend on where the repository is checked out.
func parseFixture(t *testing.T, rel string, from int64) ([]Event, Stats) {
	t.Helper()
	p, err := New(formatOf(t, rel), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	eachLine(t, filepath.Join(fixtureDir, rel), func(line []byte, offset int64) {
		if offset >= from {
			events = append(events, p.ParseLine(line, Position{File: "fixture:" + rel, Path: "/transcripts/" + rel, Offset: offset})...)
		}
	})
	return events, p.Stats()
}

// TestFixturesGolden compares every fixture's events and counts with its
// golden file (go test -run TestFixturesGolden -update rewrites them), and
// checks that a second parse gives exactly the same events.
func TestFixturesGolden(t *testing.T) {
	for _, rel := range fixtures(t) {
		t.Run(rel, func(t *testing.T) {
			events, stats := parseFixture(t, rel, 0)
			again, _ := parseFixture(t, rel, 0)
			if !reflect.DeepEqual(events, again) {
				t.Fatal("a second parse of the same bytes gave different events")
			}
			got, err := json.MarshalIndent(struct {
				Events []Event `json:"events"`
				Stats  Stats   `json:"stats"`
			}{events, stats}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(rel, ".jsonl")+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("events differ from %s (run with -update after checking the change):\n%s", golden, firstDiff(want, got))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + itoa(i+1) + ":\n- " + wl + "\n+ " + gl
		}
	}
	return ""
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestFixturesResume resumes every fixture at every line with a fresh
// parser, as the daemon does after a restart: no resumed parse may produce
// an event id that the full parse did not.
func TestFixturesResume(t *testing.T) {
	for _, rel := range fixtures(t) {
		t.Run(rel, func(t *testing.T) {
			all, _ := parseFixture(t, rel, 0)
			ids := map[string]bool{}
			for _, e := range all {
				ids[e.ID] = true
			}
			var offsets []int64
			eachLine(t, filepath.Join(fixtureDir, rel), func(_ []byte, offset int64) { offsets = append(offsets, offset) })
			for _, from := range offsets {
				resumed, _ := parseFixture(t, rel, from)
				for _, e := range resumed {
					if !ids[e.ID] {
						t.Errorf("resuming at %d made a new event %s (%s %.60q)", from, e.ID, e.Kind, e.Text)
					}
				}
			}
		})
	}
}

// find returns the events matching pred.
func find(events []Event, pred func(e *Event) bool) []*Event {
	var out []*Event
	for i := range events {
		if pred(&events[i]) {
			out = append(out, &events[i])
		}
	}
	return out
}

func byID(t *testing.T, events []Event, id string) *Event {
	t.Helper()
	found := find(events, func(e *Event) bool { return e.ID == id })
	if len(found) != 1 {
		t.Fatalf("want one event %s, found %d", id, len(found))
	}
	return found[0]
}

func withText(events []Event, kind Kind, text string) []*Event {
	return find(events, func(e *Event) bool { return e.Kind == kind && strings.Contains(e.Text, text) })
}

func ptr[T any](v T) *T { return &v }

// want is the part of an event a test case checks; zero fields are not
// checked.
type want struct {
	Kind        Kind
	Subtype     string
	Tool        string
	Command     string
	FilePaths   []string
	Query       string
	URL         string
	OK          *bool
	ExitCode    *int
	TextHas     string
	Todos       []Todo
	Boilerplate bool
	AgentID     string
	Session     string
	Parent      string
	MessageID   string
}

func (w want) check(t *testing.T, e *Event) {
	t.Helper()
	if e.Kind != w.Kind {
		t.Errorf("%s: kind %s, want %s", e.ID, e.Kind, w.Kind)
	}
	if e.Subtype != w.Subtype {
		t.Errorf("%s: subtype %q, want %q", e.ID, e.Subtype, w.Subtype)
	}
	if e.Boilerplate != w.Boilerplate {
		t.Errorf("%s: boilerplate %v, want %v", e.ID, e.Boilerplate, w.Boilerplate)
	}
	check := func(field, got, want string) {
		if want != "" && got != want {
			t.Errorf("%s: %s %q, want %q", e.ID, field, got, want)
		}
	}
	check("tool", e.Tool, w.Tool)
	check("command", e.Command, w.Command)
	check("query", e.Query, w.Query)
	check("url", e.URL, w.URL)
	check("agent id", e.AgentID, w.AgentID)
	check("session", e.SessionID, w.Session)
	check("parent session", e.ParentSessionID, w.Parent)
	check("message id", e.MessageID, w.MessageID)
	if w.FilePaths != nil && !slices.Equal(e.FilePaths, w.FilePaths) {
		t.Errorf("%s: file paths %q, want %q", e.ID, e.FilePaths, w.FilePaths)
	}
	if w.OK != nil && (e.OK == nil || *e.OK != *w.OK) {
		t.Errorf("%s: ok %v, want %v", e.ID, deref(e.OK), *w.OK)
	}
	if w.ExitCode != nil && (e.ExitCode == nil || *e.ExitCode != *w.ExitCode) {
		t.Errorf("%s: exit code %v, want %d", e.ID, deref(e.ExitCode), *w.ExitCode)
	}
	if !strings.Contains(e.Text, w.TextHas) {
		t.Errorf("%s: text %.200q lacks %q", e.ID, e.Text, w.TextHas)
	}
	if w.Todos != nil && !slices.Equal(e.Todos, w.Todos) {
		t.Errorf("%s: todos %+v, want %+v", e.ID, e.Todos, w.Todos)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

const (
	ccSession = "7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57"
	ccMain    = "claude-code/" + ccSession + ".jsonl"
	cxSession = "019c9a10-1111-7aaa-8bbb-0123456789ab"
	cxMain    = "codex/rollout-2026-03-02T10-15-00-" + cxSession + ".jsonl"
)

// TestClaudeCodeFixture checks the traps of the Claude Code format, one
// event at a time.
func TestClaudeCodeFixture(t *testing.T) {
	events, stats := parseFixture(t, ccMain, 0)
	cwd := "/home/dev/projects/inventory"
	stockGo := cwd + "/internal/stock/stock.go"
	cases := []struct {
		name string
		id   string
		want want
	}{
		{"prompt", "cc:rec:1a2b0002-0002-4002-8002-000000abc002", want{Kind: KindUserPrompt, TextHas: "off by one after a return", Session: ccSession}},
		{"failing test run", "cc:result:toolu_01BashTestsFail00001", want{Kind: KindToolResult, Tool: "Bash", Command: "go test ./internal/stock/...", OK: ptr(false), ExitCode: ptr(1), TextHas: "count = 9, want 10"}},
		{"read", "cc:call:toolu_01ReadStockGo0000002", want{Kind: KindToolCall, Tool: "Read", FilePaths: []string{stockGo}, MessageID: "msg_01Fx7StockCountBBBB"}},
		{"read result names its file", "cc:result:toolu_01ReadStockGo0000002", want{Kind: KindToolResult, Tool: "Read", FilePaths: []string{stockGo}, OK: ptr(true)}},
		{"edit", "cc:call:toolu_01EditStockGo0000003", want{Kind: KindToolCall, Tool: "Edit", FilePaths: []string{stockGo}, TextHas: `"new_string":"s.counts[id] += n"`}},
		{"fixed test run", "cc:result:toolu_01BashTestsPass00004", want{Kind: KindToolResult, Tool: "Bash", OK: ptr(true), ExitCode: ptr(0)}},
		{"todos", "cc:call:toolu_01TodoWrite000000005", want{Kind: KindPlanUpdate, Subtype: SubtypeTodos, Tool: "TodoWrite", Todos: []Todo{
			{Content: "Fix off-by-one in Store.Return", Status: "completed", ActiveForm: "Fixing off-by-one in Store.Return"},
			{Content: "Add a regression test for partial returns", Status: "in_progress", ActiveForm: "Adding a regression test for partial returns"},
			{Content: "Update CHANGELOG", Status: "pending", ActiveForm: "Updating CHANGELOG"},
		}}},
		{"caveat", "cc:rec:1a2b0012-0012-4012-8012-000000abc012", want{Kind: KindUserPrompt, Subtype: "caveat", Boilerplate: true}},
		{"slash command", "cc:rec:1a2b0013-0013-4013-8013-000000abc013", want{Kind: KindUserPrompt, Subtype: "command", Boilerplate: true, TextHas: "/compact"}},
		{"compact boundary", "cc:rec:1a2b0014-0014-4014-8014-000000abc014", want{Kind: KindSystem, Subtype: "compact_boundary", TextHas: "manual, 48211 tokens before"}},
		{"compaction summary", "cc:rec:1a2b0015-0015-4015-8015-000000abc015", want{Kind: KindCompactionSummary, TextHas: "Store.Return subtracted one item too many"}},
		{"image prompt", "cc:rec:1a2b0016-0016-4016-8016-000000abc016", want{Kind: KindUserPrompt, TextHas: "[Image #1]\n[image: image/png, 3 KB]"}},
		{"subagent result", "cc:result:toolu_01TaskExplore0000007", want{Kind: KindToolResult, Tool: "Task", AgentID: "a1b2c3d", OK: ptr(true), TextHas: "internal/export/cache.go"}},
		{"rejected", "cc:result:toolu_01BashRejected000008", want{Kind: KindToolResult, Subtype: SubtypeRejected, Tool: "Bash", Command: "rm -rf internal/export/cache", OK: ptr(false)}},
		{"interrupt", "cc:rec:1a2b001c-001c-401c-801c-000000abc01c", want{Kind: KindSystem, Subtype: SubtypeInterrupted}},
		{"correction", "cc:rec:1a2b001d-001d-401d-801d-000000abc01d", want{Kind: KindUserPrompt, TextHas: "no, don't delete the cache"}},
		{"system reminder", "cc:rec:1a2b001e-001e-401e-801e-000000abc01e", want{Kind: KindUserPrompt, Subtype: "system_reminder", Boilerplate: true}},
		{"plan", "cc:call:toolu_01ExitPlanMode000009", want{Kind: KindPlanUpdate, Subtype: SubtypePlan, Tool: "ExitPlanMode", TextHas: "2. Add TestReturnInvalidatesExportCache"}},
		{"plan approved", "cc:result:toolu_01ExitPlanMode000009", want{Kind: KindToolResult, Tool: "ExitPlanMode", OK: ptr(true)}},
		{"api error", "cc:rec:1a2b0021-0021-4021-8021-000000abc021", want{Kind: KindError, Subtype: SubtypeAPIError, TextHas: "overloaded_error"}},
		{"hook error", "cc:rec:1a2b0022-0022-4022-8022-000000abc022", want{Kind: KindError, Subtype: SubtypeHookError, TextHas: "golangci-lint found 2 issues"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.want.check(t, byID(t, events, c.id)) })
	}

	t.Run("split reply", func(t *testing.T) {
		// thinking, text and tool_use written as three records sharing
		// message.id, the text piece written a second time.
		pieces := find(events, func(e *Event) bool { return e.MessageID == "msg_01Fx7StockCountAAAA" })
		var kinds []Kind
		for _, e := range pieces {
			kinds = append(kinds, e.Kind)
		}
		if !slices.Equal(kinds, []Kind{KindReasoning, KindAssistantMessage, KindToolCall}) {
			t.Errorf("pieces of the reply: %v", kinds)
		}
		if stats.Skipped["duplicate"] != 1 {
			t.Errorf("skipped as duplicate: %d, want 1", stats.Skipped["duplicate"])
		}
	})
	t.Run("glued records", func(t *testing.T) {
		if len(withText(events, KindAssistantMessage, "Fixed: `Store.Return`")) != 1 {
			t.Error("the assistant record glued to a summary was lost")
		}
		if stats.Skipped["noise:summary"] != 2 || stats.Skipped["trailing_garbage"] != 0 {
			t.Errorf("skips %v: want both summaries counted and no garbage", stats.Skipped)
		}
	})
	t.Run("file order, not time order", func(t *testing.T) {
		// The second test run's call was stamped before the edit's result.
		edit := slices.IndexFunc(events, func(e Event) bool { return e.ID == "cc:result:toolu_01EditStockGo0000003" })
		rerun := slices.IndexFunc(events, func(e Event) bool { return e.ID == "cc:call:toolu_01BashTestsPass00004" })
		if rerun != edit+1 || !events[rerun].Time.Before(events[edit].Time) {
			t.Errorf("want the rerun (%d) right after the edit result (%d), with its earlier time kept", rerun, edit)
		}
	})
	t.Run("pr link", func(t *testing.T) {
		prs := find(events, func(e *Event) bool { return e.Subtype == "pr_link" })
		if len(prs) != 1 || prs[0].URL != "https://github.com/acme/inventory/pull/42" {
			t.Errorf("pr links: %+v", prs)
		}
	})
	t.Run("counts", func(t *testing.T) {
		for reason, n := range map[string]int{
			"invalid_json": 1, "unknown_type:session-rating": 1, "noise:progress": 3,
			"noise:file-history-snapshot": 1, "noise:system:turn_duration": 1,
		} {
			if stats.Skipped[reason] != n {
				t.Errorf("skipped %s: %d, want %d", reason, stats.Skipped[reason], n)
			}
		}
		for _, e := range events {
			if n := longestBase64Run(e.Text); n >= minBase64Run {
				t.Errorf("%s keeps %d bytes of base64", e.ID, n)
			}
		}
	})
}

// TestClaudeCodeSubagents checks the three places Claude Code writes
// subagents.
func TestClaudeCodeSubagents(t *testing.T) {
	cases := []struct {
		name, rel string
		want      []want
	}{
		{"subagents folder (2.1)", "claude-code/" + ccSession + "/subagents/agent-a1b2c3d.jsonl", []want{
			{Kind: KindUserPrompt, Subtype: SubtypeSubagentPrompt, Boilerplate: true, Session: ccSession + "/agent-a1b2c3d", Parent: ccSession, AgentID: "a1b2c3d"},
			{Kind: KindToolCall, Tool: "Grep", Query: "cachedCounts", FilePaths: []string{"/home/dev/projects/inventory/internal"}, Session: ccSession + "/agent-a1b2c3d"},
			{Kind: KindToolResult, Tool: "Grep", OK: ptr(true), Parent: ccSession},
			{Kind: KindAssistantMessage, TextHas: "never invalidated on returns", AgentID: "a1b2c3d"},
		}},
		{"sibling agent file with Warmup (2.0.6x), CRLF, no final newline", "claude-code/agent-5e6f7a8b.jsonl", []want{
			{Kind: KindUserPrompt, Subtype: "warmup", Boilerplate: true, Session: "3c9d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f/agent-5e6f7a8b", Parent: "3c9d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f"},
			{Kind: KindAssistantMessage, AgentID: "5e6f7a8b"},
		}},
		{"inline sidechain (2.0.1x)", "claude-code/b4c5d6e7-f809-4a1b-8c2d-3e4f5a6b7c8d.jsonl", []want{
			{Kind: KindUserPrompt, Session: "b4c5d6e7-f809-4a1b-8c2d-3e4f5a6b7c8d"},
			{Kind: KindToolCall, Tool: "Task"},
			{Kind: KindUserPrompt, Subtype: SubtypeSubagentPrompt, Boilerplate: true, Session: "b4c5d6e7-f809-4a1b-8c2d-3e4f5a6b7c8d/sidechain", Parent: "b4c5d6e7-f809-4a1b-8c2d-3e4f5a6b7c8d"},
			{Kind: KindAssistantMessage, Session: "b4c5d6e7-f809-4a1b-8c2d-3e4f5a6b7c8d/sidechain"},
			{Kind: KindToolResult, Tool: "Task", Session: "b4c5d6e7-f809-4a1b-8c2d-3e4f5a6b7c8d", OK: ptr(true)},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events, stats := parseFixture(t, c.rel, 0)
			if len(events) != len(c.want) {
				t.Fatalf("%d events, want %d (skipped %v)", len(events), len(c.want), stats.Skipped)
			}
			for i := range c.want {
				c.want[i].check(t, &events[i])
			}
			if len(stats.Skipped) != 0 {
				t.Errorf("skipped %v", stats.Skipped)
			}
		})
	}
}

// TestCodexFixture checks the traps of the Codex rollout format.
func TestCodexFixture(t *testing.T) {
	events, stats := parseFixture(t, cxMain, 0)
	cwd := "/home/dev/projects/importer"
	cases := []struct {
		name string
		id   string
		want want
	}{
		{"session start", "cx:meta:" + cxSession, want{Kind: KindSystem, Subtype: SubtypeSessionStart, Session: cxSession, TextHas: "codex 0.142.2 (codex_cli_rs)"}},
		{"failing command", "cx:result:call_Import0DryRun00000001", want{Kind: KindToolResult, Tool: "exec_command", Command: "go run ./cmd/import --dry-run", OK: ptr(false), ExitCode: ptr(1), TextHas: "no such file or directory"}},
		{"patch", "cx:call:call_PatchImportPath000002", want{Kind: KindToolCall, Tool: "apply_patch", FilePaths: []string{"cmd/import/main.go", "cmd/import/main_test.go"}, TextHas: "*** Begin Patch"}},
		{"patch applied", "cx:result:call_PatchImportPath000002", want{Kind: KindToolResult, Tool: "apply_patch", OK: ptr(true), ExitCode: ptr(0), TextHas: "Success. Updated the following files"}},
		{"plan", "cx:call:call_PlanUpdate0000000003", want{Kind: KindPlanUpdate, Subtype: SubtypeTodos, Tool: "update_plan", TextHas: "Path fixed; verifying.", Todos: []Todo{
			{Content: "Resolve items.csv against the config dir", Status: "completed"},
			{Content: "Run the importer tests", Status: "in_progress"},
			{Content: "Document the data dir in README", Status: "pending"},
		}}},
		{"tests pass", "cx:result:call_GoTestAll0000000004", want{Kind: KindToolResult, Command: "go test ./...", OK: ptr(true), ExitCode: ptr(0)}},
		{"failure without exit code", "cx:result:call_WriteStdin000000005", want{Kind: KindToolResult, Tool: "write_stdin", OK: ptr(false)}},
		{"old shell tool, JSON output", "cx:result:call_ShellGitStatus00006", want{Kind: KindToolResult, Tool: "shell", Command: "git status --short", OK: ptr(true), ExitCode: ptr(0), TextHas: " M cmd/import/main.go\n"}},
		{"mcp tool", "cx:call:call_McpDocsQuery0000007", want{Kind: KindToolCall, Tool: "mcp__docs__query", Query: "importer data dir"}},
		{"mcp result as content items", "cx:result:call_McpDocsQuery0000007", want{Kind: KindToolResult, Tool: "mcp__docs__query", TextHas: "$XDG_DATA_HOME/importer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := byID(t, events, c.id)
			c.want.check(t, e)
			if e.CWD != cwd || e.GitBranch != "main" {
				t.Errorf("cwd %q branch %q", e.CWD, e.GitBranch)
			}
		})
	}

	// Each of these is written twice (response_item and event_msg) or is
	// otherwise special; it must appear exactly once.
	once := []struct {
		name string
		kind Kind
		text string
		want want
	}{
		{"prompt", KindUserPrompt, "The nightly import fails", want{Kind: KindUserPrompt}},
		{"reasoning", KindReasoning, "Reproducing the failure", want{Kind: KindReasoning}},
		{"commentary", KindAssistantMessage, "relative to the working directory", want{Kind: KindAssistantMessage}},
		{"final answer", KindAssistantMessage, "`go test ./...` passes", want{Kind: KindAssistantMessage}},
		{"image prompt", KindUserPrompt, "progress bar cut off", want{Kind: KindUserPrompt, TextHas: "[image: image/png, 3 KB]\nwhy is the progress bar"}},
		{"interrupt", KindSystem, "turn aborted", want{Kind: KindSystem, Subtype: SubtypeInterrupted}},
		{"stream error", KindError, "rate limit reached", want{Kind: KindError, Subtype: "error"}},
		{"compaction", KindCompactionSummary, "fixed the importer path", want{Kind: KindCompactionSummary}},
		{"web search", KindToolCall, "go filepath.Join", want{Kind: KindToolCall, Tool: "web_search", Query: "go filepath.Join relative config dir"}},
		{"a record after binary junk", KindAssistantMessage, "Back again.", want{Kind: KindAssistantMessage}},
	}
	for _, c := range once {
		t.Run(c.name, func(t *testing.T) {
			found := withText(events, c.kind, c.text)
			if len(found) != 1 {
				t.Fatalf("%d %s events with %q, want 1", len(found), c.kind, c.text)
			}
			c.want.check(t, found[0])
		})
	}
	t.Run("a prompt repeated later is two events", func(t *testing.T) {
		again := find(events, func(e *Event) bool { return e.Kind == KindUserPrompt && e.Text == "continue" })
		if len(again) != 2 || again[0].ID == again[1].ID {
			t.Errorf("want two distinct 'continue' prompts, got %d", len(again))
		}
	})
	t.Run("counts", func(t *testing.T) {
		for reason, n := range map[string]int{
			"boilerplate": 3, "invalid_json": 1, "noise:world_state": 1,
			"unknown_type:event_msg/ghost_mode_toggled": 1, "noise:event_msg:token_count": 1,
			// prompt, reasoning, 2 answers, 2 continues, image prompt twins;
			// exec_command_end, patch_apply_end, plan_update, web_search_end,
			// context_compacted, <turn_aborted> message; session_meta again.
			"duplicate": 14,
		} {
			if stats.Skipped[reason] != n {
				t.Errorf("skipped %s: %d, want %d", reason, stats.Skipped[reason], n)
			}
		}
		if n := len(find(events, func(e *Event) bool { return e.Subtype == SubtypeSessionStart })); n != 1 {
			t.Errorf("%d session starts, want 1 (session_meta repeats on reopen)", n)
		}
	})
}

// TestCodexOneSided reads a rollout whose prompts exist only as event_msg
// and answers only as response_item, and which has no session_meta: neither
// stream may be ignored, and the session comes from the file name.
func TestCodexOneSided(t *testing.T) {
	const session = "019c9b20-2222-7ccc-8ddd-0123456789ab"
	events, _ := parseFixture(t, "codex/rollout-2026-03-03T08-00-00-"+session+".jsonl", 0)
	wants := []want{
		{Kind: KindUserPrompt, TextHas: "list the failing packages", Session: session},
		{Kind: KindToolCall, Tool: "local_shell", Command: "go test ./..."},
		{Kind: KindToolResult, Tool: "local_shell", OK: ptr(false), ExitCode: ptr(2), TextHas: "FAIL\tgithub.com/acme/importer/internal/csv"},
		{Kind: KindAssistantMessage, TextHas: "Only internal/csv fails", Session: session},
	}
	if len(events) != len(wants) {
		t.Fatalf("%d events, want %d", len(events), len(wants))
	}
	for i, w := range wants {
		w.check(t, &events[i])
	}
}

// TestJSONLFixture checks our own format's rules on top of its golden file.
func TestJSONLFixture(t *testing.T) {
	events, stats := parseFixture(t, "jsonl/acme-session-7.jsonl", 0)
	const session = "2f0c9e1a-7d55-4b3e-9a61-5c8e2d4b7f10"
	cases := []struct {
		id   string
		want want
	}{
		{"jl:" + session + ":0", want{Kind: KindSystem, Subtype: SubtypeSessionStart, Session: session, TextHas: "acme-agent 1.4.0"}},
		{"jl:" + session + ":4", want{Kind: KindToolResult, Tool: "shell", OK: ptr(false), ExitCode: ptr(1)}},
		{"jl:" + session + ":9", want{Kind: KindToolResult, OK: ptr(true), ExitCode: ptr(0)}},
		{"jl:" + session + ":5", want{Kind: KindPlanUpdate, Subtype: SubtypeTodos, Todos: []Todo{
			{Content: "Fix Store.Return", Status: "in_progress", ActiveForm: "Fixing Store.Return"},
			{Content: "Add a regression test", Status: "pending"},
		}}},
		{"jl:acme-session-7:14", want{Kind: KindUserPrompt, Session: "acme-session-7", TextHas: "changelog"}},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			found := find(events, func(e *Event) bool { return e.ID == c.id })
			if len(found) == 0 {
				t.Fatal("missing")
			}
			c.want.check(t, found[0])
		})
	}
	if n := len(find(events, func(e *Event) bool { return e.ID == "jl:"+session+":10" })); n != 2 {
		t.Errorf("a line written twice: %d events, want 2 with one id", n)
	}
	for reason, n := range map[string]int{"invalid_json": 1, "invalid_time": 1, "missing_kind": 1, "not_object": 1, "unknown_kind:telemetry": 1} {
		if stats.Skipped[reason] != n {
			t.Errorf("skipped %s: %d, want %d", reason, stats.Skipped[reason], n)
		}
	}
}
