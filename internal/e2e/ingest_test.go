package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/ingest/fixture"
)

// ingestd is a real medalliond watching one folder, started, killed and
// restarted by a Go test.
type ingestd struct {
	tb    testing.TB
	dir   string // short temp dir: socket, config, data, log
	root  string // the watched folder
	sock  string
	conf  string
	log   string
	c     *client.Client
	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan struct{}
	runs  int
	extra string
	// heapFile is where the daemon writes its heap profile at SIGUSR1
	// (MEDALLION_HEAP_PROFILE); empty when it does not.
	heapFile string
}

// newIngestd prepares a daemon watching root (format auto); extra is
// appended to its config file. Unless extra has a checkpoint block, the
// automatic checkpoints are off, so that every event stays buffered and
// can be compared.
func newIngestd(tb testing.TB, root, extra string) *ingestd {
	tb.Helper()
	dir, err := os.MkdirTemp("", "med")
	if err != nil {
		tb.Fatal(err)
	}
	d := &ingestd{tb: tb, dir: dir, root: root, sock: filepath.Join(dir, "s", "m.sock"),
		conf: filepath.Join(dir, "config.hcl"), log: filepath.Join(dir, "daemon.log"), extra: extra}
	if !strings.Contains(extra, "checkpoint {") {
		extra = "checkpoint {\n  every_events = 0\n  idle         = \"off\"\n}\n" + extra
	}
	cfg := fmt.Sprintf(`data_dir  = %q
socket    = %q
log_level = "info"

watch "w" {
  path   = %q
  format = "auto"
}
%s
`, d.dataDir(), d.sock, root, extra)
	if err := os.WriteFile(d.conf, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	d.c = client.New(d.sock)
	tb.Cleanup(func() {
		d.stop()
		if tb.Failed() {
			if b, err := os.ReadFile(d.log); err == nil {
				if len(b) > 8000 {
					b = b[len(b)-8000:]
				}
				tb.Logf("daemon log (end):\n%s", b)
			}
		}
		os.RemoveAll(dir)
	})
	return d
}

// start runs the daemon and waits until it answers.
func (d *ingestd) start() {
	d.tb.Helper()
	logf, err := os.OpenFile(d.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		d.tb.Fatal(err)
	}
	defer logf.Close()
	profile := daemonProfileArgs(d.tb)
	if i := slices.Index(profile, "--heap-profile"); i >= 0 {
		d.heapFile = profile[i+1]
	}
	cmd := exec.Command(filepath.Join(binDir, "medalliond"), append([]string{"run", "--config", d.conf}, profile...)...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(d.dir, "home"), "XDG_CONFIG_HOME="+filepath.Join(d.dir, "config"),
		"MEDALLION_SOCKET=", "MEDALLION_DATA_DIR=", "MEDALLION_LOG_LEVEL=")
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		d.tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	d.mu.Lock()
	d.cmd, d.done = cmd, done
	d.runs++
	d.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := d.c.Status(ctx)
		cancel()
		if err == nil {
			return
		}
		select {
		case <-done:
			d.tb.Fatalf("medalliond exited before answering (see its log)")
		default:
		}
		if time.Now().After(deadline) {
			d.tb.Fatalf("medalliond did not answer: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill ends the daemon with SIGKILL, as kill -9 does.
func (d *ingestd) kill() {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// stop shuts the daemon down cleanly.
func (d *ingestd) stop() {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		d.tb.Errorf("medalliond did not stop on SIGINT")
	}
}

// dataDir is the daemon's data dir (store, exports).
func (d *ingestd) dataDir() string { return filepath.Join(d.dir, "data") }

func (d *ingestd) pid() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cmd.Process.Pid
}

func (d *ingestd) status() *api.IngestStatus {
	d.tb.Helper()
	st := d.daemonStatus()
	if st.Ingest == nil {
		d.tb.Fatal("status without ingestion figures")
	}
	return st.Ingest
}

// daemonStatus is the daemon's whole status.
func (d *ingestd) daemonStatus() *api.Status {
	d.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := d.c.Status(ctx)
	if err != nil {
		d.tb.Fatalf("status: %v", err)
	}
	return st
}

// sessions returns every session by id.
func (d *ingestd) sessions() map[string]episode.SessionInfo {
	d.tb.Helper()
	list, err := d.c.Sessions(context.Background())
	if err != nil {
		d.tb.Fatalf("sessions: %v", err)
	}
	out := map[string]episode.SessionInfo{}
	for _, s := range list {
		out[s.ID] = s
	}
	return out
}

// events returns a session's whole buffered episode.
func (d *ingestd) events(id string) []episode.BufferedEvent {
	d.tb.Helper()
	var out []episode.BufferedEvent
	var after uint64
	for {
		resp, err := d.c.Session(context.Background(), id, after, 10000)
		if err != nil {
			d.tb.Fatalf("session %s: %v", id, err)
		}
		out = append(out, resp.Events...)
		if len(resp.Events) < 10000 {
			return out
		}
		after = resp.Events[len(resp.Events)-1].Seq
	}
}

// eventCount is the number of events of a session, 0 when unknown.
func (d *ingestd) eventCount(id string) int64 {
	return d.sessions()[id].Events
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// caughtUp waits until the daemon has read every byte of its files and the
// event total stopped moving.
func (d *ingestd) caughtUp(timeout time.Duration) *api.IngestStatus {
	d.tb.Helper()
	var last *api.IngestStatus
	stable := 0
	waitFor(d.tb, timeout, "the daemon to catch up", func() bool {
		s := d.status()
		if last != nil && s.BacklogBytes == 0 && s.Events == last.Events && s.Bytes == last.Bytes {
			stable++
		} else {
			stable = 0
		}
		last = s
		return stable >= 3
	})
	return last
}

func appendTo(tb testing.TB, path string, data []byte) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func turns(gen *fixture.Claude, n int) []byte {
	var b []byte
	for range n {
		for _, l := range gen.Turn() {
			b = append(b, l...)
		}
	}
	return b
}

// userLine is a Claude Code user prompt record.
func userLine(session, uuid, text string) []byte {
	return []byte(fmt.Sprintf(`{"type":"user","sessionId":%q,"uuid":%q,"cwd":"/w","timestamp":"2026-03-02T09:00:00Z","message":{"role":"user","content":%q}}`+"\n", session, uuid, text))
}

// TestIngestFileEdgeCases drives the real daemon through what transcript
// files do: each case checks what `medallionctl` would show afterwards.
func TestIngestFileEdgeCases(t *testing.T) {
	t.Parallel() // each test has its own daemons, data dirs and sockets
	root := t.TempDir()
	d := newIngestd(t, root, "ingest {\n  max_line = \"64KiB\"\n}\n")
	d.start()
	gen := func(id string, seed uint64) *fixture.Claude {
		g := fixture.NewClaude(id, root, seed)
		g.MaxResult = 4000
		return g
	}
	has := func(id string, n int64) func() bool {
		return func() bool { return d.eventCount(id) == n }
	}

	t.Run("truncated", func(t *testing.T) {
		path := filepath.Join(root, "trunc.jsonl")
		appendTo(t, path, userLine("trunc", "t-1", "one")) // 1 event
		appendTo(t, path, userLine("trunc", "t-2", "two"))
		waitFor(t, 10*time.Second, "the first generation", has("trunc", 2))
		if err := os.WriteFile(path, userLine("trunc", "t-3", "three"), 0o644); err != nil { // same inode, shorter
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "the new generation", has("trunc", 3))
	})

	t.Run("replaced", func(t *testing.T) {
		path := filepath.Join(root, "repl.jsonl")
		appendTo(t, path, userLine("repl", "r-1", "one"))
		waitFor(t, 10*time.Second, "the first file", has("repl", 1))
		tmp := filepath.Join(t.TempDir(), "new")
		data := append(userLine("repl", "r-1", "one"), userLine("repl", "r-2", "two")...)
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil { // same path, new inode
			t.Fatal(err)
		}
		// The copied first record is recognised, not stored twice.
		waitFor(t, 10*time.Second, "the new file", has("repl", 2))
	})

	t.Run("renamed", func(t *testing.T) {
		path := filepath.Join(root, "ren.jsonl")
		g := gen("rrrrrrrr-0000-4000-8000-000000000001", 1)
		appendTo(t, path, turns(g, 3))
		waitFor(t, 10*time.Second, "the file", func() bool { return d.eventCount(g.SessionID) > 0 && d.status().BacklogBytes == 0 })
		before := d.eventCount(g.SessionID)
		bytesBefore := d.status().Bytes
		to := filepath.Join(root, "ren-2.jsonl")
		if err := os.Rename(path, to); err != nil {
			t.Fatal(err)
		}
		more := userLine(g.SessionID, "ren-extra", "after the rename")
		appendTo(t, to, more)
		waitFor(t, 10*time.Second, "the appended line", has(g.SessionID, before+1))
		// Only the new line was read: the renamed file continued at its offset.
		if got := d.status().Bytes - bytesBefore; got != int64(len(more)) {
			t.Errorf("read %d bytes after the rename, want %d", got, len(more))
		}
	})

	t.Run("deleted", func(t *testing.T) {
		path := filepath.Join(root, "del.jsonl")
		appendTo(t, path, userLine("del", "d-1", "one"))
		waitFor(t, 10*time.Second, "the file", has("del", 1))
		files := d.status().Files
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "the file dropped", func() bool { return d.status().Files == files-1 })
		if n := d.eventCount("del"); n != 1 {
			t.Errorf("the session lost its events: %d", n)
		}
	})

	t.Run("half-written line completed later", func(t *testing.T) {
		path := filepath.Join(root, "half.jsonl")
		line := userLine("half", "h-1", "a prompt written in two parts")
		appendTo(t, path, userLine("half", "h-0", "first"))
		appendTo(t, path, line[:30])
		// The daemon read the file and left the partial line unread.
		waitFor(t, 10*time.Second, "the complete line", func() bool { return d.eventCount("half") == 1 && d.status().BacklogBytes == 30 })
		appendTo(t, path, line[30:])
		waitFor(t, 10*time.Second, "the completed line", has("half", 2))
	})

	t.Run("line over the cap, binary junk, glued records", func(t *testing.T) {
		path := filepath.Join(root, "junk.jsonl")
		before := d.status().Skipped
		long := userLine("junk", "j-long", strings.Repeat("x", 80<<10))
		glued := append(bytes.TrimSuffix(userLine("junk", "j-g1", "glued one"), []byte("\n")), userLine("junk", "j-g2", "glued two")...)
		var data []byte
		for _, part := range [][]byte{userLine("junk", "j-1", "before"), long, []byte("\x00\x01binary\xff\n"), glued} {
			data = append(data, part...)
		}
		appendTo(t, path, data)
		waitFor(t, 10*time.Second, "the good records", has("junk", 3))
		after := d.status().Skipped
		if after["line_too_long"]-before["line_too_long"] != 1 || after["binary"]-before["binary"] != 1 {
			t.Errorf("skipped before %v, after %v", before, after)
		}
		texts := map[string]bool{}
		for _, e := range d.events("junk") {
			texts[e.Event.Text] = true
		}
		if !texts["glued one"] || !texts["glued two"] || !texts["before"] {
			t.Errorf("events = %v", texts)
		}
	})

	t.Run("directory created after start with files in it", func(t *testing.T) {
		tmp := filepath.Join(t.TempDir(), "proj")
		if err := os.MkdirAll(filepath.Join(tmp, "deeper"), 0o755); err != nil {
			t.Fatal(err)
		}
		appendTo(t, filepath.Join(tmp, "a.jsonl"), userLine("newdir-a", "n-1", "a"))
		appendTo(t, filepath.Join(tmp, "deeper", "b.jsonl"), userLine("newdir-b", "n-2", "b"))
		if err := os.Rename(tmp, filepath.Join(root, "proj")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "both sessions", func() bool {
			s := d.sessions()
			return s["newdir-a"].Events == 1 && s["newdir-b"].Events == 1
		})
	})

	// Nothing was stored twice across all of it.
	if dup := d.status().Duplicates; dup != 1 {
		// The replaced file's copied first record is the one duplicate.
		t.Errorf("duplicates = %d, want 1 (the replaced file's copied record)", dup)
	}
}

// TestFreshness: a line appended to a watched file is visible through the
// API within 500 ms.
func TestFreshness(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d := newIngestd(t, root, "")
	d.start()
	path := filepath.Join(root, "fresh.jsonl")
	appendTo(t, path, userLine("fresh", "f-0", "warm up"))
	// Generous: the first start, the watcher's first scan.
	waitFor(t, 30*time.Second, "the first line", func() bool { return d.eventCount("fresh") == 1 })

	appended := time.Now()
	appendTo(t, path, userLine("fresh", "f-1", "is this visible yet?"))
	deadline := appended.Add(500 * time.Millisecond)
	for {
		resp, err := d.c.Session(context.Background(), "fresh", 0, 0)
		if err == nil && len(resp.Events) == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the appended line was not visible within 500 ms (events %d, err %v)", len(resp.Events), err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// BenchmarkFreshness measures append → visible through the API
// (GET /v1/sessions/{id}, as `medallionctl session show` asks).
func BenchmarkFreshness(b *testing.B) {
	root := b.TempDir()
	d := newIngestd(b, root, "")
	d.start()
	path := filepath.Join(root, "fresh.jsonl")
	appendTo(b, path, userLine("fresh", "f-0", "warm up"))
	waitFor(b, 30*time.Second, "the first line", func() bool { return d.eventCount("fresh") == 1 })
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		appendTo(b, path, userLine("fresh", fmt.Sprintf("f-%d", i+1), "next"))
		for {
			resp, err := d.c.Session(context.Background(), "fresh", uint64(i+1), 1)
			if err == nil && len(resp.Events) == 1 {
				break
			}
			if time.Since(start) > 10*time.Second {
				b.Fatalf("line %d never became visible", i+1)
			}
			time.Sleep(200 * time.Microsecond)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatencies(b, lat)
}
