package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/scope"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/tail"
	"github.com/medallionhq/medallion/internal/transcript"
)

func openStore(t testing.TB) *store.Badger {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// run starts p and stops it (waiting for Run to return) at cleanup.
func run(t testing.TB, p *Pipeline) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// stop stops a pipeline started with start.
type stopper func()

func start(t testing.TB, p *Pipeline) stopper {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var once sync.Once
	s := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(s)
	return s
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stored returns how many times each event id is buffered in the store.
func stored(t testing.TB, st store.EpisodeStore) map[string]int {
	t.Helper()
	ctx := context.Background()
	sessions, err := st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, s := range sessions {
		events, err := st.Episode(ctx, s.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			out[e.Event.ID]++
		}
	}
	return out
}

// parsed returns the ids a fresh parser finds in the file, as ingestion
// must store them.
func parsed(t testing.TB, format transcript.Format, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := transcript.New(format, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	off := int64(0)
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if !bytes.HasSuffix(l, []byte("\n")) {
			break
		}
		for _, e := range p.ParseLine(bytes.TrimRight(l, "\r\n"), transcript.Position{File: fileIdentity(path), Path: path, Offset: off}) {
			out[e.ID] = 1
		}
		off += int64(len(l))
	}
	return out
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func diff(got, want map[string]int) string {
	var missing, extra, dup []string
	for k := range want {
		if got[k] == 0 {
			missing = append(missing, k)
		}
	}
	for k, v := range got {
		if want[k] == 0 {
			extra = append(extra, k)
		} else if v > 1 {
			dup = append(dup, k)
		}
	}
	return fmt.Sprintf("%d stored, %d expected; missing %d %.5q, extra %d %.5q, duplicated %d %.5q",
		len(got), len(want), len(missing), missing, len(extra), extra, len(dup), dup)
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t testing.TB, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func fileState(t testing.TB, st store.EpisodeStore, path string) *store.FileState {
	t.Helper()
	dev, ino, _, err := tail.Identify(path)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := st.FileState(context.Background(), tail.Key(dev, ino))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

var fixtures = filepath.Join("..", "..", "testdata", "transcripts")

// TestFixtures ingests every transcript fixture and stores exactly the
// events a fresh parser finds in them, with sessions, agents and scopes.
func TestFixtures(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	// A git repository where the Claude Code fixture's sessions worked is
	// not on this machine; a scope rule stands in for it.
	p, err := New(st, Options{
		Watches: []Watch{{Name: "cc", Format: "claude-code"}, {Name: "cx", Format: "codex"}, {Name: "auto", Format: FormatAuto}},
		Scope:   scope.New([]scope.Rule{{Path: "/home/dev/projects/inventory", Nodes: []string{"repo:inventory"}}}, scope.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p)
	want := map[string]int{}
	for _, fx := range []struct {
		watch, format, rel string
	}{
		{"cc", "claude-code", "claude-code/7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57.jsonl"},
		{"cc", "claude-code", "claude-code/7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57/subagents/agent-a1b2c3d.jsonl"},
		{"cc", "claude-code", "claude-code/b4c5d6e7-f809-4a1b-8c2d-3e4f5a6b7c8d.jsonl"},
		{"cx", "codex", "codex/rollout-2026-03-02T10-15-00-019c9a10-1111-7aaa-8bbb-0123456789ab.jsonl"},
		{"auto", "codex", "codex/rollout-2026-03-03T08-00-00-019c9b20-2222-7ccc-8ddd-0123456789ab.jsonl"},
		{"auto", "jsonl", "jsonl/acme-session-7.jsonl"},
	} {
		dst := filepath.Join(dir, fx.watch, fx.rel)
		copyFile(t, filepath.Join(fixtures, fx.rel), dst)
		for id := range parsed(t, transcript.Format(fx.format), dst) {
			want[id] = 1
		}
		p.Notify(fx.watch, dst)
	}
	waitFor(t, "every fixture event", func() bool { return len(stored(t, st)) >= len(want) })
	if got := stored(t, st); !equalCounts(got, want) {
		t.Fatalf("stored events differ from a direct parse: %s", diff(got, want))
	}
	s, err := st.Session(context.Background(), "7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57")
	if err != nil || s == nil {
		t.Fatalf("session: %v, %v", s, err)
	}
	if s.Agent != "claude-code" || !slices.Equal(s.Scope, []string{"repo:inventory"}) {
		t.Errorf("session = agent %q scope %q, want claude-code [repo:inventory]", s.Agent, s.Scope)
	}
	status := p.Status()
	if status.Files != 6 || status.Events != int64(len(want)) || status.BacklogBytes != 0 || status.Bytes == 0 || status.Lines == 0 {
		t.Errorf("status = %+v", status)
	}
	if status.Skipped["noise:progress"] == 0 && status.Skipped["boilerplate"] == 0 && len(status.Skipped) == 0 {
		t.Errorf("no skips counted: %v", status.Skipped)
	}
	// The auto watch remembered what it detected.
	if fs := fileState(t, st, filepath.Join(dir, "auto", "jsonl", "acme-session-7.jsonl")); fs == nil || fs.Format != "jsonl" || fs.Watch != "auto" {
		t.Errorf("file state = %+v", fs)
	}
}

// TestAppendsAndPartialLines: only complete lines are ingested; a half
// written line is picked up when its end arrives; a restarted pipeline
// continues where the last one stopped, without duplicates.
func TestAppendsAndPartialLines(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	gen := fixture.NewClaude("aaaaaaaa-0000-4000-8000-000000000001", dir, 7)
	var all []byte
	for range 5 {
		for _, l := range gen.Turn() {
			all = append(all, l...)
		}
	}
	cut := bytes.LastIndexByte(all[:len(all)-1], '\n') + 20 // inside the last line
	appendFile(t, path, all[:cut])

	p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}})
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, p)
	p.Notify("w", path)
	// Everything but the last line.
	os.WriteFile(filepath.Join(dir, "complete.jsonl"), all[:cut-19], 0o644)
	want := parsed(t, "claude-code", filepath.Join(dir, "complete.jsonl"))
	waitFor(t, "the complete lines", func() bool { return len(stored(t, st)) >= len(want) })
	if fs := fileState(t, st, path); fs.Offset != int64(cut-19) {
		t.Errorf("offset = %d, want %d (the start of the partial line)", fs.Offset, cut-19)
	}
	stop()

	// Finish the line and add more, while no pipeline runs; a new one
	// picks up from the stored offset.
	appendFile(t, path, all[cut:])
	more := gen.Turn()
	for _, l := range more {
		appendFile(t, path, l)
	}
	p2, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p2)
	p2.Notify("w", path)
	want = parsed(t, "claude-code", path)
	waitFor(t, "all lines", func() bool { return len(stored(t, st)) >= len(want) })
	if got := stored(t, st); !equalCounts(got, want) {
		t.Fatalf("%s", diff(got, want))
	}
	if p2.Status().Duplicates != 0 {
		t.Errorf("the second pipeline re-read lines: %d duplicates", p2.Status().Duplicates)
	}
}

// TestFileEdgeCases covers what files do to a tailer, one file each.
func TestFileEdgeCases(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	p, err := New(st, Options{
		Watches:   []Watch{{Name: "w", Format: "claude-code"}},
		MaxLine:   64 << 10,
		GoneGrace: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p)
	turn := func(id string, seed uint64) []byte {
		var b []byte
		for _, l := range fixture.NewClaude(id, dir, seed).Turn() {
			b = append(b, l...)
		}
		return b
	}
	write := func(path string, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ingested := func(path string) func() bool {
		return func() bool {
			fs := fileState(t, st, path)
			info, err := os.Stat(path)
			return err == nil && fs != nil && fs.Offset == info.Size()
		}
	}

	t.Run("truncated", func(t *testing.T) {
		path := filepath.Join(dir, "trunc.jsonl")
		write(path, turn("bbbbbbbb-0000-4000-8000-000000000001", 1))
		p.Notify("w", path)
		waitFor(t, "first generation", ingested(path))
		short := turn("bbbbbbbb-0000-4000-8000-000000000002", 2)
		short = short[:bytes.IndexByte(short, '\n')+1]
		write(path, short) // same inode, shorter
		want := parsed(t, "claude-code", path)
		p.Notify("w", path)
		waitFor(t, "second generation", func() bool { fs := fileState(t, st, path); return fs.Generation == 1 && fs.Offset == int64(len(short)) })
		got := stored(t, st)
		for id := range want {
			if got[id] != 1 {
				t.Errorf("event %s of the new generation stored %d times", id, got[id])
			}
		}
	})

	t.Run("replaced", func(t *testing.T) {
		path := filepath.Join(dir, "repl.jsonl")
		write(path, turn("cccccccc-0000-4000-8000-000000000001", 3))
		p.Notify("w", path)
		waitFor(t, "first file", ingested(path))
		old := fileState(t, st, path)
		tmp := filepath.Join(dir, "repl.tmp")
		write(tmp, turn("cccccccc-0000-4000-8000-000000000002", 4))
		if err := os.Rename(tmp, path); err != nil { // same path, new inode
			t.Fatal(err)
		}
		want := parsed(t, "claude-code", path)
		p.Notify("w", path)
		waitFor(t, "the new file", ingested(path))
		got := stored(t, st)
		for id := range want {
			if got[id] != 1 {
				t.Errorf("event %s of the new file stored %d times", id, got[id])
			}
		}
		waitFor(t, "the old file's state dropped", func() bool {
			fs, err := st.FileState(context.Background(), old.Key)
			return err == nil && fs == nil
		})
	})

	t.Run("renamed", func(t *testing.T) {
		path := filepath.Join(dir, "ren.jsonl")
		write(path, turn("dddddddd-0000-4000-8000-000000000001", 5))
		p.Notify("w", path)
		waitFor(t, "the file", ingested(path))
		before := fileState(t, st, path)
		to := filepath.Join(dir, "ren2.jsonl")
		if err := os.Rename(path, to); err != nil {
			t.Fatal(err)
		}
		p.Gone("w", path)
		appendFile(t, to, turn("dddddddd-0000-4000-8000-000000000001", 6))
		p.Notify("w", to)
		waitFor(t, "the renamed file", ingested(to))
		after := fileState(t, st, to)
		if after.Key != before.Key || after.Path != to || after.Generation != before.Generation || after.Lines <= before.Lines {
			t.Errorf("after the rename: %+v\nbefore: %+v", after, before)
		}
		if got, want := stored(t, st), parsed(t, "claude-code", to); !func() bool {
			for id := range want {
				if got[id] != 1 {
					return false
				}
			}
			return true
		}() {
			t.Errorf("renamed file: %s", diff(got, want))
		}
		// The rename did not read the file again.
		if after.Lines != int64(bytes.Count(mustRead(t, to), []byte("\n"))) {
			t.Errorf("lines = %d, want each line of the file once", after.Lines)
		}
		// Past the grace period the state is still there.
		time.Sleep(100 * time.Millisecond) // longer than GoneGrace, to show nothing happens
		if fs := fileState(t, st, to); fs == nil {
			t.Error("the renamed file's state was dropped")
		}
	})

	t.Run("deleted", func(t *testing.T) {
		path := filepath.Join(dir, "del.jsonl")
		write(path, turn("eeeeeeee-0000-4000-8000-000000000001", 7))
		p.Notify("w", path)
		waitFor(t, "the file", ingested(path))
		key := fileState(t, st, path).Key
		files := p.Status().Files
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		p.Gone("w", path)
		waitFor(t, "the state dropped", func() bool {
			fs, err := st.FileState(context.Background(), key)
			return err == nil && fs == nil && p.Status().Files == files-1
		})
	})

	t.Run("line over the cap, binary junk, glued records", func(t *testing.T) {
		path := filepath.Join(dir, "junk.jsonl")
		first := turn("ffffffff-0000-4000-8000-000000000001", 8)
		long := []byte(`{"type":"user","sessionId":"ffffffff-0000-4000-8000-000000000001","uuid":"ffffffff-long","message":{"role":"user","content":"` +
			strings.Repeat("x", 70<<10) + `"}}` + "\n")
		binary := []byte("\x00\x01\x02garbage\xff\xfe\n")
		notJSON := []byte("this is not json\n")
		a := fixture.NewClaude("ffffffff-0000-4000-8000-000000000002", dir, 9).Turn()
		glued := append(bytes.TrimSuffix(a[0], []byte("\n")), a[1]...)
		var data []byte
		for _, part := range [][]byte{first, long, binary, notJSON, glued} {
			data = append(data, part...)
		}
		write(path, data)
		before := p.Status().Skipped
		p.Notify("w", path)
		waitFor(t, "the file", ingested(path))
		fs := fileState(t, st, path)
		if fs.Skipped[tail.SkipLineTooLong] != 1 || fs.Skipped[tail.SkipBinary] != 1 || fs.Skipped["invalid_json"] != 1 {
			t.Errorf("file skips = %v", fs.Skipped)
		}
		// The store holds the new offset once the batch is committed; the
		// pipeline counts the batch's skips when it settles the commit, a
		// moment later.
		waitFor(t, "the status to count the file's skips", func() bool {
			s := p.Status().Skipped
			return s[tail.SkipLineTooLong] > before[tail.SkipLineTooLong] && s[tail.SkipBinary] > before[tail.SkipBinary]
		})
		after := p.Status().Skipped
		if after[tail.SkipLineTooLong]-before[tail.SkipLineTooLong] != 1 || after[tail.SkipBinary]-before[tail.SkipBinary] != 1 {
			t.Errorf("status skips before %v after %v", before, after)
		}
		// Both glued records became events.
		got := stored(t, st)
		for _, l := range a[:2] {
			for _, e := range transcript.NewClaudeCode(transcript.Options{}).ParseLine(bytes.TrimSpace(l), transcript.Position{}) {
				if got[e.ID] != 1 {
					t.Errorf("glued record event %s stored %d times", e.ID, got[e.ID])
				}
			}
		}
	})
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRedaction: secrets never reach the store, in any field.
func TestRedaction(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p)
	key := "ghp_" + strings.Repeat("A1b2C3d4", 5)[:36]
	path := filepath.Join(dir, "s.jsonl")
	lines := []string{
		`{"type":"user","sessionId":"s1","uuid":"u1","cwd":"/w","message":{"role":"user","content":"use token ` + key + ` please"}}`,
		`{"type":"assistant","sessionId":"s1","uuid":"u2","cwd":"/w","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"curl -H 'Authorization: Bearer ` + key + `' https://api.example.com"}}]}}`,
		`{"type":"assistant","sessionId":"s1","uuid":"u3","cwd":"/w","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"WebFetch","input":{"url":"https://user:hunter2secret@example.com/x?token=` + key + `"}}]}}`,
		`{"type":"assistant","sessionId":"s1","uuid":"u4","cwd":"/w","message":{"id":"m3","role":"assistant","content":[{"type":"tool_use","id":"t3","name":"TodoWrite","input":{"todos":[{"content":"rotate ` + key + `","status":"pending","activeForm":"rotating"}]}}]}}`,
	}
	appendFile(t, path, []byte(strings.Join(lines, "\n")+"\n"))
	p.Notify("w", path)
	waitFor(t, "the events", func() bool { return len(stored(t, st)) == 4 })
	events, err := st.Episode(context.Background(), "s1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		js := fmt.Sprintf("%+v", e.Event)
		if strings.Contains(js, key) || strings.Contains(js, "hunter2secret") {
			t.Errorf("a secret reached the store: %s", js)
		}
	}
	// Counted when the pipeline settles the commit, a moment after the
	// store holds the events.
	waitFor(t, "the status to count at least 4 redactions", func() bool { return p.Status().Redactions >= 4 })
}

// TestManyEventsInOneLine: a line holding more records than one store batch
// may take is stored in parts, none lost.
func TestManyEventsInOneLine(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p)
	var b strings.Builder
	n := store.MaxIngestEvents + 500
	for i := range n {
		fmt.Fprintf(&b, `{"type":"user","sessionId":"glued","uuid":"g-%d","message":{"role":"user","content":"p%d"}}`, i, i)
	}
	b.WriteString("\n")
	path := filepath.Join(dir, "glued.jsonl")
	appendFile(t, path, []byte(b.String()))
	p.Notify("w", path)
	waitFor(t, "the events", func() bool { return len(stored(t, st)) == n })
	if fs := fileState(t, st, path); fs.Offset != int64(b.Len()) || fs.Events != int64(n) {
		t.Errorf("file state = offset %d events %d, want %d, %d", fs.Offset, fs.Events, b.Len(), n)
	}
}

// TestManySmallLines: batches stop at the event bound; all lines arrive.
func TestManySmallLines(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	var seen atomic.Int64
	p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}},
		OnIngest: func(r store.IngestResult, events []transcript.Event) {
			if len(events) > store.MaxIngestEvents {
				t.Errorf("batch of %d events", len(events))
			}
			seen.Add(int64(r.Added))
		}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p)
	var b strings.Builder
	n := 3 * batchEvents
	for i := range n {
		fmt.Fprintf(&b, `{"type":"user","sessionId":"small","uuid":"s-%d","message":{"role":"user","content":"p%d"}}`+"\n", i, i)
	}
	path := filepath.Join(dir, "small.jsonl")
	appendFile(t, path, []byte(b.String()))
	p.Notify("w", path)
	waitFor(t, "the events", func() bool { return seen.Load() == int64(n) })
	if got := stored(t, st); len(got) != n {
		t.Errorf("stored %d events, want %d", len(got), n)
	}
}

// flaky fails the first Ingest calls, as a full disk would, around the
// real store.
type flaky struct {
	store.EpisodeStore
	fail atomic.Int32
}

func (f *flaky) Ingest(ctx context.Context, b store.IngestBatch) (store.IngestResult, error) {
	if f.fail.Add(-1) >= 0 {
		return store.IngestResult{}, errors.New("write: no space left on device")
	}
	return f.EpisodeStore.Ingest(ctx, b)
}

// failingPipeline returns a store whose first fail Ingest calls fail, a
// file of three turns of session id and a pipeline over them.
func failingPipeline(t *testing.T, fail int32, id string, seed uint64) (*flaky, string, *Pipeline) {
	t.Helper()
	st := &flaky{EpisodeStore: openStore(t)}
	st.fail.Store(fail)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	gen := fixture.NewClaude(id, dir, seed)
	for range 3 {
		for _, l := range gen.Turn() {
			appendFile(t, path, l)
		}
	}
	p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}})
	if err != nil {
		t.Fatal(err)
	}
	return st, path, p
}

// TestStoreFailureRetries: a failed write loses nothing: the offset stays,
// the file is retried, and the parser's memory of the failed batch does not
// drop events as repeats.
func TestStoreFailureRetries(t *testing.T) {
	st, path, p := failingPipeline(t, 2, "99999999-0000-4000-8000-000000000001", 11)
	run(t, p)
	p.Notify("w", path)
	want := parsed(t, "claude-code", path)
	// Retries back off 1 s, then 2 s.
	deadline := time.Now().Add(15 * time.Second)
	for len(stored(t, st)) < len(want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := stored(t, st); !equalCounts(got, want) {
		t.Fatalf("%s", diff(got, want))
	}
	s := p.Status()
	if len(s.Errors) != 2 || !strings.Contains(s.Errors[0], "no space left on device") {
		t.Errorf("errors = %q", s.Errors)
	}
}

// TestAutoDetect: an "auto" watch parses each file in its own format and
// skips lines until one is recognisable.
func TestAutoDetect(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	p, err := New(st, Options{Watches: []Watch{{Name: "a", Format: FormatAuto}}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p)
	cx := fixture.NewCodex("019c9a10-3333-7aaa-8bbb-0123456789ab", dir, 3)
	codexPath := filepath.Join(dir, "rollout-2026-03-02T10-00-00-019c9a10-3333-7aaa-8bbb-0123456789ab.jsonl")
	appendFile(t, codexPath, []byte("not a transcript line\n"))
	appendFile(t, codexPath, cx.Meta())
	for _, l := range cx.Turn() {
		appendFile(t, codexPath, l)
	}
	p.Notify("a", codexPath)
	waitFor(t, "the codex file", func() bool {
		s, _ := st.Session(context.Background(), cx.ID)
		return s != nil && s.Events >= 4
	})
	s, _ := st.Session(context.Background(), cx.ID)
	if s.Agent != "codex" {
		t.Errorf("agent = %q", s.Agent)
	}
	if fs := fileState(t, st, codexPath); fs.Format != "codex" || fs.Skipped[SkipUndetected] != 1 {
		t.Errorf("file state = %+v", fs)
	}
}

func TestUnknownWatchFormat(t *testing.T) {
	_, err := New(openStore(t), Options{Watches: []Watch{{Name: "c", Format: "cursor"}}})
	if err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Errorf("New = %v, want an error naming the format", err)
	}
}

// TestStartupDropsVanishedFiles: a file deleted while the daemon was down
// loses its state once the pipeline has looked for it.
func TestStartupDropsVanishedFiles(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	for _, l := range fixture.NewClaude("77777777-0000-4000-8000-000000000001", dir, 1).Turn() {
		appendFile(t, path, l)
	}
	p, _ := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}})
	stop := start(t, p)
	p.Notify("w", path)
	waitFor(t, "the file", func() bool { fs := fileState(t, st, path); return fs != nil && fs.Offset > 0 })
	stop()
	key := fileState(t, st, path).Key
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	p2, _ := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}, GoneGrace: 10 * time.Millisecond})
	run(t, p2)
	waitFor(t, "the state dropped", func() bool {
		fs, err := st.FileState(context.Background(), key)
		return err == nil && fs == nil
	})
}

// TestQuietTail: a last line without a newline is ingested once it has not
// changed for QuietTail and is complete JSON; a half-written one is not.
// Lines appended later are read once, whether or not they start with the
// missing newline.
func TestQuietTail(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}, QuietTail: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p)
	rec := func(session, uuid, text string) string {
		return `{"type":"user","sessionId":"` + session + `","uuid":"` + uuid + `","message":{"role":"user","content":"` + text + `"}}`
	}
	count := func(session string) int {
		s, err := st.Session(context.Background(), session)
		if err != nil || s == nil {
			return 0
		}
		return int(s.Events)
	}

	done := filepath.Join(dir, "done.jsonl")
	appendFile(t, done, []byte(rec("q1", "a", "one")+"\n"+rec("q1", "b", "two")))
	p.Notify("w", done)
	waitFor(t, "the unterminated record", func() bool { return count("q1") == 2 })
	if p.Status().BacklogBytes != 0 {
		t.Errorf("backlog = %d after the tail was taken", p.Status().BacklogBytes)
	}
	// The file goes on: first with the newline, then glued without one.
	appendFile(t, done, []byte("\n"+rec("q1", "c", "three")+"\n"))
	p.Notify("w", done)
	waitFor(t, "the third record", func() bool { return count("q1") == 3 })
	appendFile(t, done, []byte(rec("q1", "d", "four")+"\n"))
	p.Notify("w", done)
	waitFor(t, "the fourth record", func() bool { return count("q1") == 4 })

	half := filepath.Join(dir, "half.jsonl")
	full := rec("q2", "h1", "one") + "\n" + rec("q2", "h2", "two") + "\n"
	appendFile(t, half, []byte(full[:len(full)-20]))
	p.Notify("w", half)
	waitFor(t, "the complete record", func() bool { return count("q2") == 1 })
	// Well past QuietTail the cut record is still waiting...
	waitFor(t, "the quiet-tail look", func() bool { return p.Status().BacklogBytes == int64(len(full)-20-len(rec("q2", "h1", "one"))-1) })
	time.Sleep(100 * time.Millisecond) // several QuietTail periods: nothing may happen
	if n := count("q2"); n != 1 {
		t.Fatalf("a half-written record was ingested: %d events", n)
	}
	// ...and is read once its end arrives.
	appendFile(t, half, []byte(full[len(full)-20:]))
	p.Notify("w", half)
	waitFor(t, "the completed record", func() bool { return count("q2") == 2 })
	if d := p.Status().Duplicates; d != 0 {
		t.Errorf("duplicates = %d", d)
	}
}

// TestRenamedWatch: a file state from a watch no longer configured is not
// tracked, but is used when a configured watch reports the same file.
func TestRenamedWatch(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	appendFile(t, path, turns(fixture.NewClaude("55555555-0000-4000-8000-000000000001", dir, 5), 2))
	p, _ := New(st, Options{Watches: []Watch{{Name: "old", Format: "claude-code"}}})
	stop := start(t, p)
	p.Notify("old", path)
	waitFor(t, "the file", func() bool { fs := fileState(t, st, path); return fs != nil && fs.Offset > 0 })
	stop()

	p2, _ := New(st, Options{Watches: []Watch{{Name: "new", Format: "claude-code"}}})
	if err := p2.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	run(t, p2)
	if n := p2.Status().Files; n != 0 {
		t.Errorf("tracking %d files of a watch that is gone", n)
	}
	p2.Notify("new", path)
	waitFor(t, "the file tracked again", func() bool { return p2.Status().Files == 1 })
	if s := p2.Status(); s.Bytes != 0 || s.Duplicates != 0 {
		t.Errorf("the file was read again: %+v", s)
	}
}

func turns(g *fixture.Claude, n int) []byte {
	var b []byte
	for range n {
		for _, l := range g.Turn() {
			b = append(b, l...)
		}
	}
	return b
}
