package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/config"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// Generous: under -race on a busy 2-core machine the full-disk test
	// writes 32 MiB before its condition holds. It is only the limit of a
	// failing wait, never a measure.
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIngestionWired: a transcript written under a watch root shows up as
// a session through the API, status reports the watch and the counts, a
// manual checkpoint curates the episode into a Tier 0 medallion of the
// session's scope and clears the buffer, and an evidence checkpoint
// creates the medallion of its nodes with its tags.
func TestIngestionWired(t *testing.T) {
	cfg := testConfig(t)
	root := filepath.Join(t.TempDir(), "transcripts")
	cfg.Watches = []config.Watch{{Name: "cc", Path: root, Format: "claude-code", Include: config.DefaultInclude, Exclude: []string{}}}
	repo := filepath.Join(t.TempDir(), "muse")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	c := client.New(cfg.Socket)
	ctx := context.Background()

	// The root is created after start, with the file already in it.
	line := `{"type":"user","sessionId":"s-1","uuid":"u-1","cwd":"` + repo + `","timestamp":"2026-03-02T09:00:00Z","message":{"role":"user","content":"add a flag"}}` + "\n" +
		`{"type":"assistant","sessionId":"s-1","uuid":"u-2","cwd":"` + repo + `","timestamp":"2026-03-02T09:00:01Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t-1","name":"Read","input":{"file_path":"` + repo + `/cmd/main.go"}}]}}` + "\n"
	tmp := filepath.Join(t.TempDir(), "p")
	if err := os.MkdirAll(filepath.Join(tmp, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "proj", "s-1.jsonl"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, root); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the session", func() bool {
		s, err := c.Sessions(ctx)
		return err == nil && len(s) == 1 && s[0].Buffered == 2
	})
	sessions, _ := c.Sessions(ctx)
	if s := sessions[0]; s.ID != "s-1" || s.Agent != "claude-code" || !slices.Equal(s.Scope, []string{"repo:muse"}) || s.Buffered != 2 {
		t.Errorf("session = %+v", s)
	}
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in := st.Ingest
	if in == nil || len(in.Watches) != 1 || !in.Watches[0].Exists || in.Watches[0].Format != "claude-code" || in.Files != 1 || in.Events != 2 || in.Sessions != 1 || in.BufferedEvents != 2 || in.WatchedDirs < 2 {
		t.Errorf("ingest status = %+v", in)
	}
	resp, err := c.Checkpoint(ctx, api.CheckpointRequest{SessionID: "s-1", Note: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Checkpoints) != 1 || resp.Checkpoints[0].Events != 2 || resp.Checkpoints[0].Trigger != "manual" ||
		resp.Checkpoints[0].Version != 1 || resp.Checkpoints[0].Items["entry_points"] != 1 {
		t.Fatalf("checkpoint = %+v", resp.Checkpoints)
	}
	m, err := c.Get(ctx, resp.Checkpoints[0].MedallionID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Model != "tier0" || !slices.Equal(m.Scope.GraphNodes, []string{"repo:muse"}) || !slices.Contains(m.Affordances.RecommendedEntryPoints, "cmd/main.go") {
		t.Errorf("medallion = %+v", m)
	}

	// load --cwd resolves the folder as the ingester did.
	load, err := c.Load(ctx, api.LoadRequest{CWD: repo})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(load.Medallions, []string{m.Meta.MedallionID}) || !slices.Contains(load.Scope, "repo:muse") {
		t.Errorf("load --cwd %s = %+v", repo, load)
	}

	eresp, err := c.Checkpoint(ctx, api.CheckpointRequest{Nodes: []string{"repo:demo"}, Tags: []string{"seed"},
		Evidence: &api.Evidence{Transcripts: []string{"user: always use make to build"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(eresp.Checkpoints) != 1 || eresp.Checkpoints[0].Trigger != "evidence" || eresp.Checkpoints[0].Version != 1 {
		t.Fatalf("evidence checkpoint = %+v", eresp.Checkpoints)
	}
	em, err := c.Get(ctx, eresp.Checkpoints[0].MedallionID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(em.Scope.GraphNodes, []string{"repo:demo"}) || !slices.Contains(em.Scope.Tags, "seed") {
		t.Errorf("evidence medallion scope = %+v", em.Scope)
	}
	sess, err := c.Session(ctx, "s-1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Session.Buffered != 0 || sess.Session.Checkpoints != 1 {
		t.Errorf("after the checkpoint: %+v", sess.Session)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	log := r.log.String()
	for _, want := range []string{"watch: name=cc path=" + root, "checkpoint stored: session=s-1 trigger=manual events=2 medallion=" + m.Meta.MedallionID + " version=1 ", " entry_points=1 ",
		"ingestion stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	// Shutdown order: ingestion stops before the daemon says it stopped.
	if strings.Index(log, "ingestion stopped") > strings.Index(log, "medalliond stopped") {
		t.Errorf("ingestion stopped after the daemon:\n%s", log)
	}
}

// TestDefaultWatches: without watch blocks the daemon watches the agents'
// folders, says so, and picks one up that appears later.
func TestDefaultWatches(t *testing.T) {
	cfg := testConfig(t)
	home := os.Getenv("HOME")
	r := start(t, cfg)
	waitFor(t, "the log line", func() bool { return strings.Contains(r.log.String(), "no watched folder exists yet") })
	for _, want := range []string{"path=" + filepath.Join(home, ".claude", "projects"), "path=" + filepath.Join(home, ".codex", "sessions"),
		"path=" + filepath.Join(home, ".gemini", "tmp")} {
		if !strings.Contains(r.log.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	dir := filepath.Join(home, ".codex", "sessions", "2026", "03", "02")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"timestamp":"2026-03-02T10:15:00.010Z","type":"session_meta","payload":{"id":"019c9a10-1111-7aaa-8bbb-0123456789ab","cwd":"/tmp","originator":"codex_cli_rs","cli_version":"0.142.2"}}` + "\n" +
		`{"timestamp":"2026-03-02T10:15:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hello"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-03-02T10-15-00-019c9a10-1111-7aaa-8bbb-0123456789ab.jsonl"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	c := client.New(cfg.Socket)
	waitFor(t, "the codex session", func() bool {
		s, err := c.Sessions(context.Background())
		return err == nil && len(s) == 1 && s[0].Agent == "codex"
	})

	// A Gemini CLI session, its project's path registered as Gemini
	// registers it, and an older whole-file one beside it.
	chats := filepath.Join(home, ".gemini", "tmp", "inventory", "chats")
	if err := os.MkdirAll(chats, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "projects.json"), []byte(`{"projects":{"/src/inventory":"inventory"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	chat := `{"sessionId":"3f2a9c1e-5b7d-4e21-8a90-1c2d3e4f5a6b","projectHash":"5d4c","startTime":"2026-11-20T10:00:00.000Z","lastUpdated":"2026-11-20T10:00:00.000Z","kind":"main"}` + "\n" +
		`{"id":"u1","timestamp":"2026-11-20T10:00:01.000Z","type":"user","content":[{"text":"<hook_context>saved state</hook_context>\n\nfix Store.Return"}]}` + "\n"
	legacy := "{\n  \"sessionId\": \"5b959dae-8655-4cd1-b10f-720b8c336ea2\",\n  \"projectHash\": \"5d4c\",\n  \"messages\": [\n    {\"id\": \"u2\", \"type\": \"user\", \"content\": \"hello\"}\n  ]\n}\n"
	for name, content := range map[string]string{"session-2026-11-20T10-00-3f2a9c1e.jsonl": chat, "session-2025-12-01T21-45-5b959dae.json": legacy} {
		if err := os.WriteFile(filepath.Join(chats, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the gemini sessions", func() bool {
		s, err := c.Sessions(context.Background())
		n := 0
		for _, si := range s {
			if si.Agent == "gemini" && slices.Contains(si.Scope, "dir:inventory") {
				n++
			}
		}
		return err == nil && n == 2
	})
	ev, err := c.Session(context.Background(), "3f2a9c1e-5b7d-4e21-8a90-1c2d3e4f5a6b", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ev.Events {
		if e.Event.Kind == "user_prompt" && e.Event.Text != "fix Store.Return" {
			t.Errorf("the prompt kept the hook's context: %q", e.Event.Text)
		}
	}
}
