package store

import (
	"fmt"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// writeRaw writes n bytes of small values (they stay in the LSM tree) in
// transactions of about 1 MiB, waking the compactor as the store's own
// writes do.
func writeRaw(t *testing.T, b *Badger, n int) {
	t.Helper()
	val := make([]byte, 400)
	for i := 0; i < n/len(val); {
		b.wrote()
		err := b.db.Update(func(txn *badger.Txn) error {
			for j := 0; j < 2000; j, i = j+1, i+1 {
				if err := txn.Set(fmt.Appendf(nil, "z/%09d", i), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("write: %v", err)
		}
	}
}

// TestCompactsWithoutBadgerCompactors: Badger runs no compactor of its own
// (NumCompactors 0), so without compactLoop level 0 would fill to its
// stall and every write would block for ever. 64 MiB through 8 MiB
// memtables makes eight level-0 tables; the writes must go through and
// level 0 end below the compaction threshold.
func TestCompactsWithoutBadgerCompactors(t *testing.T) {
	b, err := Open(t.TempDir(), Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		writeRaw(t, b, 64<<20)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("writes stalled: level 0 was never compacted")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		l0 := b.db.Levels()[0].NumTables
		if l0 < compactAt && len(b.db.Tables()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("level 0 still holds %d tables (%d in all)", l0, len(b.db.Tables()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
