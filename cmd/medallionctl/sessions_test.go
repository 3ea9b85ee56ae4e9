package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Session ids as the agents write them.
const (
	museSession  = "0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d"
	museSubagent = museSession + "/agent-a1b2c3"
	siteSession  = "019a8f3e-7c21-7d40-b6a2-5e0c9d1f2a3b"
	aiderSession = "aider-2025-11-12"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func ptr[T any](v T) *T { return &v }

// museEpisode is the buffered episode of museSession: a failing test, the
// fix, a user correction, a todo list, an API error, and text that must be
// clipped and escaped.
func museEpisode() []episode.BufferedEvent {
	ev := func(seq uint64, ts string, e transcript.Event) episode.BufferedEvent {
		e.ID = fmt.Sprintf("cc:%s:%d", museSession, seq)
		e.SessionID, e.Agent, e.CWD = museSession, transcript.AgentClaudeCode, "/home/ada/muse"
		if ts != "" {
			e.Time = at(ts)
		}
		return episode.BufferedEvent{Seq: seq, Event: e}
	}
	return []episode.BufferedEvent{
		ev(9, "2025-11-16T23:58:30Z", transcript.Event{Kind: transcript.KindUserPrompt,
			Text: "\nthe tempo parser drops the last bar\nsee scores/waltz.txt"}),
		ev(10, "2025-11-16T23:58:34Z", transcript.Event{Kind: transcript.KindAssistantMessage, Text: "I'll run the parser tests first."}),
		ev(11, "2025-11-16T23:58:35Z", transcript.Event{Kind: transcript.KindToolCall, Tool: "Bash", ToolCallID: "toolu_01",
			Command: "go test ./internal/parse/...", Text: "Run the parser tests"}),
		ev(12, "2025-11-16T23:58:41Z", transcript.Event{Kind: transcript.KindToolResult, Tool: "Bash", ToolCallID: "toolu_01",
			OK: ptr(false), ExitCode: ptr(1), Text: "--- FAIL: TestTempo (0.00s)\n    parse_test.go:42: got 3 bars, want 4"}),
		ev(13, "2025-11-17T00:01:02Z", transcript.Event{Kind: transcript.KindToolCall, Tool: "Edit", ToolCallID: "toolu_02",
			FilePaths: []string{"internal/parse/tempo.go"}}),
		ev(14, "2025-11-17T00:01:02Z", transcript.Event{Kind: transcript.KindToolResult, Tool: "Edit", ToolCallID: "toolu_02",
			OK: ptr(true), Text: "The file internal/parse/tempo.go has been updated."}),
		ev(15, "2025-11-17T00:01:10Z", transcript.Event{Kind: transcript.KindToolCall, Tool: "Bash", ToolCallID: "toolu_03",
			Command: "go test ./internal/parse/...\necho done"}),
		ev(16, "2025-11-17T00:01:15Z", transcript.Event{Kind: transcript.KindToolResult, Tool: "Bash", ToolCallID: "toolu_03",
			OK: ptr(true), ExitCode: ptr(0), Text: "ok  \tgithub.com/ada/muse/internal/parse\t0.012s"}),
		ev(17, "2025-11-17T00:02:00Z", transcript.Event{Kind: transcript.KindToolCall, Tool: "Grep", ToolCallID: "toolu_04",
			Query: "TempoMap", FilePaths: []string{"internal"}}),
		ev(18, "2025-11-17T00:02:01Z", transcript.Event{Kind: transcript.KindToolResult, Tool: "Grep", ToolCallID: "toolu_04",
			Subtype: transcript.SubtypeRejected, OK: ptr(false), Text: "The user doesn't want to proceed with this tool use."}),
		ev(19, "2025-11-17T09:20:00Z", transcript.Event{Kind: transcript.KindUserPrompt,
			Text: "no, don't touch the MIDI writer; never buffer a whole track"}),
		ev(20, "2025-11-17T09:21:00Z", transcript.Event{Kind: transcript.KindPlanUpdate, Subtype: transcript.SubtypeTodos, Tool: "TodoWrite",
			Todos: []transcript.Todo{
				{Content: "Fix the last-bar bug", Status: "completed"},
				{Content: "Stream MIDI output", Status: "in_progress"},
				{Content: "Document tempo maps", Status: "pending"},
			}}),
		ev(21, "2025-11-17T09:25:00Z", transcript.Event{Kind: transcript.KindError, Subtype: transcript.SubtypeAPIError,
			Text: "API Error: 529 Overloaded"}),
		ev(22, "2025-11-17T09:26:00Z", transcript.Event{Kind: transcript.KindReasoning,
			Text: "The writer keeps a whole track in memory because the header needs the track length up front; a streaming writer must seek back and patch it."}),
		ev(23, "2025-11-17T09:27:00Z", transcript.Event{Kind: transcript.KindAssistantMessage,
			Text: "Done: clear \x1b[2J the\tscreen"}),
		ev(24, "2025-11-17T09:27:00Z", transcript.Event{Kind: transcript.KindToolCall, Tool: "WebFetch", URL: "https://go.dev/ref/spec"}),
		ev(25, "", transcript.Event{Kind: transcript.KindCompactionSummary, Text: "Summary: the parser fix is in; streaming is next."}),
		ev(26, "2025-11-17T09:27:00Z", transcript.Event{Kind: transcript.KindSystem}),
	}
}

// ingested starts a fake daemon that has ingested four sessions: a Claude
// Code session with a subagent, a Codex session checkpointed empty, and a
// jsonl session without timestamps or scope.
func ingested(t *testing.T) (*fakeDaemon, string) {
	t.Helper()
	f := startFake(t)
	eps := museEpisode()
	byKind := map[string]int64{"user_prompt": 2, "assistant_message": 2, "tool_call": 2, "tool_result": 2}
	for _, e := range eps {
		byKind[string(e.Event.Kind)]++
	}
	sub := make([]episode.BufferedEvent, 6)
	for i := range sub {
		sub[i] = episode.BufferedEvent{Seq: uint64(i + 1), Event: transcript.Event{
			ID: fmt.Sprintf("sub:%d", i), Kind: transcript.KindToolCall, Tool: "Read", Agent: transcript.AgentClaudeCode,
			SessionID: museSubagent, FilePaths: []string{fmt.Sprintf("internal/midi/writer%d.go", i)},
			Time: at("2025-11-17T09:05:00Z").Add(time.Duration(i) * time.Minute),
		}}
	}
	aider := []episode.BufferedEvent{
		{Seq: 1, Event: transcript.Event{ID: "a1", Kind: transcript.KindUserPrompt, Agent: "aider", Text: "add a --dry-run flag"}},
		{Seq: 2, Event: transcript.Event{ID: "a2", Kind: transcript.KindAssistantMessage, Agent: "aider", Text: "Added it."}},
		{Seq: 3, Event: transcript.Event{ID: "a3", Kind: transcript.KindSystem, Agent: "aider", Subtype: "commit"}},
	}
	f.configure(func(f *fakeDaemon) {
		f.sessions = []episode.SessionInfo{
			{
				ID: museSession, Agent: transcript.AgentClaudeCode, CWD: "/home/ada/muse", GitBranch: "main",
				Scope: []string{"repo:muse"}, Events: int64(8 + len(eps)), ByKind: byKind, Buffered: int64(len(eps)),
				FirstEventAt: at("2025-11-16T23:40:00Z"), LastEventAt: at("2025-11-17T09:27:00Z"), LastIngestAt: at("2025-11-17T09:27:01Z"),
				Files:       []string{"/home/ada/.claude/projects/-home-ada-muse/" + museSession + ".jsonl"},
				Checkpoints: 1, LastCheckpointAt: at("2025-11-16T23:55:00Z"),
			},
			{
				ID: museSubagent, ParentID: museSession, Agent: transcript.AgentClaudeCode, CWD: "/home/ada/muse", GitBranch: "main",
				Scope: []string{"repo:muse"}, Events: 6, ByKind: map[string]int64{"tool_call": 6}, Buffered: 6,
				FirstEventAt: at("2025-11-17T09:05:00Z"), LastEventAt: at("2025-11-17T09:10:00Z"), LastIngestAt: at("2025-11-17T09:10:00Z"),
				Files: []string{"/home/ada/.claude/projects/-home-ada-muse/" + museSession + "/subagents/agent-a1b2c3.jsonl"},
			},
			{
				ID: siteSession, Agent: transcript.AgentCodex, CWD: "/home/ada/site", Scope: []string{"repo:site", "module:blog"},
				Events: 40, ByKind: map[string]int64{"user_prompt": 5, "assistant_message": 15, "tool_call": 10, "tool_result": 10},
				FirstEventAt: at("2025-11-15T17:00:00Z"), LastEventAt: at("2025-11-15T18:00:00Z"), LastIngestAt: at("2025-11-15T18:00:02Z"),
				Files:       []string{"/home/ada/.codex/sessions/2025/11/15/rollout-2025-11-15T17-00-00-" + siteSession + ".jsonl"},
				Checkpoints: 3, LastCheckpointAt: at("2025-11-15T18:10:00Z"),
			},
			{
				ID: aiderSession, Agent: "aider", Scope: []string{}, Events: 3,
				ByKind: map[string]int64{"user_prompt": 1, "assistant_message": 1, "system": 1}, Buffered: 3,
				LastIngestAt: at("2025-11-12T08:00:00Z"), Files: []string{"/home/ada/transcripts/aider.jsonl"},
			},
		}
		f.episodes = map[string][]episode.BufferedEvent{museSession: eps, museSubagent: sub, aiderSession: aider}
	})
	return f, "--socket=" + f.sock
}

// ingestStatus is what a daemon that has read the sessions above reports.
func ingestStatus() *api.IngestStatus {
	return &api.IngestStatus{
		Watches: []api.WatchStatus{
			{Name: "claude-code", Path: "/home/ada/.claude/projects", Format: "claude-code", Exists: true, Files: 2},
			{Name: "codex", Path: "/home/ada/.codex/sessions", Format: "codex", Exists: true, Files: 1},
			{Name: "gemini", Path: "/home/ada/.gemini/tmp", Format: "jsonl", Exists: false},
		},
		WatchedDirs: 9, Files: 3,
		Bytes: 5<<20 + 300<<10, Lines: 1234, Events: 1180, Duplicates: 4,
		Skipped:    map[string]int64{"invalid_json": 2, "noise:progress": 40, "line_too_long": 1, "unknown_type:x-custom": 2, "boilerplate": 0},
		Redactions: 3, RedactionsByKind: map[string]int64{"high-entropy": 2, "aws-access-key": 1}, BacklogBytes: 0, LastIngestAt: "2025-11-17T09:27:01.000000Z",
		Sessions: 4, BufferedEvents: 27, Checkpoints: 4,
		Errors: []string{"watch /home/ada/.claude/projects/big: too many inotify watches (fs.inotify.max_user_watches = 8192): raise it with sudo sysctl fs.inotify.max_user_watches=524288"},
	}
}

func TestSessionOutputs(t *testing.T) {
	f, sock := ingested(t)
	f.configure(func(f *fakeDaemon) { f.ingest = ingestStatus() })
	tests := []struct {
		name   string
		args   []string
		golden string
		into   any
	}{
		{"sessions", []string{"sessions"}, "sessions.txt", nil},
		{"sessions json", []string{"sessions", "-o", "json"}, "sessions.json", &api.SessionsResponse{}},
		{"sessions by agent", []string{"sessions", "--agent", "claude-code"}, "sessions_agent.txt", nil},
		{"sessions by scope with limit", []string{"sessions", "--scope", "repo:muse", "--limit", "1"}, "sessions_scope.txt", nil},
		{"session show", []string{"session", "show", museSession}, "session_show.txt", nil},
		{"session show json", []string{"session", "show", museSession, "-o", "json"}, "session_show.json", &api.SessionResponse{}},
		{"session show subagent, first events", []string{"session", "show", museSubagent, "--limit", "4"}, "session_show_subagent.txt", nil},
		{"session show checkpointed", []string{"session", "show", siteSession}, "session_show_empty.txt", nil},
		{"session show without times or scope", []string{"session", "show", aiderSession}, "session_show_aider.txt", nil},
		{"status with ingestion", []string{"status"}, "status_ingest.txt", nil},
		{"status with ingestion json", []string{"status", "-o", "json"}, "status_ingest.json", &api.Status{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := ok(t, append([]string{sock}, tt.args...)...)
			golden(t, tt.golden, out)
			if tt.into == nil {
				return
			}
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tt.into); err != nil {
				t.Fatalf("-o json output does not decode as %T: %v", tt.into, err)
			}
		})
	}
}

func TestStatusIngestStates(t *testing.T) {
	f := startFake(t)
	in := &api.IngestStatus{
		Watches:      []api.WatchStatus{},
		Skipped:      map[string]int64{},
		BacklogBytes: 3 << 20,
	}
	f.configure(func(f *fakeDaemon) { f.ingest = in })
	out := ok(t, "--socket", f.sock, "status")
	for _, want := range []string{
		"\nWatches\n  none: no watch block is configured and no default transcript folder exists\n",
		"  skipped       none\n",
		"  backlog       3.0 MiB not read yet\n",
		"  last ingest   never\n",
		"  sessions      0 (0 events buffered, 0 checkpoints)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status does not contain %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Recent errors") {
		t.Errorf("status shows an errors section without errors:\n%s", out)
	}
}

func TestSessionsNothingFound(t *testing.T) {
	f, sock := ingested(t)
	empty := startFake(t)
	empty.configure(func(f *fakeDaemon) { f.sessions = nil })
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"nothing ingested", []string{"--socket", empty.sock, "sessions"},
			"no sessions yet: medalliond has not ingested any transcript (medallionctl status shows what it watches)\n"},
		{"no match", []string{sock, "sessions", "--agent", "gemini", "--scope", "repo:muse"},
			"no sessions found for agent gemini, scope repo:muse (4 in all)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ctl(t, "", tt.args...)
			if r.code != 0 || r.stdout != "" || r.stderr != tt.wantStderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0, no stdout, stderr %q", r.code, r.stdout, r.stderr, tt.wantStderr)
			}
		})
	}
	// Scripts asking for JSON get an empty list, not a note.
	if out := ok(t, sock, "sessions", "--agent", "gemini", "-o", "json"); out != "{\n  \"sessions\": []\n}\n" {
		t.Errorf("sessions -o json with no match = %q", out)
	}
	if got := f.seen(); !reflect.DeepEqual(got, []string{"GET /v1/sessions", "GET /v1/sessions"}) {
		t.Errorf("requests = %q", got)
	}
}

// TestSessionShowPages checks that --all reads the whole episode page by
// page, each page starting after the last event of the one before, and that
// --limit asks for just one event more than it shows.
func TestSessionShowPages(t *testing.T) {
	f := startFake(t)
	const n = 2500
	events := make([]episode.BufferedEvent, n)
	for i := range events {
		events[i] = episode.BufferedEvent{Seq: uint64(100 + i), Event: transcript.Event{
			ID: fmt.Sprint(i), Kind: transcript.KindAssistantMessage, Agent: "codex", Text: fmt.Sprintf("message %d", i),
		}}
	}
	f.configure(func(f *fakeDaemon) {
		f.sessions = []episode.SessionInfo{{ID: "long", Agent: "codex", Scope: []string{"repo:muse"}, Events: n, Buffered: n}}
		f.episodes = map[string][]episode.BufferedEvent{"long": events}
	})

	tests := []struct {
		name      string
		args      []string
		wantLines int    // event lines printed
		wantLast  string // the last event line's summary
		wantMore  bool
		requests  []string
	}{
		{"all", []string{"--all"}, n, "message 2499", false, []string{
			"GET /v1/sessions/long?limit=1000",
			"GET /v1/sessions/long?after=1099&limit=1000",
			"GET /v1/sessions/long?after=2099&limit=1000",
		}},
		{"default limit", nil, defaultEpisodeShown, "message 49", true, []string{
			"GET /v1/sessions/long?limit=51",
		}},
		{"limit over a page", []string{"--limit", "1500"}, 1500, "message 1499", true, []string{
			"GET /v1/sessions/long?limit=1000",
			"GET /v1/sessions/long?after=1099&limit=501",
		}},
		{"limit of exactly everything", []string{"--limit", "2500"}, n, "message 2499", false, []string{
			"GET /v1/sessions/long?limit=1000",
			"GET /v1/sessions/long?after=1099&limit=1000",
			"GET /v1/sessions/long?after=2099&limit=501",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.seen())
			out := ok(t, append([]string{"--socket", f.sock, "session", "show", "long"}, tt.args...)...)
			lines := 0
			last := ""
			for line := range strings.Lines(out) {
				if strings.Contains(line, "assistant_message") {
					lines++
					last = strings.TrimSpace(line)
				}
			}
			if lines != tt.wantLines || !strings.HasSuffix(last, tt.wantLast) {
				t.Errorf("%d event lines, the last %q; want %d ending in %q", lines, last, tt.wantLines, tt.wantLast)
			}
			more := fmt.Sprintf("Showing the first %d of %d buffered events; --all shows every one.", tt.wantLines, n)
			if got := strings.Contains(out, more); got != tt.wantMore {
				t.Errorf("output says %q: %v, want %v", more, got, tt.wantMore)
			}
			if got := f.seen()[before:]; !reflect.DeepEqual(got, tt.requests) {
				t.Errorf("requests\n got %q\nwant %q", got, tt.requests)
			}
		})
	}

	// -o json holds the same events as the table.
	var resp api.SessionResponse
	if err := json.Unmarshal([]byte(ok(t, "--socket", f.sock, "session", "show", "long", "--all", "-o", "json")), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Events) != n || resp.Events[0].Seq != 100 || resp.Events[n-1].Seq != 100+n-1 || resp.Session.ID != "long" {
		t.Errorf("-o json: %d events from seq %d, session %q", len(resp.Events), resp.Events[0].Seq, resp.Session.ID)
	}
}

func TestCheckpoint(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		errs       map[string]string
		wantCode   int
		wantStdout string
		wantStderr string
		wantReq    api.CheckpointRequest
		stdin      string
		// wantBuffered is each session's buffer after the command.
		wantBuffered map[string]int64
	}{
		{
			name: "every session",
			args: []string{"checkpoint", "--note", "parser fixed; streaming next"},
			wantStdout: "checkpoint " + museSession + " → repo:muse: 18 events → medallion repo-muse-project-state version 2 (1 avoid_repeating, 2 invariants)\n" +
				"checkpoint " + museSubagent + " → repo:muse: 6 events → medallion repo-muse-project-state version 1 (1 avoid_repeating, 2 invariants)\n" +
				"checkpoint " + aiderSession + " → -: skipped, 3 events kept: no scope: session has no working directory\n",
			wantReq:      api.CheckpointRequest{Note: "parser fixed; streaming next"},
			wantBuffered: map[string]int64{museSession: 0, museSubagent: 0, siteSession: 0, aiderSession: 3},
		},
		{
			name:         "one session",
			args:         []string{"checkpoint", "--session", museSubagent},
			wantStdout:   "checkpoint " + museSubagent + " → repo:muse: 6 events → medallion repo-muse-project-state version 1 (1 avoid_repeating, 2 invariants)\n",
			wantReq:      api.CheckpointRequest{SessionID: museSubagent},
			wantBuffered: map[string]int64{museSession: 18, museSubagent: 0, siteSession: 0, aiderSession: 3},
		},
		{
			name:     "a failure is printed in its place and fails the command",
			args:     []string{"checkpoint"},
			errs:     map[string]string{museSession: "curator: store medallion: disk full"},
			wantCode: 1,
			wantStdout: "checkpoint " + museSession + " → repo:muse: failed: curator: store medallion: disk full\n" +
				"checkpoint " + museSubagent + " → repo:muse: 6 events → medallion repo-muse-project-state version 1 (1 avoid_repeating, 2 invariants)\n" +
				"checkpoint " + aiderSession + " → -: skipped, 3 events kept: no scope: session has no working directory\n",
			wantStderr:   "medallionctl: 1 of 3 checkpoints failed\n",
			wantBuffered: map[string]int64{museSession: 18, museSubagent: 0, siteSession: 0, aiderSession: 3},
		},
		{
			name:         "nothing buffered",
			args:         []string{"checkpoint", "--session", siteSession},
			wantStderr:   "nothing to checkpoint: session " + siteSession + " has no buffered events\n",
			wantReq:      api.CheckpointRequest{SessionID: siteSession},
			wantBuffered: map[string]int64{museSession: 18, museSubagent: 6, siteSession: 0, aiderSession: 3},
		},
		{
			name:       "evidence for a scope",
			args:       []string{"checkpoint", "--node", "repo:demo", "--tag", "seed", "--evidence", "-", "--note", "n"},
			stdin:      `{"session_summary": "Parser rewritten.", "transcripts": ["user: never vendor deps\nassistant: ok"], "artefacts": {"pr": "#12"}}`,
			wantStdout: "checkpoint evidence-5d41402abc4b2a76 → repo:demo: 2 events → medallion med-repo-demo version 1 (1 invariants, 1 open_questions)\n",
			wantReq: api.CheckpointRequest{Nodes: []string{"repo:demo"}, Tags: []string{"seed"}, Note: "n", Evidence: &api.Evidence{
				SessionSummary: "Parser rewritten.", Transcripts: []string{"user: never vendor deps\nassistant: ok"}, Artefacts: map[string]api.Artefact{"pr": "#12"},
			}},
			wantBuffered: map[string]int64{museSession: 18, museSubagent: 6, siteSession: 0, aiderSession: 3},
		},
		{
			name:         "unknown session",
			args:         []string{"checkpoint", "--session", "nope"},
			wantCode:     1,
			wantStderr:   "medallionctl: checkpoint: session nope not found\n",
			wantReq:      api.CheckpointRequest{SessionID: "nope"},
			wantBuffered: map[string]int64{museSession: 18, museSubagent: 6, siteSession: 0, aiderSession: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, sock := ingested(t)
			f.configure(func(f *fakeDaemon) { f.checkpointErrs = tt.errs })
			r := ctl(t, tt.stdin, append([]string{sock}, tt.args...)...)
			if r.code != tt.wantCode || r.stdout != tt.wantStdout || r.stderr != tt.wantStderr {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d\nstdout:\n%s\nstderr:\n%s",
					r.code, r.stdout, r.stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.checkpointReqs) != 1 || !reflect.DeepEqual(f.checkpointReqs[0], tt.wantReq) {
				t.Errorf("checkpoint requests = %+v, want one %+v", f.checkpointReqs, tt.wantReq)
			}
			for _, s := range f.sessions {
				if s.Buffered != tt.wantBuffered[s.ID] {
					t.Errorf("session %s has %d buffered after, want %d", s.ID, s.Buffered, tt.wantBuffered[s.ID])
				}
			}
		})
	}
}

func TestCheckpointJSON(t *testing.T) {
	f, sock := ingested(t)
	f.configure(func(f *fakeDaemon) {
		f.checkpointErrs = map[string]string{museSubagent: "curate: store medallion: disk full"}
	})
	r := ctl(t, "", sock, "checkpoint", "-o", "json")
	if r.code != 1 || r.stderr != "medallionctl: 1 of 3 checkpoints failed\n" {
		t.Errorf("exit %d, stderr %q; want 1 and the failure count", r.code, r.stderr)
	}
	golden(t, "checkpoint.json", r.stdout)
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	var resp api.CheckpointResponse
	if err := dec.Decode(&resp); err != nil || len(resp.Checkpoints) != 3 {
		t.Fatalf("-o json = %+v, %v", resp, err)
	}
}

func TestIngestionDisabled(t *testing.T) {
	f := startFake(t)
	f.configure(func(f *fakeDaemon) { f.noIngest = true })
	for _, args := range [][]string{
		{"sessions"},
		{"session", "show", museSession},
		{"checkpoint"},
	} {
		r := ctl(t, "", append([]string{"--socket", f.sock}, args...)...)
		if r.code != 1 || r.stdout != "" || r.stderr != "medallionctl: ingestion is not enabled in this daemon\n" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	// status still works, without an ingestion section.
	if out := ok(t, "--socket", f.sock, "status"); strings.Contains(out, "Ingestion") {
		t.Errorf("status of a daemon without ingestion:\n%s", out)
	}
}

func TestSessionNotFound(t *testing.T) {
	_, sock := ingested(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"session", "show", "nope"}, "medallionctl: session nope not found\n"},
		{[]string{"session", "show", "a//b"}, "medallionctl: invalid session id \"a//b\": empty, \".\" and \"..\" path segments cannot be requested\n"},
	}
	for _, tt := range tests {
		r := ctl(t, "", append([]string{sock}, tt.args...)...)
		if r.code != 1 || r.stdout != "" || r.stderr != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
}

func TestAgo(t *testing.T) {
	tests := []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{testNow, "just now"},
		{testNow.Add(-500 * time.Millisecond), "just now"},
		{testNow.Add(-45 * time.Second), "45s ago"},
		{testNow.Add(-3*time.Minute - 59*time.Second), "3m ago"},
		{testNow.Add(-5 * time.Hour), "5h ago"},
		{testNow.Add(-47 * time.Hour), "47h ago"},
		{testNow.Add(-72 * time.Hour), "3d ago"},
		{testNow.Add(30 * time.Second), "just now"},
		{testNow.Add(10 * time.Minute), "in 10m"},
	}
	for _, tt := range tests {
		if got := ago(tt.t); got != tt.want {
			t.Errorf("ago(now%+v) = %q, want %q", tt.t.Sub(testNow), got, tt.want)
		}
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		e    transcript.Event
		want string
	}{
		{"command wins for a call", transcript.Event{Kind: transcript.KindToolCall, Command: "make\nmake test", Text: "build"}, "$ make"},
		{"files", transcript.Event{Kind: transcript.KindToolCall, FilePaths: []string{"a.go", "b.go"}}, "a.go, b.go"},
		{"search in files", transcript.Event{Kind: transcript.KindToolCall, Query: "func main", FilePaths: []string{"cmd"}}, "func main in cmd"},
		{"search", transcript.Event{Kind: transcript.KindToolCall, Query: "*.go"}, "*.go"},
		{"url", transcript.Event{Kind: transcript.KindToolCall, URL: "https://example.com"}, "https://example.com"},
		{"a call with only text", transcript.Event{Kind: transcript.KindToolCall, Text: "\n\n  explain  "}, "explain"},
		{"text wins for a result", transcript.Event{Kind: transcript.KindToolResult, Command: "make", Text: "ok"}, "ok"},
		{"a result without text names the call", transcript.Event{Kind: transcript.KindToolResult, Command: "make"}, "$ make"},
		{"nothing", transcript.Event{Kind: transcript.KindSystem}, "-"},
		{"clipped", transcript.Event{Kind: transcript.KindUserPrompt, Text: strings.Repeat("ab ", 40)},
			strings.TrimSpace(strings.Repeat("ab ", 24)) + "…"},
		{"wide runes count once", transcript.Event{Kind: transcript.KindUserPrompt, Text: strings.Repeat("é", 80)},
			strings.Repeat("é", summaryWidth-1) + "…"},
		{"todos", transcript.Event{Kind: transcript.KindPlanUpdate, Todos: []transcript.Todo{{Content: "a", Status: "pending"}}},
			"1 todo: 0 done, 0 in progress, 1 pending"},
	}
	for _, tt := range tests {
		if got := summary(tt.e); got != tt.want {
			t.Errorf("%s: summary = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestSessionsOrder: the table is ordered by the activity it shows, not
// by the daemon's order (which may follow when sessions were read).
func TestSessionsOrder(t *testing.T) {
	f := startFake(t)
	f.configure(func(f *fakeDaemon) {
		f.sessions = []episode.SessionInfo{
			{ID: "read-last-old", Agent: "codex", LastEventAt: at("2025-11-10T00:00:00Z"), LastIngestAt: testNow},
			{ID: "no-times", Agent: "aider", LastIngestAt: at("2025-11-16T00:00:00Z")},
			{ID: "newest", Agent: "codex", LastEventAt: at("2025-11-17T09:00:00Z"), LastIngestAt: at("2025-11-17T09:00:00Z")},
		}
	})
	out := ok(t, "--socket", f.sock, "sessions", "--limit", "2")
	var ids []string
	for line := range strings.Lines(out) {
		ids = append(ids, strings.Fields(line)[0])
	}
	if want := []string{"SESSION", "newest", "no-times"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("rows %q, want %q:\n%s", ids, want, out)
	}
}

// TestCheckpointEvidenceErrors: the evidence flags are checked before
// anything is sent, and a bad evidence file names its problem.
func TestCheckpointEvidenceErrors(t *testing.T) {
	f, sock := ingested(t)
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		want     string // in stderr
	}{
		{"node without evidence", []string{"--node", "repo:x"}, "", 2, "--node and --tag go with --evidence"},
		{"evidence without node", []string{"--evidence", "-"}, "{}", 2, "--evidence needs --node"},
		{"evidence and session", []string{"--session", museSession, "--node", "repo:x", "--evidence", "-"}, "{}", 2, "exclude each other"},
		{"blank node", []string{"--node", " ", "--evidence", "-"}, "{}", 2, "--node needs a graph node"},
		{"no file", []string{"--node", "repo:x", "--evidence", filepath.Join(dir, "missing.json")}, "", 1, "read evidence: open"},
		{"not JSON", []string{"--node", "repo:x", "--evidence", "-"}, "user: hi", 1, "evidence stdin: invalid character"},
		{"wrong type", []string{"--node", "repo:x", "--evidence", "-"}, `{"transcripts": "user: hi"}`, 1,
			"evidence stdin: field transcripts: want a JSON array, got a string"},
		{"unknown field", []string{"--node", "repo:x", "--evidence", "-"}, `{"summary": "s"}`, 1, `unknown field "summary"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ctl(t, tt.stdin, append([]string{sock, "checkpoint"}, tt.args...)...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", r.code, r.stdout, r.stderr, tt.wantCode, tt.want)
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.checkpointReqs) != 0 {
		t.Errorf("bad command lines reached the daemon: %+v", f.checkpointReqs)
	}
}
