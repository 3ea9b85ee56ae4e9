package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/transcript"
)

// markerCounts are the filter's lookup counters and whether it answers
// with no scan running or due.
type markerCounts struct {
	gets, skips int64
	ready       bool
}

func markerStats(s *Badger) markerCounts {
	s.markers.mu.Lock()
	defer s.markers.mu.Unlock()
	m := &s.markers
	return markerCounts{m.gets, m.skips, m.cur != nil && m.next == nil && !m.cur.full()}
}

// since is what the counters moved since c.
func (c markerCounts) since(prev markerCounts) markerCounts {
	return markerCounts{c.gets - prev.gets, c.skips - prev.skips, c.ready}
}

// waitMarkers waits until the filter answers, no scan runs and none is
// due.
func waitMarkers(t *testing.T, s *Badger) {
	t.Helper()
	waitFor(t, "the dedupe filter", func() bool { return markerStats(s).ready })
}

// ingestIDs stores events with ids of session sid and checks how many
// were added.
func ingestIDs(t *testing.T, s *Badger, key, sid string, ids []string, added int) {
	t.Helper()
	evs := make([]transcript.Event, len(ids))
	for i, id := range ids {
		evs[i] = ev(sid, id, i, transcript.KindUserPrompt)
	}
	res := mustIngest(t, s, IngestBatch{File: file(key, int64(len(ids))), Events: evs})
	if res.Added != added || res.Duplicates != len(ids)-added {
		t.Fatalf("added %d, %d duplicates; want %d, %d", res.Added, res.Duplicates, added, len(ids)-added)
	}
}

func idRange(prefix string, from, to int) []string {
	out := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// checkStoredOnce checks that session sid holds exactly want, each once.
func checkStoredOnce(t *testing.T, s *Badger, sid string, want []string) {
	t.Helper()
	got := ids(mustEpisode(t, s, sid, 0, 0))
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Fatalf("session %s holds %d events, want %d (%.5q…)", sid, len(got), len(want), got)
	}
}

// TestMarkerFilterSkipsGets: in a fresh store the filter answers at once;
// new events are not looked up, repeated ones are and come out duplicates.
func TestMarkerFilterSkipsGets(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	if c := markerStats(s); !c.ready {
		t.Fatal("the filter of an empty store does not answer at once")
	}
	first := idRange("a", 0, 300)
	ingestIDs(t, s, "f", "s", first, 300)
	if c := markerStats(s); c.gets != 0 || c.skips != 300 {
		t.Errorf("new events: %d lookups, %d skipped; want 0, 300", c.gets, c.skips)
	}
	before := markerStats(s)
	// Repeats across batches, and new ones beside them.
	ingestIDs(t, s, "f", "s", append(idRange("a", 200, 300), idRange("b", 0, 100)...), 100)
	c := markerStats(s).since(before)
	if c.gets < 100 || c.gets > 110 || c.gets+c.skips != 200 {
		t.Errorf("100 repeats and 100 new: %d lookups, %d skipped; want 100 lookups (a few more for wrong maybes)", c.gets, c.skips)
	}
	checkStoredOnce(t, s, "s", append(first, idRange("b", 0, 100)...))
}

// TestMarkerFilterReopen: the filter is rebuilt from the stored markers,
// and answers nothing before it has all of them.
func TestMarkerFilterReopen(t *testing.T) {
	dir := t.TempDir()
	s := openIngest(t, dir, nil)
	old := idRange("old", 0, 500)
	ingestIDs(t, s, "f", "s", old, 500)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The scan waits until released: until then every event is looked up.
	scanning, release := make(chan struct{}), make(chan struct{})
	markerScanHook = func() {
		close(scanning)
		<-release
	}
	t.Cleanup(func() { markerScanHook = nil })
	s = openIngest(t, dir, nil)
	<-scanning
	if c := markerStats(s); c.ready {
		t.Fatal("the filter answers before its scan")
	}
	// Stored before the scan's snapshot: looked up, found.
	ingestIDs(t, s, "f", "s", old[:100], 0)
	// Stored while the scan runs: in the filter being built.
	during := idRange("during", 0, 100)
	ingestIDs(t, s, "f", "s", during, 100)
	if c := markerStats(s); c.skips != 0 || c.gets != 200 {
		t.Errorf("before the scan ended: %d lookups, %d skipped; want 200, 0", c.gets, c.skips)
	}
	close(release)
	waitMarkers(t, s)

	before := markerStats(s)
	ingestIDs(t, s, "f", "s", old, 0)
	ingestIDs(t, s, "f", "s", during, 0)
	if c := markerStats(s).since(before); c.gets != 600 {
		t.Errorf("repeats after the scan: %d lookups, want 600", c.gets)
	}
	before = markerStats(s)
	ingestIDs(t, s, "f", "s", idRange("new", 0, 200), 200)
	if c := markerStats(s).since(before); c.skips < 190 {
		t.Errorf("new events after the scan: %d of 200 skipped", c.skips)
	}
	checkStoredOnce(t, s, "s", slices.Concat(old, during, idRange("new", 0, 200)))

	// Reopened once more, scan and all.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	markerScanHook = nil
	s = openIngest(t, dir, nil)
	waitMarkers(t, s)
	ingestIDs(t, s, "f", "s", slices.Concat(old, during, idRange("new", 0, 200)), 0)
	checkStoredOnce(t, s, "s", slices.Concat(old, during, idRange("new", 0, 200)))
}

// TestMarkerFilterGrows: a filter rebuilt bigger, while events keep coming,
// loses none of them.
func TestMarkerFilterGrows(t *testing.T) {
	prev := minMarkerBits
	minMarkerBits = 1024 // full at 128 markers
	t.Cleanup(func() { minMarkerBits = prev })
	s := openIngest(t, t.TempDir(), nil)
	var all []string
	for i := range 20 {
		batch := idRange(fmt.Sprintf("g%d", i), 0, 100)
		// Each batch also repeats one event of every earlier batch.
		var repeats []string
		for j := 0; j < i; j++ {
			repeats = append(repeats, all[j*100+i])
		}
		ingestIDs(t, s, "f", "s", append(batch, repeats...), len(batch))
		all = append(all, batch...)
	}
	waitMarkers(t, s)
	s.markers.mu.Lock()
	bits := s.markers.cur.mask + 1
	s.markers.mu.Unlock()
	if bits < 2000*markerFullBits {
		t.Errorf("the filter of 2000 markers has %d bits, want at least %d a marker", bits, markerFullBits)
	}
	before := markerStats(s)
	ingestIDs(t, s, "f", "s", all, 0)
	ingestIDs(t, s, "f", "s", idRange("new", 0, 1000), 1000)
	if c := markerStats(s).since(before); c.gets > 2000+100 {
		t.Errorf("2000 repeats and 1000 new events: %d lookups", c.gets)
	}
	checkStoredOnce(t, s, "s", append(all, idRange("new", 0, 1000)...))
}

// TestMarkerFilterConcurrentIngest: Ingest calls of the same events at
// once store each event once. Each writer has a session of its own (as a
// resumed session's copy of history), so that the markers are the only
// keys the writers share: a skipped lookup is no read for Badger's
// conflict detection, and this holds only because Ingest calls take turns.
func TestMarkerFilterConcurrentIngest(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	const writers, batches, perBatch = 4, 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				evs := events(fmt.Sprintf("s%d", w), fmt.Sprintf("c%d", b), perBatch)
				if _, err := s.Ingest(context.Background(), IngestBatch{File: file(fmt.Sprintf("f%d", w), int64(b)), Events: evs}); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	var got, want []string
	for w := range writers {
		got = append(got, ids(mustEpisode(t, s, fmt.Sprintf("s%d", w), 0, 0))...)
	}
	for b := range batches {
		want = append(want, idRange(fmt.Sprintf("c%d", b), 0, perBatch)...)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("stored %d events in all, want each of %d once", len(got), len(want))
	}
}

// TestMarkerFilterIngestDuringCommit: a second Ingest of an event, made
// while the first one's transaction is about to commit, finds it stored.
// Without the turns Ingest calls take, the second one would see the
// first one's bits, look the marker up, miss it and commit first, and the
// first would then commit too: its skipped lookup is no read for Badger
// to find the conflict with.
func TestMarkerFilterIngestDuringCommit(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	second := make(chan IngestResult, 1)
	beforeCommit = func(op string) {
		beforeCommit = nil // the first attempt only
		go func() {
			res, err := s.Ingest(context.Background(), IngestBatch{File: file("f2", 1), Events: events("s2", "x", 1)})
			if err != nil {
				t.Errorf("second ingest: %v", err)
			}
			second <- res
		}()
		time.Sleep(50 * time.Millisecond) // room for the second to run, were it let
	}
	t.Cleanup(func() { beforeCommit = nil })
	ingestIDs(t, s, "f1", "s1", []string{"x-0"}, 1)
	if res := <-second; res.Added != 0 || res.Duplicates != 1 {
		t.Errorf("second ingest of the event: added %d, %d duplicates", res.Added, res.Duplicates)
	}
	if n := len(mustEpisode(t, s, "s1", 0, 0)) + len(mustEpisode(t, s, "s2", 0, 0)); n != 1 {
		t.Errorf("the event is stored %d times", n)
	}
}

// TestMarkerFilterFailedTransaction: a transaction that failed, or lost a
// race and ran again, left its markers' bits in the filter; the events are
// still stored once, later.
func TestMarkerFilterFailedTransaction(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	big := tooLargeForBadger("x")
	if _, err := s.Ingest(context.Background(), big); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("too large a batch: %v", err)
	}
	c := markerStats(s)
	if c.skips == 0 {
		t.Fatal("the failed batch looked up every marker: it tested nothing")
	}
	// The same events, in batches Badger takes: all new, the filter's
	// extra bits cost lookups only.
	for i := 0; i < len(big.Events); i += 100 {
		res := mustIngest(t, s, IngestBatch{File: file("f", int64(i)), Events: big.Events[i:min(i+100, len(big.Events))]})
		if res.Added != min(100, len(big.Events)-i) {
			t.Fatalf("batch at %d: added %d", i, res.Added)
		}
	}
	for i := 0; i < len(big.Events); i += 100 {
		res := mustIngest(t, s, IngestBatch{File: file("f", int64(i)), Events: big.Events[i:min(i+100, len(big.Events))]})
		if res.Added != 0 {
			t.Fatalf("repeated batch at %d: added %d", i, res.Added)
		}
	}

	// An attempt that loses a race with a ClearEpisode runs again from
	// scratch: its first attempt's bits are in the filter already.
	mustIngest(t, s, IngestBatch{File: file("g", 1), Events: events("s", "a", 4)})
	attempts := 0
	beforeCommit = func(op string) {
		if op == "ingest" {
			if attempts++; attempts == 1 {
				if err := s.ClearEpisode(context.Background(), "s", 4); err != nil {
					t.Errorf("clear: %v", err)
				}
			}
		}
	}
	t.Cleanup(func() { beforeCommit = nil })
	ingestIDs(t, s, "g", "s", idRange("b", 0, 3), 3)
	beforeCommit = nil
	if attempts != 2 {
		t.Fatalf("ingest ran %d times, want 2", attempts)
	}
	ingestIDs(t, s, "g", "s", idRange("b", 0, 3), 0)
	checkStoredOnce(t, s, "s", idRange("b", 0, 3))
}

// TestBloom: no added hash is ever "absent", and the wrong "maybes" of a
// filter at its fullest (8 bits a marker) are near the 2.2% expected.
func TestBloom(t *testing.T) {
	f := newBloom(0)
	n := int(f.mask+1) / markerFullBits
	rng := rand.New(rand.NewPCG(3, 4))
	hash := func(i int) []byte {
		sum := sha256.Sum256(fmt.Appendf(nil, "%d-%d", rng.Uint64(), i))
		return sum[:markerHashLen]
	}
	added := make([][]byte, n)
	for i := range added {
		added[i] = hash(i)
		f.add(added[i])
	}
	if f.full() {
		t.Error("full at 8 bits a marker")
	}
	for i, h := range added {
		if !f.mayHold(h) {
			t.Fatalf("hash %d added, and absent", i)
		}
	}
	wrong := 0
	const tries = 100000
	for i := range tries {
		if f.mayHold(hash(-i)) {
			wrong++
		}
	}
	if rate := float64(wrong) / tries; rate > 0.03 {
		t.Errorf("%.2f%% wrong maybes, want about 2.2%%", 100*rate)
	}
	f.add(hash(-1))
	if !f.full() {
		t.Error("not full past 8 bits a marker")
	}
}

// FuzzMarkerFilter runs one sequence of batches into a store with the
// filter and into one without (every marker looked up, as before the
// filter) and wants the same results. Each byte of the input is a batch
// of 1 to 37 consecutive events starting at a multiple of 8 below 128, so
// batches overlap, or, 0xff, a close and reopen; the filter grows from
// 1024 bits, so it is rebuilt while batches come.
func FuzzMarkerFilter(f *testing.F) {
	f.Add([]byte{0x01, 0x12, 0x01, 0xff, 0x12, 0x7f})
	f.Add([]byte{0x47, 0x47, 0xff, 0xff, 0x8e, 0x46})
	f.Add([]byte{0x07, 0x17, 0x27, 0x37, 0x47, 0x57, 0x67, 0x77, 0x87, 0x97, 0xa7, 0xb7, 0xc7, 0xd7, 0xe7, 0xf7, 0xff, 0x00, 0x77})
	prev := minMarkerBits
	minMarkerBits = 1024
	f.Cleanup(func() { minMarkerBits = prev })
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		dirOn, dirOff := t.TempDir(), t.TempDir()
		var on, off *Badger
		open := func() {
			on, off = openIngest(t, dirOn, nil), openIngest(t, dirOff, nil)
			waitMarkers(t, off)
			off.markers.mu.Lock()
			off.markers.cur = nil // looks every marker up, and never scans again
			off.markers.mu.Unlock()
		}
		open()
		for i, op := range ops {
			if op == 0xff {
				for _, s := range []*Badger{on, off} {
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
				}
				open()
				continue
			}
			evs := events("s", "e", 256)[int(op>>4)*8:][:int(op&0x0f)+1+int(op&0x0f)/2*3]
			batch := IngestBatch{File: file("f", int64(i)), Events: evs}
			got, want := mustIngest(t, on, batch), mustIngest(t, off, batch)
			if got.Added != want.Added || got.Duplicates != want.Duplicates {
				t.Fatalf("op %d: added %d, %d duplicates; without the filter %d, %d", i, got.Added, got.Duplicates, want.Added, want.Duplicates)
			}
		}
		if got, want := ids(mustEpisode(t, on, "s", 0, 0)), ids(mustEpisode(t, off, "s", 0, 0)); !slices.Equal(got, want) {
			t.Fatalf("stored %q; without the filter %q", got, want)
		}
		if c := markerStats(off); c.skips != 0 {
			t.Fatalf("the store without the filter skipped %d lookups", c.skips)
		}
	})
}
