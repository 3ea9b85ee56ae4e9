package store

import (
	"context"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Buffered events are the store's passing data: a checkpoint deletes the
// chunks it curated (ClearEpisode). Badger frees a deleted value's space
// in two steps: a compaction that meets the delete above the value counts
// it as garbage of its value log file, and the value-log collector then
// rewrites a file that is mostly garbage. But the keys are small (the
// chunks live in the value log), so one memtable holds the keys of about
// a hundred megabytes of events, and the store compacts only once level 0
// holds compactAt tables: the events of a backfill stayed on disk until
// hundreds of megabytes more had been written (issue 12, a daemon you
// forget is running: 136 MB of events written and cleared left 142 MB on
// disk; after a reclaim, 13 MB).
//
// So once the store is idle (compactLoop) and its value logs have grown by
// at least reclaimAfter and by at least its tables' size since the last
// reclaim (a reclaim compacts the tables whole, so it rewrites about as
// much as it may free, or less), it reclaims: it flushes the memtables and
// compacts level 0 (DropPrefix, Badger's only public call that flushes a
// memtable, dropping a key it has just written for that), flattens the
// tree, and runs the collector.
//
// The flush and level 0's compaction hold off every call (see
// flushAndCompact): 9-11 ms on a copy of a million medallions' store,
// 0.24 s with a memtable full of cleared events' keys. Flattening then
// rewrites about all the tables (a memtable's keys span the key space),
// under the read lock, so calls go on, but at a CPU cost: 3-3.6 s for
// those million medallions' 424 MB of tables, and a daemon's first idle
// after its start finds a reclaim due. So a store whose tables pass
// reclaimMaxTables is left to the compactions its writes bring
// (compactAt).
var (
	reclaimAfter     int64 = 64 << 20 // variables for tests
	reclaimMaxTables int64 = 32 << 20
)

// reclaimKey is written and dropped at once by a reclaim; nothing else is
// ever stored under "r/" (see keys.go).
var reclaimKey = []byte("r/flush")

// isValueLog and isTable name Badger's value logs and tables.
func isValueLog(name string) bool { return strings.HasSuffix(name, ".vlog") }
func isTable(name string) bool    { return strings.HasSuffix(name, ".sst") }

// reclaimIfDue reclaims the space of deleted values when it is due (see
// reclaimAfter) and no call is in flight, and reports whether it did.
func (b *Badger) reclaimIfDue() bool {
	if b.readOnly.Load() || !b.measure().Writable() {
		return false
	}
	logs, err := allocatedBytes(b.dir, isValueLog)
	if err != nil {
		return false
	}
	tables, err := allocatedBytes(b.dir, isTable)
	if err != nil {
		return false
	}
	// Growth counts from the smallest size since the last reclaim: the
	// collector's own runs (Options.GCInterval) shrink the logs too.
	b.reclaimedLogs = min(b.reclaimedLogs, logs)
	if grown := logs - b.reclaimedLogs; grown < reclaimAfter || grown < tables || tables > reclaimMaxTables {
		return false
	}
	done, ok := b.tryPass()
	if !ok {
		return false // an export or a collector pass: the next idle check
	}
	defer done()
	start, before := time.Now(), logs+tables
	if !b.flushAndCompact() {
		return false
	}
	b.trimMapped(mappedBudget) // the flattening read and wrote every table
	b.collectGarbage()
	after := b.DiskUsage()
	b.reclaimedLogs, _ = allocatedBytes(b.dir, isValueLog)
	b.logger.Info("reclaimed the space of deleted events and versions",
		"before_mib", before>>20, "after_mib", after>>20, "took", time.Since(start).Round(time.Millisecond))
	return true
}

// flushAndCompact flushes the memtables to level 0 and compacts the tree
// into one level, so that every delete has met what it deletes and Badger
// has counted the garbage in its value logs. DropPrefix blocks Badger's
// writes while it runs, and a write it blocks fails (ErrBlockedWrites)
// rather than wait, so the flush runs with b.mu held for writing: no call
// is in flight and the calls that come meanwhile wait for it (0.24 s with
// a memtable full of 136 MB of cleared events' keys, 9-11 ms at a million
// medallions). It gives up when a call is in flight: the store is not
// idle after all. The flattening runs under the read lock, as the store's
// other compactions do.
func (b *Badger) flushAndCompact() bool {
	return b.flushAlone() && b.flattenAll()
}

// flattenAll is flushAndCompact's compaction, under the read lock; false
// when the store is closing or the compaction failed. A step of its own
// so that a test can tell where a kill landed (TestReclaimCrash).
func (b *Badger) flattenAll() bool {
	if b.begin(context.Background()) != nil {
		return false // closing
	}
	defer b.mu.RUnlock()
	if err := b.db.Flatten(1); err != nil {
		b.logger.Warn("reclaim: compaction", "error", err)
		return false
	}
	return true
}

// flushAlone is flushAndCompact's flush, with b.mu held for writing; false
// when a call is in flight, the store is closing, or the flush failed.
func (b *Badger) flushAlone() bool {
	if !b.mu.TryLock() {
		return false
	}
	defer b.mu.Unlock()
	if b.shut() {
		return false
	}
	if err := b.db.Update(func(txn *badger.Txn) error { return txn.Set(reclaimKey, nil) }); err != nil {
		b.logger.Warn("reclaim: flush", "error", err)
		return false
	}
	if err := b.db.DropPrefix(reclaimKey); err != nil {
		// A DropPrefix that fails midway leaves Badger's memtables in
		// disarray (badger v4.9.6, db.go): when its flush fails (a table
		// it could not create) the current memtable stays in the list of
		// those to flush as well, and Badger exits the process
		// (y.AssertTrue) when it flushes the next one, a memtable later;
		// when it cannot create the new memtable there is none for the
		// next write. Reopening the database starts it over from what is
		// on disk, the memtable's log included (TestReclaimFlushFails).
		b.logger.Warn("reclaim: flush failed; reopening the store", "error", err)
		b.reopen()
		return false
	}
	return true
}
