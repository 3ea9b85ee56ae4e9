package ingest

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/tail"
	"github.com/medallionhq/medallion/internal/transcript"
)

// TestCommitsOverlapFiles: with several files queued, the batches of
// different files are committed interleaved (reading one overlaps storing
// another), each file's in offset order, and every event is stored exactly
// once.
func TestCommitsOverlapFiles(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	var (
		mu    sync.Mutex
		order []string             // the file of each committed batch
		last  = map[string]int64{} // the last offset committed, by file
	)
	p, err := New(st, Options{
		Watches:       []Watch{{Name: "w", Format: "claude-code"}},
		MaxBatchBytes: 32 << 10,
		OnIngest: func(_ store.IngestResult, events []transcript.Event) {
			mu.Lock()
			defer mu.Unlock()
			path := events[0].Source.Path
			for _, e := range events {
				if e.Source.Path != path {
					t.Errorf("one batch holds %s and %s", path, e.Source.Path)
				}
				if e.Source.Offset < last[path] {
					t.Errorf("%s: offset %d committed after %d", path, e.Source.Offset, last[path])
				}
				last[path] = e.Source.Offset
			}
			if len(order) == 0 || order[len(order)-1] != path {
				order = append(order, path)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		gen := fixture.NewClaude(fmt.Sprintf("0000000%d-0000-4000-8000-000000000001", i), dir, uint64(i)+1)
		for range 30 {
			for _, l := range gen.Turn() {
				appendFile(t, path, l)
			}
		}
		paths = append(paths, path)
		p.Notify("w", path)
	}
	ctx := context.Background()
	p.drain(ctx, ctx)
	want := map[string]int{}
	for _, path := range paths {
		for k, n := range parsed(t, "claude-code", path) {
			want[k] += n
		}
	}
	if got := stored(t, st); !equalCounts(got, want) {
		t.Fatalf("%s", diff(got, want))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) <= len(paths) {
		t.Errorf("files committed one after the other (%d runs of batches): reading did not move on to the next file", len(order))
	}
}

// TestNoticeDuringFailedCommit: a notice for a file whose commit is in
// flight waits for that commit; when it failed, the file waits out its
// back-off instead of being read again at once, and the retry stores
// everything exactly once.
func TestNoticeDuringFailedCommit(t *testing.T) {
	st, path, p := failingPipeline(t, 1, "99999999-0000-4000-8000-000000000002", 5)
	ctx := context.Background()
	p.process(ctx, ctx, "w", path) // dispatched; the commit fails
	p.process(ctx, ctx, "w", path) // a second notice meanwhile
	if calls := 1 - st.fail.Load(); calls != 1 {
		t.Errorf("%d Ingest calls, want 1: the file was read again during its back-off", calls)
	}
	dev, ino, _, err := tail.Identify(path)
	if err != nil {
		t.Fatal(err)
	}
	key := tail.Key(dev, ino)
	if _, ok := p.retries[key]; !ok || p.inflight != nil {
		t.Fatalf("retry scheduled %v, commit in flight %v", ok, p.inflight != nil)
	}
	if got := stored(t, st); len(got) != 0 {
		t.Fatalf("stored %d events of a failed commit", len(got))
	}
	p.retries[key] = p.now() // its time has come
	p.due(ctx)
	p.drain(ctx, ctx)
	if got, want := stored(t, st), parsed(t, "claude-code", path); !equalCounts(got, want) {
		t.Fatalf("%s", diff(got, want))
	}
}
