package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
)

// disk is a fake FreeSpace whose answer a test sets, and a record of the
// OnSpace calls.
type disk struct {
	free atomic.Int64
	mu   sync.Mutex
	seen []Space
}

func newDisk(free int64) *disk {
	d := &disk{}
	d.free.Store(free)
	return d
}

func (d *disk) freeSpace(string) (int64, error) { return d.free.Load(), nil }

func (d *disk) onSpace(s Space) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen = append(d.seen, s)
}

func (d *disk) changes() []Space {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

func (d *disk) options(t *testing.T) Options {
	return Options{
		Logger:        hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Warn, Output: t.Output()}),
		GCInterval:    -1,
		Reserve:       64 << 20,
		SpaceInterval: 10 * time.Millisecond,
		FreeSpace:     d.freeSpace,
		OnSpace:       d.onSpace,
	}
}

func openSpace(t *testing.T, dir string, opts Options) *Badger {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func testMedallion(id string) *medallion.Medallion {
	return &medallion.Medallion{
		Meta:    medallion.Meta{MedallionID: id, SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
		Scope:   medallion.Scope{GraphNodes: []string{"repo:x"}},
		Summary: medallion.Summary{HighLevel: "summary of " + id},
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writes tries every kind of write once and returns their errors by name.
func writes(s *Badger, n int) map[string]error {
	ctx := context.Background()
	out := map[string]error{}
	_, out["create"] = s.Create(ctx, testMedallion(fmt.Sprintf("m%d", n)))
	m, err := s.Get(ctx, "m0")
	if err != nil || m == nil {
		m = testMedallion("m0")
		m.Meta.Version = 1
	}
	m.Summary.HighLevel = fmt.Sprintf("update %d", n)
	_, out["update"] = s.Update(ctx, m)
	sid := fmt.Sprintf("s%d", n)
	_, out["ingest"] = s.Ingest(ctx, IngestBatch{File: file(fmt.Sprintf("f%d", n), 10), Events: events(sid, sid, 3)})
	out["delete file state"] = s.DeleteFileState(ctx, "nothing")
	out["clear episode"] = s.ClearEpisode(ctx, sid, 1)
	out["put aux"] = s.PutAux(ctx, "test/put", fmt.Appendf(nil, "put %d", n))
	_, out["add aux int"] = s.AddAuxInt(ctx, "test/added", 1)
	return out
}

func TestDiskFullRefusesWritesKeepsReads(t *testing.T) {
	ctx := context.Background()
	d := newDisk(1 << 30)
	s := openSpace(t, t.TempDir(), d.options(t))
	for what, err := range writes(s, 0) {
		if err != nil {
			t.Fatalf("%s with room: %v", what, err)
		}
	}

	d.free.Store(10 << 20)
	for what, err := range writes(s, 1) {
		var full *DiskFullError
		if !errors.Is(err, ErrDiskFull) || !errors.As(err, &full) {
			t.Errorf("%s on a full disk: %v, want ErrDiskFull", what, err)
			continue
		}
		if full.Free != 10<<20 || full.Reserve != 64<<20 || full.ReadOnly {
			t.Errorf("%s: %+v", what, full)
		}
		if !strings.Contains(err.Error(), "disk full under ") || !strings.Contains(err.Error(), "10 MiB free") {
			t.Errorf("%s: message %q", what, err)
		}
	}
	// Reads keep working and nothing refused was stored.
	if m, err := s.Get(ctx, "m0"); err != nil || m == nil || m.Meta.Version != 2 {
		t.Fatalf("get on a full disk: %+v, %v", m, err)
	}
	if m, err := s.Get(ctx, "m1"); err != nil || m != nil {
		t.Errorf("refused create stored: %+v, %v", m, err)
	}
	if fs, err := s.FileState(ctx, "f1"); err != nil || fs != nil {
		t.Errorf("refused ingest moved a file state: %+v, %v", fs, err)
	}
	if v, err := s.GetAux(ctx, "test/put"); err != nil || string(v) != "put 0" {
		t.Errorf("aux record after a refused put: %q, %v; want put 0", v, err)
	}
	if v, err := s.GetAux(ctx, "test/added"); err != nil || string(v) != "1" {
		t.Errorf("aux integer after a refused add: %q, %v; want 1", v, err)
	}
	if got := s.Space(); got.Writable() || !got.Full || got.Free != 10<<20 {
		t.Errorf("space: %+v", got)
	}

	d.free.Store(1 << 30)
	for what, err := range writes(s, 2) {
		if err != nil {
			t.Errorf("%s once space is back: %v", what, err)
		}
	}
	// One change each way, however many writes saw them.
	got := d.changes()
	if len(got) != 2 || !got[0].Full || got[1].Full {
		t.Errorf("OnSpace calls: %+v, want full then not", got)
	}
}

func TestDiskFullReserveOff(t *testing.T) {
	d := newDisk(0)
	opts := d.options(t)
	opts.Reserve = -1
	s := openSpace(t, t.TempDir(), opts)
	for what, err := range writes(s, 0) {
		if err != nil {
			t.Errorf("%s with the guard off: %v", what, err)
		}
	}
}

// fillStore writes what checkFilled reads and closes the store cleanly.
func fillStore(t *testing.T, dir string) {
	t.Helper()
	s := openFilled(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// openFilled opens a store without a reserve and writes a few medallions,
// events and an aux integer.
func openFilled(t *testing.T, dir string) *Badger {
	t.Helper()
	s, err := Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Create(context.Background(), testMedallion(fmt.Sprintf("m%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	evs := events("s", "e", 5)
	for i := range evs {
		// Their chunk goes over the 512-byte value threshold: the value
		// log holds an entry, which the damage tests need.
		evs[i].Text += strings.Repeat(" and more", 20)
	}
	mustIngest(t, s, IngestBatch{File: file("f", 10), Events: evs})
	if _, err := s.AddAuxInt(context.Background(), "test/filled", 7); err != nil {
		t.Fatal(err)
	}
	return s
}

// checkFilled checks what fillStore wrote is readable.
func checkFilled(t *testing.T, s *Badger) {
	t.Helper()
	ctx := context.Background()
	for i := range 3 {
		if m, err := s.Get(ctx, fmt.Sprintf("m%d", i)); err != nil || m == nil {
			t.Errorf("get m%d: %+v, %v", i, m, err)
		}
	}
	if n, err := s.Count(ctx); err != nil || n != 3 {
		t.Errorf("count %d, %v; want 3", n, err)
	}
	if got := ids(mustEpisode(t, s, "s", 0, 0)); len(got) != 5 {
		t.Errorf("episode: %q", got)
	}
	if fs, err := s.FileState(ctx, "f"); err != nil || fs == nil || fs.Offset != 10 {
		t.Errorf("file state: %+v, %v", fs, err)
	}
	if n, err := s.AuxInt(ctx, "test/filled"); err != nil || n != 7 {
		t.Errorf("aux integer %d, %v; want 7", n, err)
	}
}

func TestOpenOnFullDiskIsReadOnlyThenReopens(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir)

	d := newDisk(1 << 20)
	s := openSpace(t, dir, d.options(t))
	if sp := s.Space(); !sp.ReadOnly || !sp.Full {
		t.Fatalf("space after open on a full disk: %+v", sp)
	}
	checkFilled(t, s)
	for what, err := range writes(s, 5) {
		var full *DiskFullError
		if !errors.As(err, &full) || !full.ReadOnly {
			t.Errorf("%s on a read-only store: %v", what, err)
		}
	}

	d.free.Store(1 << 30)
	waitFor(t, "a read-write reopen", func() bool { return s.Space().Writable() })
	checkFilled(t, s)
	for what, err := range writes(s, 6) {
		if err != nil {
			t.Errorf("%s after the reopen: %v", what, err)
		}
	}
	got := d.changes()
	if len(got) < 2 || !got[0].ReadOnly || got[len(got)-1].ReadOnly || got[len(got)-1].Full {
		t.Errorf("OnSpace calls: %+v", got)
	}
}

// TestHelperUncleanStop is not a test: TestOpenOnFullDiskAfterCrash runs
// the test binary with it to write a store and exit without closing it, as
// a daemon killed by SIGBUS or kill -9 does.
func TestHelperUncleanStop(t *testing.T) {
	dir := os.Getenv("MEDALLION_UNCLEAN_STORE")
	if dir == "" {
		t.Skip("helper process only")
	}
	openFilled(t, dir)
	os.Exit(0)
}

func TestOpenOnFullDiskAfterCrash(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUncleanStop$")
	cmd.Env = append(os.Environ(), "MEDALLION_UNCLEAN_STORE="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "00001.mem")); err != nil {
		t.Fatalf("the helper left no memtable log to replay: %v", err)
	}

	// Badger refuses a read-only open here (the memtable log needs
	// truncating); with too little room for a read-write open either, Open
	// must fail with a clear error rather than fault.
	d := newDisk(1 << 20)
	_, err := Open(dir, d.options(t))
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "cannot be opened even read-only") {
		t.Fatalf("open with 1 MiB free: %v", err)
	}

	// With room for the replay but below the reserve: read-only in effect.
	d.free.Store(40 << 20)
	s := openSpace(t, dir, d.options(t))
	if sp := s.Space(); !sp.ReadOnly {
		t.Fatalf("space: %+v", sp)
	}
	checkFilled(t, s)
	if _, err := s.Create(context.Background(), testMedallion("new")); !errors.Is(err, ErrDiskFull) {
		t.Errorf("create on a read-only store: %v", err)
	}
	d.free.Store(1 << 30)
	waitFor(t, "a read-write reopen", func() bool { return s.Space().Writable() })
	checkFilled(t, s)
	if _, err := s.Create(context.Background(), testMedallion("new")); err != nil {
		t.Errorf("create after the reopen: %v", err)
	}
}

func TestOpenNewStoreOnFullDisk(t *testing.T) {
	d := newDisk(1 << 20)
	_, err := Open(filepath.Join(t.TempDir(), "store"), d.options(t))
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("new store with 1 MiB free: %v", err)
	}
}
