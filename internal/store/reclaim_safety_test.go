package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
)

// The tests of this file try to break a reclaim (reclaim.go): what it
// must keep, what a call made meanwhile sees, Close and a full disk
// around it, and the reclaim key a crash can leave behind.

// storeDump is every live key of the store with its value and user meta,
// as one snapshot reads them: what a reclaim must leave as it found it.
func storeDump(t *testing.T, s *Badger) map[string]string {
	t.Helper()
	out := make(map[string]string)
	err := s.View(context.Background(), func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			v, err := item.ValueCopy(nil)
			if err != nil {
				return fmt.Errorf("%q: %w", item.Key(), err)
			}
			out[string(item.KeyCopy(nil))] = fmt.Sprintf("%d:%x", item.UserMeta(), v)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	return out
}

// diffDumps describes how two dumps differ, or "" when they do not.
func diffDumps(before, after map[string]string) string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, fmt.Sprintf("%q gone", k))
		} else if w != v {
			d = append(d, fmt.Sprintf("%q changed", k))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, fmt.Sprintf("%q added", k))
		}
	}
	slices.Sort(d)
	if len(d) > 10 {
		d = append(d[:10], fmt.Sprintf("… %d in all", len(d)))
	}
	return strings.Join(d, "; ")
}

// storeView is what the store's calls answer, the counters included.
type storeView struct {
	Count                 int
	Histories             map[string][]medallion.VersionInfo
	Versions              map[string]*medallion.Medallion
	Sessions              int
	Buffered, Checkpoints int64
	Files                 int
	Parser                string
	Aux                   string
	AuxN                  int64
	Sizes                 map[string]int64
	Export                []string
}

func viewOf(t *testing.T, s *Badger, ids []string) storeView {
	t.Helper()
	ctx := context.Background()
	v := storeView{Histories: map[string][]medallion.VersionInfo{}, Versions: map[string]*medallion.Medallion{}}
	var err error
	must := func(e error) {
		t.Helper()
		if e != nil && err == nil {
			err = e
		}
	}
	v.Count, err = s.Count(ctx)
	for _, id := range ids {
		h, e := s.History(ctx, id)
		must(e)
		v.Histories[id] = h
		for _, vi := range h {
			m, e := s.GetVersion(ctx, id, vi.Version)
			must(e)
			v.Versions[fmt.Sprintf("%s@%d", id, vi.Version)] = m
		}
	}
	sess, bufd, cps, e := s.EpisodeTotals(ctx)
	must(e)
	v.Sessions, v.Buffered, v.Checkpoints = sess, bufd, cps
	fs, e := s.FileStates(ctx)
	must(e)
	v.Files = len(fs)
	ps, e := s.ParserState(ctx, "parsed")
	must(e)
	v.Parser = string(ps)
	aux, e := s.GetAux(ctx, "review/aux")
	must(e)
	v.Aux = string(aux)
	v.AuxN, e = s.AuxInt(ctx, "review/n")
	must(e)
	v.Sizes = ListSizes(s)
	must(s.Export(ctx, func(m *medallion.Medallion) error {
		v.Export = append(v.Export, fmt.Sprintf("%s@%d %s", m.Meta.MedallionID, m.Meta.Version, m.Summary.HighLevel))
		return nil
	}))
	if err != nil {
		t.Fatalf("reading the store back: %v", err)
	}
	return v
}

// fillForReclaim writes what a daemon's store holds: medallions of several
// versions, sessions whose events were written and cleared (the last
// batch buffered), a parser state, auxiliary records and counters. It
// returns the medallions' ids.
func fillForReclaim(t *testing.T, s *Badger) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("keep-%d", i)
		m := testMedallion(id)
		m.Scope.GraphNodes = append(m.Scope.GraphNodes, fmt.Sprintf("file:f%d", i))
		m.Scope.Tags = []string{"t"}
		m.Summary.HighLevel = strings.Repeat(fmt.Sprintf("version 1 of %s ", id), 40)
		got, err := s.Create(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		for v := 2; v <= 1+i; v++ {
			next := got.Clone()
			next.Summary.HighLevel = strings.Repeat(fmt.Sprintf("version %d of %s ", v, id), 40)
			if got, err = s.Update(ctx, next); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	writeAndClear(t, s, "sess", 16)
	mustIngest(t, s, IngestBatch{File: file("parsed", 10), Events: events("parsed-s", "p", 3), ParserState: []byte("parser state kept")})
	if err := s.PutAux(ctx, "review/aux", bytes.Repeat([]byte("aux "), 300)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddAuxInt(ctx, "review/n", 42); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestReclaimKeepsEverything: a reclaim changes no live key or value of
// the store (every medallion version, buffered event, session, file and
// parser state, auxiliary record, counter), leaves no reclaim key, and
// the store's calls answer the same after it and after a reopen.
func TestReclaimKeepsEverything(t *testing.T) {
	smallReclaims(t, time.Hour)
	dir := t.TempDir()
	s := openIngest(t, dir, nil)
	ids := fillForReclaim(t, s)
	s.foldCounters() // no fold of its own between the dumps
	dump, view := storeDump(t, s), viewOf(t, s, ids)
	if !reclaimSoon(s) {
		t.Fatal("no reclaim was due")
	}
	after := storeDump(t, s)
	if d := diffDumps(dump, after); d != "" {
		t.Errorf("the reclaim changed the store: %s", d)
	}
	if got := viewOf(t, s, ids); !reflect.DeepEqual(got, view) {
		t.Errorf("after the reclaim the store answers\n%+v\nnot\n%+v", got, view)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openIngest(t, dir, nil)
	if got := viewOf(t, s, ids); !reflect.DeepEqual(got, view) {
		t.Errorf("after the reclaim and a reopen the store answers\n%+v\nnot\n%+v", got, view)
	}
	if err := s.Damage(); err != nil {
		t.Error(err)
	}
}

// TestReclaimCallsSeeTheirWrites: calls made while reclaims run never
// fail (no ErrBlockedWrites from the flush's DropPrefix) and never read
// stale data: each medallion update is read back at once, each ingested
// batch is in its episode, each cleared one gone from it.
func TestReclaimCallsSeeTheirWrites(t *testing.T) {
	smallReclaims(t, time.Hour)
	s := openIngest(t, t.TempDir(), nil)
	ctx := context.Background()
	var (
		failMu sync.Mutex
		fails  []string
	)
	fail := func(format string, args ...any) {
		failMu.Lock()
		defer failMu.Unlock()
		if len(fails) < 10 {
			fails = append(fails, fmt.Sprintf(format, args...))
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	text := strings.Repeat("a chunk the checkpoint clears ", 40)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := testMedallion(fmt.Sprintf("w%d", w))
			got, err := s.Create(ctx, m)
			if err != nil {
				fail("create: %v", err)
				return
			}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				next := got.Clone()
				next.Summary.HighLevel = fmt.Sprintf("%s update %d %s", m.Meta.MedallionID, i, text)
				if got, err = s.Update(ctx, next); err != nil {
					fail("update: %v", err)
					return
				}
				if back, err := s.Get(ctx, m.Meta.MedallionID); err != nil || back.Meta.Version != got.Meta.Version || back.Summary.HighLevel != next.Summary.HighLevel {
					fail("read after update %d: version %v, %v", got.Meta.Version, back != nil && back.Summary.HighLevel == next.Summary.HighLevel, err)
					return
				}
				sid := fmt.Sprintf("w%d-s%05d", w, i)
				evs := events(sid, sid, 20)
				for j := range evs {
					evs[j].Text = text
				}
				if _, err := s.Ingest(ctx, IngestBatch{File: file(sid, 2000), Events: evs}); err != nil {
					fail("ingest: %v", err)
					return
				}
				if got, err := s.Episode(ctx, sid, 0, 100); err != nil || len(got) != 20 {
					fail("episode %s after ingest: %d events, %v", sid, len(got), err)
					return
				}
				if err := s.ClearEpisode(ctx, sid, 20); err != nil {
					fail("clear: %v", err)
					return
				}
				if got, err := s.Episode(ctx, sid, 0, 100); err != nil || len(got) != 0 {
					fail("episode %s after clear: %d events, %v", sid, len(got), err)
					return
				}
				// A moment with no call in flight, now and then, as a
				// daemon's calls leave: when a reclaim can begin.
				time.Sleep(time.Duration(i%3) * time.Millisecond)
			}
		}()
	}
	ran := 0
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && len(fails) == 0 {
		// A whole reclaim runs the collector, not under the race
		// detector: Badger's own race between the collector and a
		// commit (see TestReleaseUnderLoad).
		if s.flushAndCompact() || !raceBuild && s.reclaimIfDue() {
			ran++
		}
	}
	close(stop)
	wg.Wait()
	for _, f := range fails {
		t.Error(f)
	}
	if ran == 0 {
		t.Error("no reclaim ran among the calls")
	}
	t.Logf("%d reclaims among the calls", ran)
}

// TestReclaimAndClose: Close while reclaims run, both called directly and
// from the idle check, neither hangs nor panics nor loses what was
// written; a reclaim once Close began does nothing.
func TestReclaimAndClose(t *testing.T) {
	smallReclaims(t, 5*time.Millisecond)
	dir := t.TempDir()
	for round := range 6 {
		s := openIngest(t, dir, nil)
		writeAndClear(t, s, fmt.Sprintf("r%d", round), 4)
		var ran atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			// The idle check reclaims too (reclaimIfDue, whose
			// bookkeeping is compactLoop's alone): here the flush and
			// compaction, then the collector, as a reclaim runs them.
			for !s.closing.Load() {
				if s.flushAndCompact() {
					ran.Add(1)
					s.collectGarbage()
				}
			}
			// Close has begun: no reclaim may run now.
			if s.flushAndCompact() {
				t.Error("a reclaim ran after Close began")
			}
		}()
		// Let the reclaims and the idle check's own reclaim get going.
		time.Sleep(time.Duration(round) * 20 * time.Millisecond)
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: Close hung during reclaims", round)
		}
		<-done
		if s.reclaimIfDue() || s.flushAndCompact() {
			t.Error("a reclaim ran on a closed store")
		}
		t.Logf("round %d: %d reclaims before Close", round, ran.Load())
	}
	s := openIngest(t, dir, nil)
	if sessions, err := s.Sessions(context.Background()); err != nil || len(sessions) != 6*4 {
		t.Errorf("%d sessions after the rounds (%v), want %d", len(sessions), err, 6*4)
	}
	for round := range 6 {
		sid := fmt.Sprintf("r%d-%04d", round, 3)
		if evs := mustEpisode(t, s, sid, 0, 100); len(evs) != 50 {
			t.Errorf("%d events buffered for %s, want 50", len(evs), sid)
		}
	}
	if err := s.Damage(); err != nil {
		t.Error(err)
	}
}

// TestReclaimOnFullDisk: no reclaim on a full disk (it writes tables and
// value logs) nor on a store opened read-only (Badger panics on a
// DropPrefix or Flatten of a read-only database); once space is back and
// the store reopened itself read-write, the reclaim runs.
func TestReclaimOnFullDisk(t *testing.T) {
	smallReclaims(t, time.Hour)
	dir := t.TempDir()
	d := newDisk(1 << 40)
	s := openSpace(t, dir, d.options(t))
	writeAndClear(t, s, "full", 16)
	d.free.Store(1 << 20)
	if s.reclaimIfDue() {
		t.Error("a reclaim ran on a full disk")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openSpace(t, dir, d.options(t))
	if !s.readOnly.Load() {
		t.Fatal("the store did not open read-only on a full disk")
	}
	if s.reclaimIfDue() {
		t.Error("a reclaim ran on a store opened read-only")
	}
	d.free.Store(1 << 40)
	for deadline := time.Now().Add(10 * time.Second); s.readOnly.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the store did not reopen read-write once space was back")
		}
	}
	if !reclaimSoon(s) {
		t.Error("no reclaim once space was back")
	}
	if evs := mustEpisode(t, s, "full-0015", 0, 100); len(evs) != 50 {
		t.Errorf("%d events buffered after the reclaim, want 50", len(evs))
	}
}

// TestReclaimKeyLeftByCrash: a crash between writing the reclaim key and
// dropping it leaves "r/flush" stored. Nothing that reads the store whole
// minds it (the verification, export, salvage, import of the export), and
// the next reclaim drops it.
func TestReclaimKeyLeftByCrash(t *testing.T) {
	smallReclaims(t, time.Hour)
	dir := t.TempDir()
	s := openIngest(t, dir, nil)
	ctx := context.Background()
	ids := fillForReclaim(t, s)
	if err := s.Write(ctx, func(txn *badger.Txn) error { return txn.Set(reclaimKey, nil) }); err != nil {
		t.Fatal(err)
	}
	want := viewOf(t, s, ids)
	crashClose(t, s)

	s = openIngest(t, dir, nil)
	if err := s.Damage(); err != nil {
		t.Errorf("the reclaim key makes the store damaged: %v", err)
	}
	if n := countKeys(t, s, reclaimKey); n != 1 {
		t.Fatalf("%d reclaim keys after the crash, want 1", n)
	}
	if got := viewOf(t, s, ids); !reflect.DeepEqual(got, want) {
		t.Errorf("after the crash the store answers\n%+v\nnot\n%+v", got, want)
	}
	var exported []*medallion.Medallion
	if err := s.Export(ctx, func(m *medallion.Medallion) error { exported = append(exported, m); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ExportJSON(ctx, func([]byte) error { return nil }); err != nil {
		t.Errorf("export JSON: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var salvaged int
	if _, err := Salvage(dir, filepath.Join(t.TempDir(), "scratch"), nil, func(*medallion.Medallion) error { salvaged++; return nil }); err != nil {
		t.Errorf("salvage: %v", err)
	}
	if salvaged != len(exported) {
		t.Errorf("salvage found %d versions, the export %d", salvaged, len(exported))
	}
	imported := openIngest(t, t.TempDir(), nil)
	for i := 0; i < len(exported); {
		j := i + 1
		for j < len(exported) && exported[j].Meta.MedallionID == exported[i].Meta.MedallionID {
			j++
		}
		if err := imported.Import(ctx, exported[i:j]); err != nil {
			t.Errorf("import of the export: %v", err)
		}
		i = j
	}
	if n, err := imported.Count(ctx); err != nil || n != len(ids) {
		t.Errorf("%d medallions imported (%v), want %d", n, err, len(ids))
	}

	s = openIngest(t, dir, nil)
	writeAndClear(t, s, "after", 16)
	if !reclaimSoon(s) {
		t.Fatal("no reclaim was due")
	}
	if n := countKeys(t, s, reclaimKey); n != 0 {
		t.Errorf("%d reclaim keys after the next reclaim, want 0", n)
	}
}

// crashClose closes s as a kill -9 would leave it: no counter fold.
func crashClose(t *testing.T, s *Badger) {
	t.Helper()
	prev := foldAtClose
	foldAtClose = false
	defer func() { foldAtClose = prev }()
	if err := s.Close(); err != nil && !errors.Is(err, errClosed) {
		t.Fatal(err)
	}
}

// TestDropPrefixHoldsOffWrites: the store's DropPrefix (the search index's
// rebuild starts with one) blocks Badger's writes while it runs, like a
// reclaim's flush, and Badger fails the writes it blocks
// (ErrBlockedWrites) or, when one commit slips between its check and the
// write queue, never finishes it: that commit holds back every later
// transaction's read timestamp, the DropPrefix's own included, and the
// store hangs (TestReleaseUnderLoad under the race detector did). Writes
// made while prefixes are dropped must all succeed, having waited.
func TestDropPrefixHoldsOffWrites(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	ctx := context.Background()
	var writeErr error
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := s.Write(ctx, func(txn *badger.Txn) error {
				return txn.Set(fmt.Appendf(nil, "zw/%06d", i), []byte("v"))
			})
			if err != nil {
				writeErr = fmt.Errorf("write %d: %w", i, err)
				return
			}
		}
	}()
	for range 8 {
		if err := s.Write(ctx, func(txn *badger.Txn) error { return txn.Set([]byte("zd/x"), []byte("v")) }); err != nil {
			t.Fatalf("write before a drop: %v", err)
		}
		if err := s.DropPrefix(ctx, "zd/"); err != nil {
			t.Fatalf("drop prefix: %v", err)
		}
	}
	close(stop)
	<-done
	if writeErr != nil {
		t.Fatalf("a write during the prefix drops failed: %v", writeErr)
	}
	if n := countKeys(t, s, []byte("zd/")); n != 0 {
		t.Errorf("%d keys left under the dropped prefix", n)
	}
}
