package ingest

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
)

// TestRenamedOutOfPattern: a file renamed to a name the watch does not
// match (logrotate's x.jsonl → x.jsonl.1) is read to its end before it is
// forgotten, whether the rename happened while the daemon was down or
// while it ran with a new x.jsonl taking the old name.
func TestRenamedOutOfPattern(t *testing.T) {
	opts := func() Options {
		return Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}, GoneGrace: 50 * time.Millisecond}
	}
	t.Run("while down", func(t *testing.T) {
		st := openStore(t)
		dir := t.TempDir()
		path := filepath.Join(dir, "s.jsonl")
		gen := fixture.NewClaude("99999999-0000-4000-8000-000000000003", dir, 5)
		appendFile(t, path, turns(gen, 2))
		p1, err := New(st, opts())
		if err != nil {
			t.Fatal(err)
		}
		stop := start(t, p1)
		p1.Notify("w", path)
		waitFor(t, "the first turns", func() bool { return equalCounts(stored(t, st), parsed(t, "claude-code", path)) })
		stop()

		// Down: a last turn is written, then the file is rotated away.
		appendFile(t, path, turns(gen, 1))
		rotated := path + ".1"
		if err := os.Rename(path, rotated); err != nil {
			t.Fatal(err)
		}
		want := parsed(t, "claude-code", rotated)
		p2, err := New(st, opts())
		if err != nil {
			t.Fatal(err)
		}
		if err := p2.Load(context.Background()); err != nil {
			t.Fatal(err)
		}
		run(t, p2)
		waitFor(t, "the rotated file forgotten", func() bool { return p2.Status().Files == 0 })
		if got := stored(t, st); !equalCounts(got, want) {
			t.Errorf("after the rotation: %s", diff(got, want))
		}
	})
	t.Run("while running, a new file taking the name", func(t *testing.T) {
		st := openStore(t)
		dir := t.TempDir()
		path := filepath.Join(dir, "s.jsonl")
		gen := fixture.NewClaude("99999999-0000-4000-8000-000000000004", dir, 9)
		appendFile(t, path, turns(gen, 2))
		p, err := New(st, opts())
		if err != nil {
			t.Fatal(err)
		}
		run(t, p)
		p.Notify("w", path)
		waitFor(t, "the first turns", func() bool { return equalCounts(stored(t, st), parsed(t, "claude-code", path)) })

		appendFile(t, path, turns(gen, 1))
		rotated := path + ".1"
		if err := os.Rename(path, rotated); err != nil {
			t.Fatal(err)
		}
		next := fixture.NewClaude("99999999-0000-4000-8000-000000000005", dir, 10)
		appendFile(t, path, turns(next, 1))
		want := parsed(t, "claude-code", rotated)
		maps.Copy(want, parsed(t, "claude-code", path))
		// What the watcher reports: the new file at the old name.
		p.Notify("w", path)
		waitFor(t, "both files' events", func() bool { return equalCounts(stored(t, st), want) })
		waitFor(t, "only the new file tracked", func() bool { return p.Status().Files == 1 })
	})
}
