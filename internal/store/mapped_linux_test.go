package store

import (
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
	b, err := Open(at, Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Opening woke compactLoop, which trims when the process's mapped
	// memory passes its budget: let it fall asleep first. Writes straight
	// to Badger (not through the store) do not wake it.
	time.Sleep(compactQuiet + 500*time.Millisecond)
	// Big values go to the value log, written through its map.
	val := make([]byte, 64<<10)
	for i := range 256 {
		if err := b.db.Update(func(txn *badger.Txn) error {
			return txn.Set([]byte("v/"+strconv.Itoa(i)), val)
		}); err != nil {
			t.Fatal(err)
		}
	}
	before := residenttest.KB(t, residenttest.Under(dir))
	if before < 8<<10 {
		t.Fatalf("only %d kB of the store's maps resident after writing 16 MiB: nothing to trim", before)
	}
	// The kernel skips pages still in another CPU's batch of pages on
	// their way to its lists: a few tries, as the daemon trims again at
	// its next quiet moment.
	b.sync()
	after := before
	for try := 0; try < 20 && after > before/4; try++ {
		b.trimMapped(0)
		time.Sleep(50 * time.Millisecond)
		after = residenttest.KB(t, residenttest.Under(dir))
	}
	t.Logf("store maps resident: %d kB → %d kB", before, after)
	if after > before/4 {
		t.Errorf("store maps resident after trimMapped: %d kB of %d kB", after, before)
	}
}
