package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// smallReclaims makes stores opened from now on start a value log every
// MiB and reclaim after 2 MiB, so that a few MiB of events show what a
// daemon's hundreds do; idle sets the idle check's period.
func smallReclaims(t *testing.T, idle time.Duration) {
	t.Helper()
	restoreLog := SetValueLogFileSize(1 << 20)
	restoreCheck := SetMappedCheck(idle)
	prevAfter, prevTables := reclaimAfter, reclaimMaxTables
	reclaimAfter = 2 << 20
	t.Cleanup(func() { restoreLog(); restoreCheck(); reclaimAfter, reclaimMaxTables = prevAfter, prevTables })
}

// reclaimSoon runs a reclaim that is due, as the store's idle check does,
// and tries again for a while when it does not run: the compaction the
// store's own writes start (compactLoop) holds the read lock, which makes
// the reclaim's flush give up, and changes the tables' size it weighs.
// On a loaded machine that compaction can still run when a test asks
// (TestReclaimKeyLeftByCrash failed so in a CI run).
func reclaimSoon(s *Badger) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s.reclaimIfDue() {
			return true
		}
	}
	return false
}

// writeAndClear ingests sessions sessions of ten batches of 50 events of
// about 1 KB and clears each batch as a checkpoint would, all but the
// last batch of the last session, which stays buffered. It returns the
// last session's id.
func writeAndClear(t testing.TB, s *Badger, prefix string, sessions int) string {
	t.Helper()
	text := strings.Repeat("go test ./internal/store: ok, the chunk is cleared ", 20)
	var sid string
	for i := range sessions {
		sid = fmt.Sprintf("%s-%04d", prefix, i)
		fs := file(sid, 0)
		for batch := range 10 {
			evs := make([]transcript.Event, 50)
			for j := range evs {
				evs[j] = ev(sid, fmt.Sprintf("%s-%d-%d", sid, batch, j), j, transcript.KindAssistantMessage)
				evs[j].Text = text
			}
			fs.Offset += 50_000
			mustIngest(t, s, IngestBatch{File: fs, Events: evs, Scopes: map[string][]string{sid: {"repo:x"}}})
			if i == sessions-1 && batch == 9 {
				break
			}
			if err := s.ClearEpisode(context.Background(), sid, uint64(batch+1)*50); err != nil {
				t.Fatal(err)
			}
		}
	}
	return sid
}

// TestReclaimFreesClearedEvents: the events checkpoints cleared leave the
// disk at a reclaim, and nothing else does: the medallion, the buffered
// events, the sessions and the file states are all there after it, and
// after a reopen. A reclaim with nothing new written since is not due,
// nor one whose tables are past reclaimMaxTables.
func TestReclaimFreesClearedEvents(t *testing.T) {
	smallReclaims(t, time.Hour)
	dir := t.TempDir()
	s := openIngest(t, dir, nil)
	ctx := context.Background()
	m := &medallion.Medallion{
		Meta:    medallion.Meta{MedallionID: "kept", SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
		Scope:   medallion.Scope{GraphNodes: []string{"repo:x"}},
		Summary: medallion.Summary{HighLevel: "what a reclaim must keep"},
	}
	if _, err := s.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	last := writeAndClear(t, s, "sess", 16)
	before := s.DiskUsage()
	reclaimMaxTables = -1 // any tables, even none, are over it
	if s.reclaimIfDue() {
		t.Fatal("a reclaim ran with the tables over reclaimMaxTables")
	}
	reclaimMaxTables = 32 << 20
	if !reclaimSoon(s) {
		t.Fatal("no reclaim after 16 sessions' events were written and cleared")
	}
	after := s.DiskUsage()
	t.Logf("store on disk: %d KiB before the reclaim, %d KiB after", before>>10, after>>10)
	if after > before/2 {
		t.Errorf("store on disk: %d KiB before the reclaim, %d KiB after; want at most half", before>>10, after>>10)
	}
	if s.reclaimIfDue() {
		t.Error("a second reclaim ran with nothing written since")
	}
	sessionsWant := 16
	check := func(s *Badger) {
		t.Helper()
		if got, err := s.Get(ctx, "kept"); err != nil || got.Summary.HighLevel != m.Summary.HighLevel {
			t.Errorf("medallion after the reclaim: %v, %v", got, err)
		}
		if evs := mustEpisode(t, s, last, 0, 100); len(evs) != 50 {
			t.Errorf("%d events buffered for %s after the reclaim, want 50", len(evs), last)
		}
		if sessions, err := s.Sessions(ctx); err != nil || len(sessions) != sessionsWant {
			t.Errorf("%d sessions after the reclaim (%v), want %d", len(sessions), err, sessionsWant)
		}
		if states, err := s.FileStates(ctx); err != nil || len(states) != sessionsWant {
			t.Errorf("%d file states after the reclaim (%v), want %d", len(states), err, sessionsWant)
		}
		if n := countKeys(t, s, reclaimKey); n != 0 {
			t.Errorf("%d reclaim keys left in the store", n)
		}
	}
	check(s)

	// Growth counts from the smallest size the logs had since: logs the
	// collector shrank below the last reclaim's size still grow into a
	// reclaim.
	s.reclaimedLogs = 1 << 40
	if s.reclaimIfDue() {
		t.Fatal("a reclaim ran with nothing written since")
	}
	writeAndClear(t, s, "more", 16)
	if !reclaimSoon(s) {
		t.Fatal("no reclaim for writes made after the logs shrank")
	}
	last, sessionsWant = "more-0015", 32
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check(openIngest(t, dir, nil))
}

// TestReclaimWhenIdle: the store reclaims by itself once it is idle.
func TestReclaimWhenIdle(t *testing.T) {
	smallReclaims(t, 100*time.Millisecond)
	s := openIngest(t, t.TempDir(), nil)
	writeAndClear(t, s, "idle", 16)
	before := s.DiskUsage()
	deadline := time.Now().Add(compactQuiet + 20*time.Second)
	for s.DiskUsage() > before/2 {
		if time.Now().After(deadline) {
			t.Fatalf("store on disk: %d KiB after the writes, still %d KiB once idle", before>>10, s.DiskUsage()>>10)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReclaimHoldsOffWrites: Badger fails the writes its DropPrefix
// blocks (ErrBlockedWrites); the writes made while reclaims run must all
// succeed, having waited.
func TestReclaimHoldsOffWrites(t *testing.T) {
	smallReclaims(t, time.Hour)
	s := openIngest(t, t.TempDir(), nil)
	ctx := context.Background()
	var writeErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			sid := fmt.Sprintf("busy-%04d", i)
			evs := events(sid, sid, 20)
			if _, err := s.Ingest(ctx, IngestBatch{File: file(sid, 2000), Events: evs}); err != nil {
				writeErr = fmt.Errorf("ingest %d: %w", i, err)
				return
			}
			if err := s.ClearEpisode(ctx, sid, 20); err != nil {
				writeErr = fmt.Errorf("clear %d: %w", i, err)
				return
			}
		}
	}()
	ran := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			if s.flushAndCompact() {
				ran++
			}
		}
	}
	if writeErr != nil {
		t.Fatalf("a write during the reclaims' flushes failed: %v", writeErr)
	}
	if ran == 0 {
		t.Fatal("no flush ran among the writes")
	}
	t.Logf("%d flushes ran among the writes", ran)
}

// TestReclaimTakesTurnsWithExport: a reclaim and an export, each a pass
// over the whole store, never run together (Badger.pass). A reclaim due
// while an export reads waits for the next idle check; an export started
// while a pass runs waits for it, or fails when its context ends first.
func TestReclaimTakesTurnsWithExport(t *testing.T) {
	smallReclaims(t, time.Hour)
	// The reclaim logs its end while it still has the turn: the log line
	// tells whether it held the turn while it worked.
	var s *Badger
	held := make(chan bool, 1)
	logger := reclaimLogger(func() { held <- len(s.pass) == 1 })
	s, err := Open(t.TempDir(), Options{Logger: logger, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	m := &medallion.Medallion{
		Meta:  medallion.Meta{MedallionID: "turns", SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
		Scope: medallion.Scope{GraphNodes: []string{"repo:x"}},
	}
	if _, err := s.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	writeAndClear(t, s, "turns", 16)
	reading, release := make(chan struct{}), make(chan struct{})
	exported := make(chan error, 1)
	go func() {
		_, err := s.ExportJSON(ctx, func([]byte) error {
			close(reading)
			<-release
			return nil
		})
		exported <- err
	}()
	<-reading
	before := s.DiskUsage()
	if s.reclaimIfDue() {
		t.Fatal("a reclaim ran while an export read the store")
	}
	if after := s.DiskUsage(); after < before {
		t.Fatalf("store on disk went %d → %d KiB while an export read it", before>>10, after>>10)
	}
	close(release)
	if err := <-exported; err != nil {
		t.Fatal(err)
	}
	if !reclaimSoon(s) {
		t.Fatal("no reclaim once the export ended")
	}
	if !<-held {
		t.Fatal("the reclaim ran without the store's turn for a pass")
	}

	// A pass in progress (as a reclaim holds it) holds exports off.
	done, ok := s.tryPass()
	if !ok {
		t.Fatal("the pass is still taken after the reclaim")
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.ExportJSON(short, func([]byte) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("export during a pass, with a context that ends: %v, want the deadline", err)
	}
	lines := make(chan int, 1)
	go func() {
		n := 0
		_, err := s.ExportJSON(ctx, func([]byte) error { n++; return nil })
		if err != nil {
			t.Error(err)
		}
		lines <- n
	}()
	select {
	case n := <-lines:
		t.Fatalf("an export wrote %d lines during another pass", n)
	case <-time.After(100 * time.Millisecond):
	}
	done()
	if n := <-lines; n != 1 {
		t.Fatalf("the export that waited wrote %d lines, want 1", n)
	}
}

// reclaimLogger is a store's logger that calls onReclaim as the store
// logs the end of a reclaim, which it does while the reclaim still has
// the store's turn for a pass; it drops everything else.
func reclaimLogger(onReclaim func()) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Info, Output: writerFunc(func(p []byte) (int, error) {
		if bytes.Contains(p, []byte("reclaimed the space")) {
			onReclaim()
		}
		return len(p), nil
	})})
}

// writerFunc is an io.Writer of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestReclaimHandsBackAfterPoolDrain: poolDrain after a reclaim the store
// hands everything back once more (OnIdle), well before the next idle
// check could: Badger's allocator pool lets the reclaim's table buffers go
// only by then. That is the idle release of the stretch: with no call
// after it, the idle checks that follow do not hand back again.
func TestReclaimHandsBackAfterPoolDrain(t *testing.T) {
	// The reclaim's writes wake compactLoop, which hands back nothing
	// before it sleeps again, compactQuiet on: poolDrain lies past that,
	// and the idle check after the reclaim's finds its calls.
	smallReclaims(t, 5*time.Second)
	prev := poolDrain
	poolDrain = compactQuiet + time.Second
	t.Cleanup(func() { poolDrain = prev })
	idle := make(chan time.Time, 100)
	reclaimed := make(chan time.Time, 1)
	logger := reclaimLogger(func() { reclaimed <- time.Now() })
	s, err := Open(t.TempDir(), Options{Logger: logger, GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1,
		OnIdle: func() { idle <- time.Now() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	writeAndClear(t, s, "drain", 16)
	var end time.Time
	select {
	case end = <-reclaimed:
	case <-time.After(compactQuiet + 30*time.Second):
		t.Fatal("no reclaim once idle")
	}
	// The release at the reclaim's own check comes first; the next idle
	// check is mappedCheck away at least.
	timeout := time.After(mappedCheck)
	for {
		select {
		case at := <-idle:
			if d := at.Sub(end); d >= poolDrain {
				t.Logf("handed back again %v after the reclaim", d.Round(time.Millisecond))
				noIdleRelease(t, idle, 2*mappedCheck+time.Second, "after the hand-back after the reclaim, with no call since")
				return
			}
		case <-timeout:
			t.Fatalf("no OnIdle between %v and %v after the reclaim", poolDrain, mappedCheck)
		}
	}
}
