package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
)

// checkCounters checks the counters kept in memory and the ones stored
// (c/base and the c/d/ changes) against a count of every key.
func checkCounters(t *testing.T, s *Badger) {
	t.Helper()
	var want, stored counts
	err := s.db.View(func(txn *badger.Txn) error {
		if err := countEverything(txn, &want); err != nil {
			return err
		}
		item, err := txn.Get([]byte(countsBaseKey))
		if err != nil {
			return fmt.Errorf("c/base: %w", err)
		}
		if err := item.Value(func(v []byte) (err error) { stored, err = decodeCounts(v); return err }); err != nil {
			return err
		}
		return eachCountDelta(txn, stored.upto+1, func(_ uint64, d *counts) { stored.add(d) })
	})
	if err != nil {
		t.Fatal(err)
	}
	var mem counts
	mem.medallions = s.counters.medallions.Load()
	mem.lists = s.counters.sizes.snapshot()
	n, bu, ch := s.counters.episodes.get()
	mem.sessions, mem.buffered, mem.checkpoints = int64(n), bu, ch
	for name, c := range map[string]*counts{"in memory": &mem, "stored": &stored} {
		if len(c.lists) == 0 {
			c.lists = map[string]int64{}
		}
		c.upto = 0
		if !reflect.DeepEqual(*c, want) {
			t.Errorf("counters %s: %+v; counting every key: %+v", name, *c, want)
		}
	}
}

// TestCountersStored: every kind of write keeps the stored counters equal
// to a count of every key, across a fold, a clean close and reopen, a
// reopen without the last fold (as after a kill -9), and the first open
// of a store an older build wrote (no c/base).
func TestCountersStored(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := func(id string, nodes ...string) *medallion.Medallion {
		return &medallion.Medallion{Meta: medallion.Meta{MedallionID: id, SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
			Scope: medallion.Scope{GraphNodes: nodes, Tags: []string{"t1"}}}
	}
	for i := range 5 {
		if _, err := s.Create(ctx, m(fmt.Sprintf("m%d", i), "repo:a", fmt.Sprintf("module:%d", i%2))); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	got.Scope.GraphNodes = []string{"repo:b"} // moves between lists
	if _, err := s.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := s.Import(ctx, []*medallion.Medallion{{Meta: medallion.Meta{MedallionID: "imp", SchemaVersion: medallion.SchemaVersion,
		Model: "tier0", CreatedAt: "2025-01-01T00:00:00.000000Z", UpdatedAt: "2025-01-01T00:00:00.000000Z", Status: medallion.StatusActive, Version: 1},
		Scope: medallion.Scope{GraphNodes: []string{"repo:a"}}}}); err != nil {
		t.Fatal(err)
	}
	mustIngest(t, s, IngestBatch{File: file("f", 10), Events: events("s1", "e", 7)})
	mustIngest(t, s, IngestBatch{File: file("g", 10), Events: events("s2", "x", 3)})
	if err := s.ClearEpisode(ctx, "s1", 4); err != nil {
		t.Fatal(err)
	}
	checkCounters(t, s)
	if s.counters.seq.Load() == 0 {
		t.Fatal("no counter change was stored")
	}
	s.foldCounters()
	checkCounters(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A reopen reads c/base; changes written after the last fold and
	// never folded (a kill -9) are read too.
	s, err = Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	checkCounters(t, s)
	mustIngest(t, s, IngestBatch{File: file("f", 20), Events: events("s1", "y", 2)})
	if _, err := s.Create(ctx, m("late", "repo:c")); err != nil {
		t.Fatal(err)
	}
	// A fold cut short after writing c/base leaves changes it covers.
	if err := s.counters.fold(s.db, false); err != nil {
		t.Fatal(err)
	}
	leftover := countDeltaKey(s.counters.folded.Load())
	err = s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(leftover, (&counts{medallions: 3}).encode()); err != nil {
			return err
		}
		return txn.Set([]byte(countsDroppedKey), binary.BigEndian.AppendUint64(nil, s.counters.folded.Load()-1))
	})
	if err != nil {
		t.Fatal(err)
	}
	// Closed without the fold at Close, as a kill -9 leaves it.
	foldAtClose = false
	t.Cleanup(func() { foldAtClose = true })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	checkCounters(t, s)
	if n, _ := s.Count(ctx); n != 7 {
		t.Errorf("Count = %d after the reopen, want 7", n)
	}
	if err := s.db.View(func(txn *badger.Txn) error { _, err := txn.Get(leftover); return err }); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Errorf("a change the last fold covered is still stored: %v", err)
	}

	// An older build's store: no c/base, and (from a build that had
	// written some before it lost c/base) stray changes, which a count of
	// every key already covers.
	err = s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Delete([]byte(countsBaseKey)); err != nil {
			return err
		}
		return s.counters.put(txn, &counts{medallions: 5, sessions: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkCounters(t, s)
	if n, _ := s.Count(ctx); n != 7 {
		t.Errorf("Count = %d after counting an older store, want 7", n)
	}
}

// TestCountersFoldWhileWriting: folds running while transactions commit
// in another order than their change numbers lose no change.
func TestCountersFoldWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	folded := make(chan struct{})
	go func() {
		defer close(folded)
		for {
			select {
			case <-stop:
				return
			default:
				s.foldCounters()
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 40 {
				m := &medallion.Medallion{Meta: medallion.Meta{MedallionID: fmt.Sprintf("w%d-%d", w, i), SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
					Scope: medallion.Scope{GraphNodes: []string{fmt.Sprintf("repo:%d", i%3)}}}
				if _, err := s.Create(ctx, m); err != nil {
					t.Error(err)
					return
				}
				mustIngest(t, s, IngestBatch{File: file(fmt.Sprintf("f%d", w), int64(i+1)), Events: events(fmt.Sprintf("s%d", w), fmt.Sprintf("e%d-%d", w, i), 1)})
			}
		})
	}
	wg.Wait()
	close(stop)
	<-folded
	foldAtClose = false
	t.Cleanup(func() { foldAtClose = true })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{GCInterval: -1, Reserve: -1}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkCounters(t, s)
	if n, _ := s.Count(ctx); n != 160 {
		t.Errorf("Count = %d, want 160", n)
	}
}
