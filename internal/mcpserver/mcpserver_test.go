package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/daemon"
	"github.com/medallionhq/medallion/internal/mcpserver"
	"github.com/medallionhq/medallion/internal/medallion"
)

// startDaemon runs the real daemon (Badger under t.TempDir(), its Unix
// socket) watching root for JSONL transcripts, and returns its socket.
func startDaemon(t *testing.T, root string) string {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "mcp") // sun_path is ~104 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	t.Setenv("HOME", filepath.Join(t.TempDir(), "home"))
	cfg := config.Default()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Socket = filepath.Join(sockDir, "s", "medallion.sock")
	cfg.Watches = []config.Watch{{Name: "agent", Path: root, Format: "jsonl", Include: config.DefaultInclude, Exclude: []string{}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.Run(ctx, cfg, hclog.NewNullLogger()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	c := client.New(cfg.Socket)
	waitFor(t, "the daemon to answer", func() bool { _, err := c.Status(context.Background()); return err == nil })
	return cfg.Socket
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// connect serves the MCP server over in-memory transports to a go-sdk
// client named like an agent.
func connect(t *testing.T, sock string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcpserver.New(client.New(sock), nil)
	if err := srv.CheckDaemon(ctx); err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its text and structured content; a tool
// error fails the test unless wantError.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, wantError bool) (string, json.RawMessage) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError != wantError {
		t.Fatalf("%s(%v): error %v, want %v: %s", name, args, res.IsError, wantError, text.String())
	}
	raw, _ := json.Marshal(res.StructuredContent)
	return text.String(), raw
}

// project writes two versions of the medallion of dir's scope: version 2
// supersedes a decision and resolves a question.
func project(t *testing.T, c *client.Client, nodes []string) string {
	t.Helper()
	ctx := context.Background()
	m := &medallion.Medallion{
		Meta:  medallion.Meta{MedallionID: "proj-state", SchemaVersion: medallion.SchemaVersion, Model: "tier0", Status: medallion.StatusActive},
		Scope: medallion.Scope{GraphNodes: nodes, Tags: []string{"project_state"}},
		Decisions: []medallion.Decision{
			{ID: "D-001", Statement: "Parse scores with a hand-written lexer", Rationale: "the grammar is tiny", Confidence: 0.8},
		},
		OpenQuestions: []medallion.OpenQuestion{{ID: "Q-001", Question: "Should tuplets nest?", BlockedOn: []string{}, Priority: medallion.PriorityHigh}},
	}
	m.Summary.HighLevel = "Muse turns plain-text scores into MIDI."
	if _, err := c.Put(ctx, m); err != nil {
		t.Fatal(err)
	}
	m.Decisions = []medallion.Decision{
		{ID: "D-002", Statement: "Parse scores with a generated PEG parser", Rationale: "This supersedes D-001 (the lexer could not nest tuplets).", Confidence: 0.8},
		{ID: "D-003", Statement: "Tuplets nest to any depth", Rationale: "This resolves Q-001.", Confidence: 0.9},
	}
	m.OpenQuestions = nil
	if _, err := c.Put(ctx, m); err != nil {
		t.Fatal(err)
	}
	return m.Meta.MedallionID
}

func TestToolsAgainstTheDaemon(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(t.TempDir(), "muse")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := startDaemon(t, root)
	c := client.New(sock)
	loaded, err := c.Load(ctx, api.LoadRequest{CWD: dir})
	if err != nil {
		t.Fatal(err)
	}
	nodes := loaded.Scope // what the daemon makes of dir
	id := project(t, c, nodes)
	cs := connect(t, sock)

	t.Run("tools", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		readOnly := map[string]bool{}
		for _, tool := range res.Tools {
			readOnly[tool.Name] = tool.Annotations != nil && tool.Annotations.ReadOnlyHint
			if !strings.Contains(tool.Description, "Call") {
				t.Errorf("tool %s does not say when to call it: %s", tool.Name, tool.Description)
			}
		}
		want := map[string]bool{"load": true, "search": true, "get": true, "record": false, "checkpoint": false}
		if fmt.Sprint(readOnly) != fmt.Sprint(want) {
			t.Errorf("tools and their read-only hints: %v, want %v", readOnly, want)
		}
	})

	t.Run("load", func(t *testing.T) {
		text, _ := call(t, cs, "load", map[string]any{"cwd": dir}, false)
		if !strings.Contains(text, "generated PEG parser") || strings.Contains(text, "hand-written lexer") {
			t.Errorf("load gave:\n%s", text)
		}
		text, _ = call(t, cs, "load", map[string]any{"node": []string{"repo:elsewhere"}}, false)
		if !strings.Contains(text, "No save file yet") {
			t.Errorf("load of an unknown scope: %s", text)
		}
		if text, _ := call(t, cs, "load", map[string]any{"cwd": "muse"}, true); !strings.Contains(text, "absolute") {
			t.Errorf("load with a relative cwd: %s", text)
		}
	})

	t.Run("search and get", func(t *testing.T) {
		text, raw := call(t, cs, "search", map[string]any{"query": "parse scores lexer"}, false)
		var resp api.SearchResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range resp.Results {
			got = append(got, r.Item+" "+r.State+" "+r.By)
		}
		wantOld := id + ":D-001 superseded D-002"
		if !slices.Contains(got, wantOld) || !slices.Contains(got, id+":D-002 current ") {
			t.Fatalf("search results %q, want the current D-002 and %q", got, wantOld)
		}
		if !strings.Contains(text, "superseded by D-002 after v1") {
			t.Errorf("search text does not mark the superseded decision:\n%s", text)
		}
		text, raw = call(t, cs, "get", map[string]any{"item": id + ":D-001", "version": 1}, false)
		var it api.Item
		if err := json.Unmarshal(raw, &it); err != nil {
			t.Fatal(err)
		}
		if it.State != api.StateSuperseded || it.By != "D-002" || it.Latest != 2 || !strings.Contains(it.Detail, "the grammar is tiny") {
			t.Errorf("get %s:D-001 v1 = %+v", id, it)
		}
		if !strings.Contains(text, "Why: the grammar is tiny") {
			t.Errorf("get text:\n%s", text)
		}
		text, _ = call(t, cs, "search", map[string]any{"query": "nest tuplets"}, false)
		if !strings.Contains(text, id+":Q-001 [open question, resolved by D-003 after v1]") {
			t.Errorf("the resolved question is not marked:\n%s", text)
		}
		call(t, cs, "search", map[string]any{"query": "  "}, true)
		if text, _ := call(t, cs, "get", map[string]any{"item": id + ":D-009"}, true); !strings.Contains(text, "no item") {
			t.Errorf("get of an absent item: %s", text)
		}
	})

	t.Run("record", func(t *testing.T) {
		text, raw := call(t, cs, "record", map[string]any{"cwd": dir, "kind": "dead_end", "text": "Do not parse scores with regular expressions", "why": "nested tuplets broke every attempt"}, false)
		var rec api.RecordResponse
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.MedallionID != id || rec.Version != 3 || !strings.Contains(text, "pending the user's review") {
			t.Fatalf("record: %+v %s", rec, text)
		}
		// It waits for review, under the agent's name, and load marks it.
		rv, err := c.Review(ctx, client.ReviewRequest{Nodes: nodes})
		if err != nil {
			t.Fatal(err)
		}
		if len(rv.Items) != 1 || rv.Items[0].Source != "agent:test-agent" || rv.Items[0].State != medallion.ReviewPending ||
			rv.Items[0].Text != "Do not parse scores with regular expressions — nested tuplets broke every attempt" {
			t.Fatalf("review after record: %+v", rv.Items)
		}
		if got, _ := call(t, cs, "load", map[string]any{"cwd": dir}, false); !strings.Contains(got, "regular expressions") || !strings.Contains(got, "unreviewed") {
			t.Errorf("load after record:\n%s", got)
		}
		if got, _ := call(t, cs, "search", map[string]any{"query": "regular expressions"}, false); !strings.Contains(got, "unreviewed") {
			t.Errorf("search after record:\n%s", got)
		}
		// The same again stores nothing.
		text, _ = call(t, cs, "record", map[string]any{"cwd": dir, "kind": "dead_end", "text": "Do not parse scores with regular expressions", "why": "nested tuplets broke every attempt"}, false)
		if !strings.Contains(text, "already recorded") {
			t.Errorf("a second record: %s", text)
		}
		// A new scope gets its medallion.
		_, raw = call(t, cs, "record", map[string]any{"node": []string{"repo:fresh"}, "kind": "decision", "text": "Use tabs in scores", "why": "the user said so"}, false)
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		if !rec.Created || rec.Version != 1 || !strings.HasSuffix(rec.Item, ":D-001") {
			t.Errorf("record into a new scope: %+v", rec)
		}
		if text, _ := call(t, cs, "record", map[string]any{"cwd": dir, "kind": "wish", "text": "x"}, true); !strings.Contains(text, "kind must be") {
			t.Errorf("a bad kind: %s", text)
		}
	})

	t.Run("checkpoint", func(t *testing.T) {
		text, _ := call(t, cs, "checkpoint", nil, false)
		if !strings.Contains(text, "Nothing to checkpoint") {
			t.Errorf("checkpoint with nothing buffered: %s", text)
		}
		lines := []string{
			`{"kind":"user_prompt","id":"1","session_id":"s1","agent":"acme","cwd":%q,"text":"add a metronome track"}`,
			`{"kind":"tool_call","id":"2","session_id":"s1","agent":"acme","cwd":%q,"tool":"shell","tool_call_id":"c1","command":"go test ./..."}`,
			`{"kind":"tool_result","id":"3","session_id":"s1","agent":"acme","cwd":%q,"tool":"shell","tool_call_id":"c1","exit_code":0,"text":"ok"}`,
		}
		var b strings.Builder
		for _, l := range lines {
			fmt.Fprintf(&b, l+"\n", dir)
		}
		if err := os.WriteFile(filepath.Join(root, "s1.jsonl"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the session to be ingested", func() bool {
			s, err := c.Sessions(ctx)
			return err == nil && len(s) == 1 && s[0].Buffered == 3
		})
		text, _ = call(t, cs, "checkpoint", map[string]any{"note": "metronome done"}, false)
		if !strings.Contains(text, "session s1: 3 events") {
			t.Errorf("checkpoint: %s", text)
		}
	})
}

func TestFailsFastWhenTheDaemonIsDown(t *testing.T) {
	srv := mcpserver.New(client.New(filepath.Join(t.TempDir(), "none.sock")), nil)
	err := srv.RunStdio(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot reach medalliond") {
		t.Fatalf("RunStdio with no daemon: %v", err)
	}
}
