package ingest

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/store"
)

// TestDiskFullPausesAndResumes: with the real store refusing writes below
// its reserve (a fake statfs), a paused pipeline reads nothing and keeps
// its notices, a batch refused because the disk filled after the pause
// check leaves the offset where it was and logs nothing per file, and
// everything is stored once space is back, exactly once.
func TestDiskFullPausesAndResumes(t *testing.T) {
	// measured counts the store's measurements: with its poll off, one
	// per write attempt.
	var free, measured atomic.Int64
	free.Store(1 << 30)
	st, err := store.Open(t.TempDir(), store.Options{
		GCInterval:    -1,
		SpaceInterval: -1,
		Reserve:       64 << 20,
		FreeSpace:     func(string) (int64, error) { measured.Add(1); return free.Load(), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })

	// pause stands for the daemon's view of the disk; it lags the store's
	// own measurement on purpose in the second step.
	var pause atomic.Bool
	var asked atomic.Int64
	var logs lockedBuffer
	p, err := New(st, Options{
		Watches: []Watch{{Name: "w", Format: "claude-code"}},
		Paused:  func() bool { asked.Add(1); return pause.Load() },
		Logger:  hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}),
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p)

	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	gen := fixture.NewClaude("99999999-0000-4000-8000-000000000002", dir, 7)
	appendFile(t, path, turns(gen, 3))
	p.Notify("w", path)
	waitFor(t, "the first turns", func() bool { return equalCounts(stored(t, st), parsed(t, "claude-code", path)) })
	before := fileState(t, st, path).Offset

	// 1. Paused: the notice waits in the queue and nothing is read.
	pause.Store(true)
	free.Store(1 << 20)
	appendFile(t, path, turns(gen, 3))
	p.Notify("w", path)
	n := asked.Load()
	waitFor(t, "the pipeline to ask twice more", func() bool { return asked.Load() >= n+2 })
	if got := fileState(t, st, path).Offset; got != before {
		t.Fatalf("offset moved from %d to %d while paused", before, got)
	}
	if p.Pending() != 1 {
		t.Errorf("pending notices %d while paused, want 1", p.Pending())
	}

	// 2. The disk is full but the pause has not been noticed yet: the
	// store refuses the batch, the offset stays, no error is logged.
	m := measured.Load()
	pause.Store(false)
	waitFor(t, "the refused batch", func() bool { return measured.Load() > m })
	if got := fileState(t, st, path).Offset; got != before {
		t.Fatalf("offset moved from %d to %d over a refused batch", before, got)
	}
	if s := p.Status(); len(s.Errors) != 0 {
		t.Errorf("status errors for a full disk: %q", s.Errors)
	}

	// 3. Space is back: the refused lines are stored, each event once.
	free.Store(1 << 30)
	want := parsed(t, "claude-code", path)
	waitFor(t, "the rest of the file", func() bool { return equalCounts(stored(t, st), want) })
	if got := fileState(t, st, path).Offset; got <= before {
		t.Errorf("offset %d did not move past %d", got, before)
	}
	if l := logs.String(); strings.Contains(l, "[ERROR]") {
		t.Errorf("errors logged for a full disk:\n%s", l)
	}
}

// lockedBuffer is a log sink a test may read while the pipeline writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
