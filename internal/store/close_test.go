package store

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// TestCloseDuringStall: writes that fill level 0 up to Badger's stall wait
// inside Badger for a compaction, and Close, which waits for them, must
// still return once compactLoop has ended (it hung for ever). Found by a
// review of the store's release.
func TestCloseDuringStall(t *testing.T) {
	b, err := Open(t.TempDir(), Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			val := make([]byte, 400) // stays in the tree, fills memtables
			for i := 0; ; i++ {
				if err := b.Write(t.Context(), func(txn *badger.Txn) error {
					for j := range 2000 {
						if err := txn.Set(fmt.Appendf(nil, "z/%d/%09d/%d", w, i, j), val); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					return // the store is closing
				}
			}
		})
	}
	start := time.Now()
	for time.Since(start) < 20*time.Second && b.db.Levels()[0].NumTables < 4 {
		time.Sleep(time.Millisecond)
	}
	stalled, at := b.db.Levels()[0].NumTables >= 4, time.Since(start)
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
		wg.Wait() // the writers' next call failed
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("Close hangs with writes waiting on level 0:\n%s", buf[:runtime.Stack(buf, true)])
	}
	if !stalled {
		t.Skip("the writers did not fill level 0 up to the stall within 20 s: nothing checked")
	}
	t.Logf("level 0 at the stall after %v", at.Round(time.Millisecond))
}
