package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/store"
)

// fakeDisk makes the store see free bytes, and puts the real measurement
// back at the end of the test.
func fakeDisk(t *testing.T, free *atomic.Int64) {
	t.Helper()
	prevFree, prevInterval := freeSpace, spaceInterval
	freeSpace = func(string) (int64, error) { return free.Load(), nil }
	spaceInterval = 10 * time.Millisecond
	t.Cleanup(func() { freeSpace, spaceInterval = prevFree, prevInterval })
}

// userLine is one Claude Code user prompt of session sid.
func userLine(sid string, n int) string {
	return fmt.Sprintf(`{"type":"user","sessionId":%q,"uuid":"u-%d","timestamp":"2026-03-02T09:00:%02dZ","message":{"role":"user","content":"prompt %d"}}`+"\n", sid, n, n%60, n)
}

func appendLines(t *testing.T, path, sid string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for n := from; n < to; n++ {
		if _, err := f.WriteString(userLine(sid, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// buffered is how many events the daemon holds for session sid.
func buffered(c *client.Client, sid string) int64 {
	sessions, err := c.Sessions(context.Background())
	if err != nil {
		return -1
	}
	for _, s := range sessions {
		if s.ID == sid {
			return s.Buffered
		}
	}
	return 0
}

func watchConfig(t *testing.T) (*config.Config, string) {
	t.Helper()
	cfg := testConfig(t)
	root := filepath.Join(t.TempDir(), "transcripts")
	if err := os.MkdirAll(filepath.Join(root, "proj"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg.Watches = []config.Watch{{Name: "cc", Path: root, Format: "claude-code", Include: config.DefaultInclude, Exclude: []string{}}}
	return cfg, filepath.Join(root, "proj", "s-1.jsonl")
}

// TestDiskFullPausesIngestion: a disk that fills pauses ingestion with one
// log line and a status that says so, reads keep working, the lines
// written meanwhile are stored once space is back, and a daemon started on
// a full disk comes up read-only and resumes by itself too.
func TestDiskFullPausesIngestion(t *testing.T) {
	var free atomic.Int64
	free.Store(1 << 40)
	fakeDisk(t, &free)
	cfg, path := watchConfig(t)
	r := start(t, cfg)
	c := client.New(cfg.Socket)
	ctx := context.Background()

	appendLines(t, path, "s-1", 0, 5)
	waitFor(t, "the first events", func() bool { return buffered(c, "s-1") == 5 })

	free.Store(10 << 20)
	appendLines(t, path, "s-1", 5, 10)
	want := "disk full under " + cfg.DataDir + ": 10 MiB free; ingestion paused"
	waitFor(t, "the paused status", func() bool {
		st, err := c.Status(ctx)
		return err == nil && st.Disk != nil && st.Disk.Full && strings.HasPrefix(st.Disk.Message, want)
	})
	waitFor(t, "the log line", func() bool { return strings.Contains(r.log.String(), want) })
	// Reads keep working and the new lines wait: the daemon asks about the
	// disk every second, so three seconds give it time to go wrong.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if n := buffered(c, "s-1"); n != 5 {
			t.Fatalf("buffered %d events on a full disk, want 5", n)
		}
		time.Sleep(50 * time.Millisecond)
	}

	free.Store(1 << 40)
	waitFor(t, "the lines written while paused", func() bool { return buffered(c, "s-1") == 10 })
	// The ingester counts a batch once its commit is back, just after the
	// store holds it: under load status can lag the sessions by a moment.
	var st *api.Status
	waitFor(t, "the status counting them", func() bool {
		var err error
		st, err = c.Status(ctx)
		return err == nil && st.Ingest != nil && st.Ingest.Events == 10 && st.Ingest.BacklogBytes == 0
	})
	if st.Disk == nil || st.Disk.Full || st.Disk.Message != "" || st.Ingest.Events != 10 || st.Ingest.Duplicates != 0 || len(st.Ingest.Errors) != 0 {
		t.Errorf("status after the pause: disk %+v, ingest %+v", st.Disk, st.Ingest)
	}
	logs := r.log.String()
	if n := strings.Count(logs, "disk full under"); n != 1 {
		t.Errorf("%d disk full lines, want 1:\n%s", n, logs)
	}
	if !strings.Contains(logs, "ingestion resumed") {
		t.Errorf("no resume line:\n%s", logs)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	// A start on a full disk: read-only, and says so.
	free.Store(1 << 20)
	r = start(t, cfg)
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Disk == nil || !st.Disk.ReadOnly || !strings.Contains(st.Disk.Message, "read-only") {
		t.Fatalf("status after a start on a full disk: %+v", st.Disk)
	}
	if !strings.Contains(r.log.String(), "disk full under "+cfg.DataDir+": 1 MiB free; ingestion paused; the store is open read-only") {
		t.Errorf("no read-only line:\n%s", r.log)
	}
	if n := buffered(c, "s-1"); n != 10 {
		t.Errorf("buffered %d events read-only, want 10", n)
	}
	appendLines(t, path, "s-1", 10, 12)
	free.Store(1 << 40)
	waitFor(t, "ingestion after the reopen", func() bool { return buffered(c, "s-1") == 12 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestMissingManifestStopsDaemon: the daemon refuses to start on tables
// without a MANIFEST and says what to do.
func TestMissingManifestStopsDaemon(t *testing.T) {
	cfg, path := watchConfig(t)
	r := start(t, cfg)
	appendLines(t, path, "s-1", 0, 3)
	c := client.New(cfg.Socket)
	waitFor(t, "the events", func() bool { return buffered(c, "s-1") == 3 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cfg.DataDir, "store")
	if err := os.Remove(filepath.Join(dir, "MANIFEST")); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), cfg, nil)
	if !errors.Is(err, store.ErrNoManifest) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "medalliond repair") {
		t.Fatalf("Run without MANIFEST: %v", err)
	}
}

// TestDamagedStore: damage found while running shows in status and the
// log, and a restart on the damaged store refuses with the way back.
func TestDamagedStore(t *testing.T) {
	prev := verifyInterval
	verifyInterval = 50 * time.Millisecond
	t.Cleanup(func() { verifyInterval = prev })
	cfg, path := watchConfig(t)
	r := start(t, cfg)
	c := client.New(cfg.Socket)
	ctx := context.Background()
	// Long prompts: their chunks go to the value log.
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 20 {
		fmt.Fprintf(f, `{"type":"user","sessionId":"s-1","uuid":"u-%d","timestamp":"2026-03-02T09:00:00Z","message":{"role":"user","content":"%s"}}`+"\n",
			n, strings.Repeat("a long prompt about the parser ", 100))
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the events", func() bool { return buffered(c, "s-1") == 20 })
	vlog := filepath.Join(cfg.DataDir, "store", "000001.vlog")
	fh, err := os.OpenFile(vlog, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteAt([]byte(strings.Repeat("\xff", 64)), 4096); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	want := "the store under " + filepath.Join(cfg.DataDir, "store") + " is damaged"
	waitFor(t, "the damage in status", func() bool {
		st, err := c.Status(ctx)
		return err == nil && strings.Contains(st.StoreDamage, want)
	})
	if !strings.Contains(r.log.String(), "the store is damaged") {
		t.Errorf("no damage line in the log:\n%s", r.log)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	err = Run(ctx, cfg, nil)
	if !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), want) {
		t.Fatalf("restart on the damaged store: %v", err)
	}
}
