package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/medallionhq/medallion/internal/resident/residenttest"
)

// TestTrimMapped: the pages Badger wrote through its maps stay resident
// until trimMapped hands them back.
func TestTrimMapped(t *testing.T) {
	t.Run("data dir", func(t *testing.T) { testTrimMapped(t, false) })
	// The kernel names the maps by the resolved path.
	t.Run("data dir through a symlink", func(t *testing.T) { testTrimMapped(t, true) })
}

func testTrimMapped(t *testing.T, symlinked bool) {
	dir := t.TempDir()
	at := dir
	if symlinked {
		at = filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(dir, at); err != nil {
			t.Fatal(err)
		}
	}
	b := writtenStore(t, at)
	b.sync()
	before, after := handBack(t, dir, func() { b.trimMapped(0) })
	t.Logf("store maps resident: %d kB → %d kB", before, after)
	if after > before/4 {
		t.Errorf("store maps resident after trimMapped: %d kB of %d kB", after, before)
	}
}

// writtenStore opens a store at at (its folder, or a link to it) and
// writes 16 MiB of values to it straight through Badger: big values go to
// the value log, written through its map.
func writtenStore(t *testing.T, at string) *Badger {
	t.Helper()
	b, err := Open(at, Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	// Opening woke compactLoop, which trims when the process's mapped
	// memory passes its budget: let it fall asleep first. Writes straight
	// to Badger (not through the store) do not wake it.
	time.Sleep(compactQuiet + 500*time.Millisecond)
	for i := range 256 {
		if err := b.db.Update(func(txn *badger.Txn) error {
			return txn.Set([]byte("v/"+strconv.Itoa(i)), make([]byte, 64<<10))
		}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// handBack calls hand until at most a quarter of the store's maps under
// dir stay resident, and returns their resident kB before and after. The
// kernel skips pages still in another CPU's batch of pages on their way
// to its lists: a few tries, as the daemon trims again at its next quiet
// moment.
func handBack(t *testing.T, dir string, hand func()) (before, after int64) {
	t.Helper()
	before = residenttest.KB(t, residenttest.Under(dir))
	if before < 8<<10 {
		t.Fatalf("only %d kB of the store's maps resident after writing 16 MiB: nothing to hand back", before)
	}
	after = before
	for try := 0; try < 20 && after > before/4; try++ {
		hand()
		time.Sleep(50 * time.Millisecond)
		after = residenttest.KB(t, residenttest.Under(dir))
	}
	return before, after
}

// TestReleaseOnlyWithNoCall: release keeps the tables' and value logs'
// pages in the page cache with DONTNEED, which is safe only while nothing
// can unmap them, so it does nothing while a store call is in flight (a
// compaction, the collector and every read and write hold the read lock),
// and handBack then pages out instead. With no call it drops every mapped
// page of the store from the resident set, and the values read back whole.
func TestReleaseOnlyWithNoCall(t *testing.T) {
	dir := t.TempDir()
	b := writtenStore(t, dir)
	if err := b.begin(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b.release() {
		t.Error("release ran while a call was in flight")
	}
	b.mu.RUnlock()
	before, after := handBack(t, dir, func() {
		if !b.release() {
			t.Fatal("release refused with no call in flight")
		}
	})
	t.Logf("store maps resident: %d kB → %d kB", before, after)
	if after > before/4 {
		t.Errorf("store maps resident after release: %d kB of %d kB", after, before)
	}
	for i := range 256 {
		if err := b.db.View(func(txn *badger.Txn) error {
			item, err := txn.Get([]byte("v/" + strconv.Itoa(i)))
			if err != nil {
				return err
			}
			return item.Value(func(v []byte) error {
				if len(v) != 64<<10 {
					t.Fatalf("value %d is %d bytes after release", i, len(v))
				}
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStableMappings: release keeps the pages of the value logs and of the
// tables in the tree, and of nothing else of the store's.
func TestStableMappings(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir, Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Values up to 512 bytes stay in the tree: 26 MB of them fill and
	// flush memtables into tables.
	for i := range 4096 {
		if err := b.db.Update(func(txn *badger.Txn) error {
			for j := range 16 {
				if err := txn.Set([]byte("k/"+strconv.Itoa(i)+"/"+strconv.Itoa(j)), make([]byte, 400)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var tables []badger.TableInfo
	waitFor(t, "a flushed table", func() bool { tables = b.db.Tables(); return len(tables) > 0 })
	stable := b.stableMappings()
	for _, tb := range tables {
		if p := filepath.Join(dir, fmt.Sprintf("%06d.sst", tb.ID)); !stable([]byte(p)) {
			t.Errorf("table %s in the tree is not stable", p)
		}
	}
	for path, want := range map[string]bool{
		"000001.vlog":           true,
		"999999.sst":            false, // not in the tree
		"00001.mem":             false,
		"DISCARD":               false,
		"000001.vlog (deleted)": false,
	} {
		if got := stable([]byte(filepath.Join(dir, path))); got != want {
			t.Errorf("%s: stable %v, want %v", path, got, want)
		}
	}
}
