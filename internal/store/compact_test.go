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

// idleStore opens a store whose idle checks come every 100 ms and whose
// OnIdle calls are sent on idle, and waits for the first: Open's own
// wake-up ends in a compaction check and a sync (calls), then two idle
// checks.
func idleStore(t *testing.T) (*Badger, <-chan time.Time) {
	t.Helper()
	prev := mappedCheck
	mappedCheck = 100 * time.Millisecond
	t.Cleanup(func() { mappedCheck = prev })
	idle := make(chan time.Time, 10)
	b, err := Open(t.TempDir(), Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1,
		OnIdle: func() { idle <- time.Now() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	idleRelease(t, idle, compactQuiet+10*time.Second, "Open")
	return b, idle
}

// idleRelease waits up to d for idle to hear of an OnIdle, which should
// come after what happened, and returns when it came.
func idleRelease(t *testing.T, idle <-chan time.Time, d time.Duration, after string) time.Time {
	t.Helper()
	select {
	case at := <-idle:
		return at
	case <-time.After(d):
		t.Fatalf("no OnIdle within %v after %s", d, after)
		return time.Time{}
	}
}

// noIdleRelease fails the test if idle hears of an OnIdle within d, while
// what it names holds (a release with no call since, a call running).
func noIdleRelease(t *testing.T, idle <-chan time.Time, d time.Duration, while string) {
	t.Helper()
	select {
	case at := <-idle:
		t.Fatalf("OnIdle at %v, within %v, %s", at, d, while)
	case <-time.After(d):
	}
}

// TestOnIdle: OnIdle comes once a whole idle check has passed with no
// call, not while calls keep coming or one is running, and again after
// the next stretch of calls.
func TestOnIdle(t *testing.T) {
	b, idle := idleStore(t)
	ctx := t.Context()
	noIdleRelease(t, idle, 5*mappedCheck, "again in the idle stretch of the first, with no call since")

	// Reads every 20 ms for a second: no OnIdle meanwhile.
	until := time.Now().Add(time.Second)
	for time.Now().Before(until) {
		if _, err := b.Count(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if at := idleRelease(t, idle, 5*mappedCheck, "the reads stopped"); at.Before(until) {
		t.Fatalf("OnIdle at %v while the store was read", at)
	}

	// A call in flight (a long export, say) keeps the store busy however
	// long it runs.
	if err := b.begin(ctx); err != nil {
		t.Fatal(err)
	}
	noIdleRelease(t, idle, 5*mappedCheck, "during a call")
	b.mu.RUnlock()
	idleRelease(t, idle, 5*mappedCheck, "the call returned")
}

// TestReleaseIdle: ReleaseIdle hands back and calls OnIdle at once, and
// counts as the idle release of the calls before it: the idle checks that
// follow with no call since do not call OnIdle again. A call after it
// gets its own.
func TestReleaseIdle(t *testing.T) {
	b, idle := idleStore(t)
	for range 2 {
		// Calls, then the caller's release before an idle check
		// could come: the export's case.
		if _, err := b.Count(t.Context()); err != nil {
			t.Fatal(err)
		}
		b.ReleaseIdle()
		select {
		case <-idle:
		default:
			t.Fatal("ReleaseIdle did not call OnIdle")
		}
		noIdleRelease(t, idle, 5*mappedCheck, "after ReleaseIdle with no call since")
	}
	if _, err := b.Count(t.Context()); err != nil {
		t.Fatal(err)
	}
	idleRelease(t, idle, 5*mappedCheck, "a call that came after ReleaseIdle")
}
