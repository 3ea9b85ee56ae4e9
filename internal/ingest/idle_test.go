package ingest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/tail"
)

// TestIdleFilesDropTheirParsers: a file nobody wrote to for idleParser
// keeps no parser once read (old transcripts at start-up), an active one
// keeps its parser until it has been idle that long, and a file whose
// parser was dropped goes on being ingested exactly once.
func TestIdleFilesDropTheirParsers(t *testing.T) {
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	st := openStore(t)
	dir := t.TempDir()
	old, fresh := filepath.Join(dir, "old.jsonl"), filepath.Join(dir, "fresh.jsonl")
	oldGen := fixture.NewClaude("99999999-0000-4000-8000-000000000006", dir, 1)
	freshGen := fixture.NewClaude("99999999-0000-4000-8000-000000000007", dir, 2)
	appendFile(t, old, turns(oldGen, 2))
	appendFile(t, fresh, turns(freshGen, 2))
	if err := os.Chtimes(old, clock.Add(-time.Hour), clock.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	key := func(path string) string {
		dev, ino, _, err := tail.Identify(path)
		if err != nil {
			t.Fatal(err)
		}
		return tail.Key(dev, ino)
	}
	p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, p)
	p.Notify("w", old)
	p.Notify("w", fresh)
	want := parsed(t, "claude-code", old)
	for id, n := range parsed(t, "claude-code", fresh) {
		want[id] += n
	}
	waitFor(t, "both files", func() bool { return equalCounts(stored(t, st), want) })
	stop()
	if p.files[key(old)].parser != nil {
		t.Error("a file untouched for an hour kept its parser")
	}
	if p.files[key(fresh)].parser == nil {
		t.Error("a file written just now lost its parser")
	}

	// Later: the fresh file has been idle for longer than idleParser, and
	// the old one is written to again.
	mu.Lock()
	clock = clock.Add(2 * idleParser)
	mu.Unlock()
	appendFile(t, old, turns(oldGen, 1))
	// The same pipeline runs again, so that its in-memory file states,
	// which the checks read once Run has returned, carry over.
	p.started.Store(false)
	stop = start(t, p)
	p.Notify("w", old)
	want = parsed(t, "claude-code", old)
	for id, n := range parsed(t, "claude-code", fresh) {
		want[id] += n
	}
	waitFor(t, "the old file's new turn", func() bool { return equalCounts(stored(t, st), want) })
	stop()
	if p.files[key(fresh)].parser != nil {
		t.Error("a file idle for twice idleParser kept its parser")
	}
}
