package store

import (
	"bytes"
	"context"
	"time"

	"github.com/dgraph-io/badger/v4/table"

	"github.com/medallionhq/medallion/internal/resident"
)

// Badger's compactors each look every 50 ms whether a level needs
// compacting (runCompactor in its levels.go), for as long as the database
// is open: two of them woke the daemon 40 times a second with nothing to
// do, 0.9 % of a core for an empty store (issue 12). The store runs none of
// them (NumCompactors 0, see badgerOptions) and compacts by itself, and
// only while it is written to: a write wakes compactLoop, which looks at
// level 0 every compactPoll until no write has come for compactQuiet, and
// then sleeps until the next write.
//
// A write to Badger turns into tables only later, when a full memtable is
// flushed to level 0, and nothing tells us when; hence the polling while
// awake. Badger stops the flush (and then every write) once level 0 holds
// NumLevelZeroTablesStall tables, so the poll must come back well within
// the time writes take to fill that many memtables: 100 ms is 800 MiB/s.
const (
	compactPoll  = 100 * time.Millisecond
	compactQuiet = 2 * time.Second
)

// mappedCheck: one read of /proc/self/statm, about 10 µs, twice a minute.
// A store with no call for that long is idle (OnIdle). A variable for
// tests.
var mappedCheck = 30 * time.Second

// poolDrain is how long after a reclaim the store hands everything back
// once more. Badger's table builders take their buffers from a pool
// (z.AllocatorPool, up to 8 allocators of twice a table's size) that lets
// one go every 2 s once none is taken: the release right after the
// reclaim, or the export that often comes right after it (the first
// after a backfill is due then too), returned the heap while the pool
// still held some of it (a store of 420 MiB of cleared events: 31 MB
// live right after its reclaim, 11 MB 20 s later), which then stayed
// resident until an idle check found no call for a whole mappedCheck:
// after the 1 GiB generated backfill's reclaim and export the daemon
// stayed at 57 MB for 58 s, then 19 MB; now 64 MB for 20 s, then 23 MB
// (FootprintBackfill with MEDALLION_PERF_IDLE=100s, 26 Nov).
//
// The loop waits for it only while asleep: a reclaim's writes wake it, and
// it sleeps again compactQuiet later, well before poolDrain.
var poolDrain = 20 * time.Second // a variable for tests

// compactAt is how many level-0 tables start a compaction: Badger's own
// threshold (NumLevelZeroTables), below its stall.
const compactAt = levelZeroTables

// wrote wakes compactLoop and notes the time for LastWrite; every write
// calls it (through roomToWrite) before writing. It never blocks.
func (b *Badger) wrote() {
	b.lastWrite.Store(time.Now().UnixNano())
	select {
	case b.writes <- struct{}{}:
	default:
	}
}

// compactLoop compacts level 0 while the store is written to and drops the
// store's mapped pages from memory (trimMapped) when they grow past
// mappedBudget, when writing stops (then OnQuiet) and when no call at all
// has come for a whole mappedCheck (then OnIdle, after reclaiming the
// space of deleted values when that is due: reclaim.go). It ends at Close.
//
// A compaction runs on a goroutine of its own: it can take seconds, it
// writes its new tables through maps too, and writes go on meanwhile, so
// the loop keeps trimming while it runs.
func (b *Badger) compactLoop() {
	defer close(b.compactDone)
	var compacting chan struct{} // closed when the running compaction ends; nil when none runs
	wait := func() {
		if compacting != nil {
			<-compacting
			compacting = nil
		}
	}
	defer wait()
	// Reads fault mapped pages in too (a checkpoint reading an episode
	// that ends in no write, the verification pass): while asleep the loop
	// still looks every mappedCheck whether they passed the budget.
	check := time.NewTicker(mappedCheck)
	defer check.Stop()
	// seen is the call count at the last check (b.idleAt the one at the
	// last idle release).
	seen := b.calls.Load()
	// settle fires poolDrain after a reclaim (nil: none pending).
	var settle <-chan time.Time
	for {
		select {
		case <-b.stop:
			return
		case <-settle:
			settle = nil
			// This is the idle release of the calls so far, the
			// reclaim's own compaction among them: the next check
			// need not do it again (it did, a minute after every
			// reclaim: a full collection and the binary's pages
			// dropped once more, 17-22 ms of CPU on this VM).
			b.ReleaseIdle()
			continue
		case <-check.C:
			n := b.calls.Load()
			idle := n == seen && n != b.idleAt.Load()
			if idle && b.reclaimIfDue() {
				// Its compaction and collector passes count as calls.
				n = b.calls.Load()
				settle = time.After(poolDrain)
			}
			if idle && b.release() {
				// No call since the last check, a whole mappedCheck ago,
				// and none running: the store is idle. Deleted values'
				// space was reclaimed if it was due, and everything was
				// handed back, once per stretch of idleness.
				b.releasedAt(n)
				if b.onIdle != nil {
					b.onIdle()
				}
			} else {
				b.trimMapped(mappedBudget)
			}
			seen = n
			continue
		case <-b.writes:
		}
		quiet := time.NewTimer(compactQuiet)
		poll := time.NewTicker(compactPoll)
		for awake := true; awake; {
			select {
			case <-b.stop:
				quiet.Stop()
				poll.Stop()
				return
			case <-b.writes:
				quiet.Reset(compactQuiet)
			case <-poll.C:
				if compacting != nil {
					select {
					case <-compacting:
						compacting = nil
					default:
					}
				}
				if compacting == nil {
					compacting = make(chan struct{})
					go func(done chan struct{}) {
						defer close(done)
						b.compact()
					}(compacting)
				}
				b.trimMapped(mappedBudget)
			case <-quiet.C:
				awake = false
			}
		}
		poll.Stop()
		wait()
		b.compact()
		b.sync()
		b.handBack()
		if b.onQuiet != nil {
			b.onQuiet()
		}
	}
}

// compact flattens the tree when level 0 holds compactAt tables or more:
// Badger's Flatten is its only public way to compact, and it moves every
// level into one (the level-0 tables into the base level, then that level
// into the next). It does not compact a store that writes nothing (disk
// full, or opened read-only), and holds the read lock so that Close and a
// reopen wait for it.
func (b *Badger) compact() {
	if err := b.begin(context.Background()); err != nil {
		return
	}
	defer b.mu.RUnlock()
	b.flattenIfDue()
}

// lockForClose takes b.mu for writing once no call is in flight. A write
// in flight can be waiting inside Badger for level 0 to drain (its
// NumLevelZeroTablesStall), which only a compaction does, and compactLoop
// has ended by then: so Close compacts while it waits. Calls begun since
// Close began fail (closing), or a steady stream of them could hold the
// lock off for ever (TryLock does not keep new readers out as Lock does).
func (b *Badger) lockForClose() {
	_ = b.lockAlone(context.Background())
}

// lockAlone takes b.mu for writing once no call is in flight, compacting
// while it waits, as lockForClose does and for the same reason: a plain
// Lock would keep out the compaction that a write stalled inside Badger
// waits for. It gives up when ctx ends.
func (b *Badger) lockAlone(ctx context.Context) error {
	for !b.mu.TryLock() {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.mu.RLock()
		if !b.closed {
			b.flattenIfDue()
		}
		b.mu.RUnlock()
		time.Sleep(time.Millisecond)
	}
	return nil
}

// flattenIfDue is compact's work, for a caller holding the read lock.
func (b *Badger) flattenIfDue() {
	// measure, not roomToWrite: that would wake this loop again.
	if b.readOnly.Load() || !b.measure().Writable() {
		return
	}
	levels := b.db.Levels()
	if len(levels) == 0 || levels[0].NumTables < compactAt {
		return
	}
	if err := b.db.Flatten(1); err != nil {
		b.logger.Warn("compaction", "error", err)
	}
}

// sync writes the value log and memtable log pages back to disk: a page
// under write-back cannot be paged out, and a clean one leaves memory
// altogether, so trimMapped after sync hands back nearly everything.
func (b *Badger) sync() {
	if err := b.begin(context.Background()); err != nil {
		return
	}
	defer b.mu.RUnlock()
	if b.readOnly.Load() {
		return
	}
	if err := b.db.Sync(); err != nil {
		b.logger.Warn("sync", "error", err)
	}
}

// release hands every mapped page of the store back to the OS when no
// store call is in flight, and reports whether it began. It keeps the
// pages of the tables and value logs in the page cache (resident.Releaser,
// stableMappings), so the next reads after a quiet moment fault them back
// from memory, not from the disk; the rest (memtable logs, tables not in
// the tree yet) are paged out. That is safe only while no call runs, so
// it holds off every call while it works: in steps of releaseStep (at a
// million medallions, after 5,000 queries, dropping their pages took
// 15–47 ms), letting the calls that came meanwhile run in between.
func (b *Badger) release() bool {
	r := resident.NewReleaser(b.mappedDir)
	for step, busy := 0, 0; ; {
		if !b.mu.TryLock() {
			if step == 0 || busy == releaseWaits {
				return step > 0 // what is left stays resident until the next release
			}
			busy++
			time.Sleep(time.Millisecond)
			continue
		}
		done := b.closed || r.Step(b.stableMappings(), releaseStep)
		b.mu.Unlock()
		if done {
			return true
		}
		step++
		time.Sleep(time.Millisecond) // the calls held off go first
	}
}

// releaseStep bounds how long release holds off the store's calls at a
// time; releaseWaits how many milliseconds of calls in flight it waits out
// between its steps, in all, before it leaves the rest for the next
// release.
const (
	releaseStep  = 2 * time.Millisecond
	releaseWaits = 1000
)

// stableMappings names the store's files whose maps nothing unmaps or
// moves while release holds b.mu (a range freed meanwhile could hold Go
// heap by the time DONTNEED reaches it, which would zero it):
//
//   - Value logs: Badger deletes one after the value-log collector, or
//     when the last iterator of a read closes if the collector ran while
//     it was open; it moves the one it writes when it grows, and when it
//     is full cuts its map to its end and maps a new one. The deletions
//     happen in store calls, which hold b.mu, as every iterator is opened
//     and closed within one (none, nor a transaction or an Item, outlives
//     the call). The growing and cutting happen on Badger's write
//     goroutine, but only for a commit a store call waits for (Txn.Commit;
//     the store never commits asynchronously: no CommitWith, WriteBatch or
//     Stream).
//   - Tables in the tree (db.Tables): the tree holds a reference to each,
//     which only a compaction or a DropPrefix (store calls) or closing
//     the database drops; a goroutine of Badger's that outlives a call
//     (the memtable flush, what a failed compaction left running) drops
//     only references of its own. This holds because Badger runs no
//     compactor of its own (NumCompactors 0, badgerOptions): one would
//     drop the tree's references at any time. A table Badger's flush is
//     still adding to level 0, on a goroutine of its own, is not in the
//     tree: the flush unmaps it again if recording it fails. Nor are the
//     memtable logs, which the flush unmaps.
//
// A file removed while still mapped shows in /proc/self/maps as
// "… (deleted)" and matches neither.
func (b *Badger) stableMappings() func(path []byte) bool {
	tables := make(map[string]bool)
	for _, t := range b.db.Tables() {
		tables[table.IDToFilename(t.ID)] = true
	}
	return func(path []byte) bool {
		name := path[bytes.LastIndexByte(path, '/')+1:]
		return bytes.HasSuffix(name, []byte(".vlog")) || tables[string(name)]
	}
}

// handBack hands the store's mapped pages back: all of them, kept in the
// page cache where it can (release), or paged out while a call runs. It
// reports whether release did it.
func (b *Badger) handBack() bool {
	if b.release() {
		return true
	}
	b.trimMapped(0)
	return false
}

// trimMapped hands the store's mapped pages back to the OS
// (resident.PageOut) when the process's file-backed resident memory is
// above budget bytes (0: always). Badger reads and writes its value logs,
// tables and memtable logs through memory maps, and every page it touched
// stayed in the daemon's resident set: a backfill of 1.6 GB of
// transcripts left 430 MB of them (issue 12). On systems other than Linux
// it does nothing.
func (b *Badger) trimMapped(budget int64) {
	if budget > 0 && resident.FileBacked() <= budget {
		return
	}
	resident.PageOut(b.mappedDir)
}

// PageOut hands the store's mapped pages back now, for a caller that has
// just read some of it (an automatic export that found nothing to write
// read keys) and would otherwise leave them resident until the store's
// next idle check, up to a minute.
func (b *Badger) PageOut() { b.handBack() }

// ReleaseIdle does what the store's idle check does once no call has come
// for a while: it hands every mapped page back and calls OnIdle (even when
// a call in flight kept some pages: the caller is done with its heap). It
// is for a caller whose work is most often the only work of an idle daemon
// (the daily automatic export): that check, finding no call since, then
// does not do it all again, as it did up to a minute later (a full
// collection, the binary's pages dropped: 14-40 ms of CPU on this VM).
func (b *Badger) ReleaseIdle() {
	n := b.calls.Load() // a call that comes meanwhile gets its own release
	if b.handBack() {
		b.releasedAt(n)
	}
	if b.onIdle != nil {
		b.onIdle()
	}
}

// releasedAt records n, the call count an idle release covered, unless a
// later one has recorded a higher count meanwhile (ReleaseIdle runs on
// its caller's goroutine, the idle check on the store's).
func (b *Badger) releasedAt(n uint64) {
	for {
		old := b.idleAt.Load()
		if old >= n || b.idleAt.CompareAndSwap(old, n) {
			return
		}
	}
}

// LastWrite is when the store was last written to since it opened (the
// zero time if never): the daemon puts its automatic export off while
// writes go on.
func (b *Badger) LastWrite() time.Time {
	if n := b.lastWrite.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}
