package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
)

// DefaultVerifyInterval is how often a running store reads itself back
// when Options.VerifyInterval is zero.
const DefaultVerifyInterval = 24 * time.Hour

// verifyAtOpenMax is the size (tables and value logs) up to which Open
// reads the store back before it returns: about a quarter of a second of
// the start on 2 shared cores (a million medallions, 1.2 GB, took 14 s).
var verifyAtOpenMax int64 = 24 << 20 // a variable so a test can take the background path

// verifyDelay is when a store too big to read back at Open is read back:
// after the start's own work (catching up on transcripts), and not in a
// daemon stopped right after it started, whose Close would wait for the
// table checksums (one uninterruptible pass, about 2 s at 1M medallions).
var verifyDelay = 10 * time.Second

// DefaultGCInterval is how often the value log is garbage-collected when
// Options.GCInterval is zero.
const DefaultGCInterval = 10 * time.Minute

// ErrLocked: the store directory is already open, by this process or
// another one (most likely a running medalliond).
var ErrLocked = errors.New("store directory is in use by another open store (is medalliond already running?)")

// lockFileName is our own lock beside Badger's (taken where flock exists,
// see lockDir): Badger reports its lock failure only as formatted text,
// and we want an error callers can test with errors.Is(err, ErrLocked).
// Salvage and the store's file checks skip it on every platform.
const lockFileName = "medallion.lock"

// errClosed is returned by calls made after Close.
var errClosed = errors.New("store is closed")

// Options tunes Open. Zero values give sane defaults.
type Options struct {
	// Logger receives the store's and Badger's warnings and errors;
	// nil discards them.
	Logger hclog.Logger
	// Now is the clock for created_at and updated_at; nil means time.Now.
	Now func() time.Time
	// GCInterval is how often the value log is garbage-collected;
	// zero means DefaultGCInterval, negative disables the collector.
	GCInterval time.Duration
	// Reserve is the free space under dir below which writes are refused
	// with ErrDiskFull (see space.go); zero means DefaultReserve, negative
	// turns the guard off.
	Reserve int64
	// SpaceInterval is how often the free space is measured between
	// writes; zero means DefaultSpaceInterval, negative disables it (and
	// with it the reopening of a read-only store).
	SpaceInterval time.Duration
	// VerifyInterval is how often every table block and live value is
	// read back and checked (as at Open); zero means DefaultVerifyInterval,
	// negative disables the pass. Damage found is logged and kept for
	// Damage.
	VerifyInterval time.Duration
	// FreeSpace measures the free bytes under dir; nil means FreeSpace.
	// Tests fake a full disk with it.
	FreeSpace func(dir string) (int64, error)
	// OnSpace, when set, is called with each measurement that changes
	// Space.Full or Space.ReadOnly, the first one at Open included. It
	// runs on the goroutine that measured, possibly inside a store call,
	// so it must return quickly and must not call the store.
	OnSpace func(Space)
	// OnQuiet, when set, is called each time writing stops (no write for
	// a couple of seconds, see compact.go), on the store's own goroutine,
	// after the store has compacted and handed its mapped pages back: the
	// daemon returns its freed heap to the OS then.
	OnQuiet func()
	// OnIdle, when set, is called once each time the store has had no
	// call at all for a whole idle check (30 to 60 s; a long call such as
	// an export counts until it returns), on the store's own goroutine,
	// after it has handed all its mapped pages back: the daemon returns
	// its freed heap and the pages of its own code then. Calls made by the
	// store itself (compaction, the periodic passes) count as calls.
	// ReleaseIdle calls it too, on its caller's goroutine, and then even
	// when a call in flight kept the pages from being handed back whole;
	// it may run while the store's own call runs.
	OnIdle func()
}

// Badger is the Store kept in a Badger database (key layout in keys.go).
type Badger struct {
	// mappedDir is dir with its symlinks resolved, as /proc/self/maps
	// names the files the store maps.
	mappedDir string
	// reclaimedLogs is the value logs' smallest size since the last
	// reclaim (0 before the first): compactLoop's alone (reclaim.go).
	reclaimedLogs int64
	db            *badger.DB // replaced only under mu (write), see reopenWritable
	dir           string
	lock          *os.File
	logger        hclog.Logger
	now           func() time.Time

	// The free-space guard (space.go).
	reserve   int64
	freeSpace func(string) (int64, error)
	onSpace   func(Space)
	onQuiet   func()
	onIdle    func()
	readOnly  atomic.Bool // set while db writes nothing (disk full at open)
	spaceMu   sync.Mutex  // orders measurements and their OnSpace calls
	space     Space       // the last measurement

	// counters hold the number of medallions (Count never scans), the
	// index list sizes that guide LatestForScope to the shortest list,
	// and the sums EpisodeTotals reports; they are stored beside the data
	// they count and loaded at Open (counters.go).
	counters counters
	// markers spares Ingest the lookup of dedupe markers never stored
	// (markers.go).
	markers markerFilter
	// indexer indexes every version written (index.go); nil: none.
	indexer atomic.Pointer[indexerBox]
	// watchers hear of every version written once its transaction has
	// ended (index.go, WatchWrites).
	watchers atomic.Pointer[[]func(prev, cur *medallion.Medallion)]

	// mu makes Close wait for calls in flight and turns later calls
	// into errClosed instead of a Badger panic.
	mu     sync.RWMutex
	closed bool
	// closing is set by Close: calls begun from then on fail, so that
	// they cannot hold Close off (lockForClose).
	closing atomic.Bool
	calls   atomic.Uint64 // calls begun, for the idle check (compact.go)
	// idleAt is calls at the last idle release (compact.go): the idle
	// check releases once per stretch of idleness.
	idleAt atomic.Uint64

	stop        chan struct{} // closed by Close: ends the collector, spaceLoop, verifyLoop, the fold, compactLoop and markerLoop
	writes      chan struct{} // wakes compactLoop (compact.go)
	lastWrite   atomic.Int64  // UnixNano of the last write (LastWrite)
	gcDone      chan struct{}
	foldDone    chan struct{}
	compactDone chan struct{}
	spaceDone   chan struct{}
	verifyDone  chan struct{}
	markersDone chan struct{}
	damage      atomic.Pointer[error] // what the last verification pass found
	gcPasses    atomic.Int64          // completed collector passes, for tests
	// pass lets one of the store's passes over all it holds run at a
	// time: a reclaim (reclaim.go), a collector pass, an export. Each
	// faults in a good part of the store's files and keeps buffers of its
	// own, so together they add up. After a backfill the first export
	// (due a minute after the start) and the first reclaim (the first
	// idle check) come at about the same moment, and in two footprint
	// runs of 26 Nov the export read beside the reclaim (whose own peak
	// collectGarbage bounds: trimWhile, tightHeap).
	pass chan struct{}

	closeOnce sync.Once
	closeErr  error
}

var _ Store = (*Badger)(nil)

// Open opens (creating it if needed) the store in dir. Only one Badger may
// have dir open at a time, in any process; a second Open fails with an
// error wrapping ErrLocked. A directory with tables but no MANIFEST is
// refused (ErrNoManifest). On a full disk (less than the reserve free) the
// store opens read-only, reads work and writes fail with ErrDiskFull until
// space is back and the store has reopened itself read-write; when even a
// read-only open is impossible, Open fails with ErrDiskFull.
func Open(dir string, opts Options) (*Badger, error) {
	logger := opts.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	gcInterval := opts.GCInterval
	if gcInterval == 0 {
		gcInterval = DefaultGCInterval
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	if err := checkManifest(dir); err != nil {
		_ = unlockDir(lock)
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	if err := privateModes(dir); err != nil {
		_ = unlockDir(lock)
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	torn := func(file string, at, end int64) {
		logger.Warn("a write cut short by a crash is dropped from the store's log", "dir", dir, "file", file, "offset", at, "bytes", end-at)
	}
	if err := checkLogs(dir, torn); err != nil {
		_ = unlockDir(lock)
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	// The kernel names a mapping by its resolved path: a data dir reached
	// through a symlink would match none of the store's maps.
	mappedDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		mappedDir = dir
	}
	b := &Badger{
		dir:         dir,
		mappedDir:   mappedDir,
		lock:        lock,
		logger:      logger,
		now:         now,
		reserve:     opts.Reserve,
		freeSpace:   opts.FreeSpace,
		onSpace:     opts.OnSpace,
		onQuiet:     opts.OnQuiet,
		onIdle:      opts.OnIdle,
		stop:        make(chan struct{}),
		writes:      make(chan struct{}, 1),
		gcDone:      make(chan struct{}),
		foldDone:    make(chan struct{}),
		compactDone: make(chan struct{}),
		spaceDone:   make(chan struct{}),
		verifyDone:  make(chan struct{}),
		markersDone: make(chan struct{}),
		pass:        make(chan struct{}, 1),
	}
	switch {
	case b.reserve == 0:
		b.reserve = DefaultReserve
	case b.reserve < 0:
		b.reserve = 0 // Free < 0 never holds
	}
	if b.freeSpace == nil {
		b.freeSpace = FreeSpace
	}
	spaceInterval := opts.SpaceInterval
	if spaceInterval == 0 {
		spaceInterval = DefaultSpaceInterval
	}
	// Measured without measure() so that OnSpace first hears of the
	// store as it is opened, not of a writable one a moment before.
	free, err := b.freeSpace(dir)
	if err != nil {
		_ = unlockDir(lock)
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	db, readOnly, err := b.openDB(Space{Free: free, Reserve: b.reserve, Full: free < b.reserve})
	if err != nil {
		_ = unlockDir(lock)
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	b.db = db
	// A store that can be read back within the start's budget is, before
	// Open returns, so a damaged one is refused with the way to repair it.
	// A bigger one is read back at once in the background, like the
	// periodic pass: damage found is logged and shown by status (Damage),
	// and reads of a damaged value fail with an error (values carry
	// checksums) rather than return garbage. Reading back a million
	// medallions took 14 s (issue 12: start ≤ 300 ms).
	size, err := allocatedBytes(dir, func(name string) bool {
		ext := filepath.Ext(name)
		return ext == ".sst" || ext == ".vlog" || ext == ".mem"
	})
	verifyNow := err != nil || size <= verifyAtOpenMax
	if verifyNow {
		if err := b.verify(); err != nil {
			_ = db.Close()
			_ = unlockDir(lock)
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
	} else {
		logger.Info("the store is read back in the background", "dir", dir, "mib", size>>20)
	}
	b.readOnly.Store(readOnly)
	if readOnly {
		logger.Warn("disk full: store opened read-only; it reopens read-write once space is back",
			"dir", dir, "free_mib", free>>20, "reserve_mib", b.reserve>>20)
	}
	b.measure()
	foldDue, err := b.counters.load(db)
	if err == nil && foldDue && !readOnly {
		err = b.counters.fold(db, true)
	}
	if err == nil {
		err = b.startMarkers()
	}
	if err != nil {
		_ = db.Close()
		_ = unlockDir(lock)
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	go b.compactLoop()
	// Opening flushed the memtables a crash left behind into level 0, and
	// the verification above read every table and value through the maps.
	b.wrote()
	b.every(gcInterval, b.gcDone, b.collectAlone, 0)
	go b.foldLoop()
	b.every(spaceInterval, b.spaceDone, b.checkSpace, 0)
	verifyInterval := opts.VerifyInterval
	if verifyInterval == 0 {
		verifyInterval = DefaultVerifyInterval
	}
	var first time.Duration
	if !verifyNow {
		first = verifyDelay
	}
	// The pass reads every table and value through Badger's maps: hand
	// those pages back after it, as after writing (compact.go).
	b.every(verifyInterval, b.verifyDone, func() { b.checkDamage(); b.handBack() }, first)
	return b, nil
}

// levelZeroTables is Badger's NumLevelZeroTables: level 0 is compacted
// once it holds that many tables (compact.go).
const levelZeroTables = 2

// mappedBudget is how much file-backed memory (the binary's own pages
// included, about 15 MiB) may stay resident while the store is written
// to before its mapped pages are handed back (mapped_linux.go). With the Go
// heap under the daemon's memory limit it bounds the daemon's peak.
const mappedBudget = 24 << 20

// valueLogFileSize is the size at which Badger starts a new value-log
// file. A variable so that a test can make value logs turn over (and the
// collector rewrite and delete them) with a few MiB written.
var valueLogFileSize int64 = 64 << 20

// badgerOptions is a small-memory profile: Badger's defaults (64 MB
// memtables × 5, a 256 MB block cache) are sized for a database server,
// not a background daemon holding a few thousand medallions.
func badgerOptions(dir string, logger hclog.Logger) badger.Options {
	return badger.DefaultOptions(dir).
		WithLogger(badgerLogger{logger}).
		WithMemTableSize(8 << 20).
		WithNumMemtables(2).
		WithNumLevelZeroTables(levelZeroTables).
		WithNumLevelZeroTablesStall(4).
		// No block cache: the tables are not compressed (see
		// WithCompression below), so Badger reads their blocks straight
		// from the table's map, and a cache would only copy them to the
		// heap. The index cache holds only the indexes of encrypted tables
		// (table.fetchIndex); ours are read from the table's map too.
		WithBlockCacheSize(0).
		WithIndexCacheSize(0).
		WithValueLogFileSize(valueLogFileSize).
		// No compactor goroutines: each would wake the daemon every 50 ms
		// for ever; the store compacts while it is written to instead
		// (compact.go). release counts on it too: only a store call may
		// drop a table from the tree (stableMappings).
		WithNumCompactors(0).
		// Values over 512 bytes (nearly every medallion) go to the value
		// log, leaving keys, index entries and small values in the LSM
		// tree: 100k medallions make 24 MB of tables, which the block
		// cache covers far better, compactions stop rewriting medallions
		// (bulk loads took half the time), and no commit comes near the
		// 1.2 MB batch limit that 8 MB memtables impose. The value log is
		// not compressed: 100k medallions of 900 bytes (binary encoding)
		// take 117 MB on disk in all. The threshold was 1 KB while
		// medallions were stored as 1.5 KB of JSON; at 1 KB the binary
		// ones stayed in the tree (51 MB of tables) and scope queries over
		// 100k medallions took 30-100% longer. Index entries stay far
		// below 512 bytes unless a scope is very large (see maxScopeCopy).
		WithValueThreshold(512).
		// Tables are not compressed. With Snappy every block a read
		// touched was decompressed into a new 4 KiB buffer and offered to
		// the block cache, which a million medallions' 226 MB of tables
		// could not fit: at 1M, a scope query's ten point reads spent a
		// third of its CPU there and allocated 47-65 KB. Uncompressed, the
		// tables take about twice the disk (442 MB against 226 MB at 1M
		// medallions, the whole store 1.41 against 1.19 GB), and the query
		// 30-40 % less CPU and 29 KB. Tables written compressed by an
		// older build stay readable (each table records its compression)
		// and are rewritten plain at the next compaction.
		WithCompression(options.None).
		// SyncWrites stays off (Badger's default): a commit reaches the
		// kernel before it returns, so a crash or kill -9 of the daemon
		// loses nothing; only a power cut can drop the last writes, and
		// an fsync per update would cap writes at the disk's flush rate.
		WithSyncWrites(false).
		// A damaged value is an error rather than garbage handed to a
		// decoder (issue 11: "unexpected end of JSON input" at start).
		WithVerifyValueChecksum(true)
}

// foldAtClose is false only in a test that closes a store as a kill -9
// would leave it, counters unfolded.
var foldAtClose = true

// foldLoop folds the counter changes when foldEvery of them await a fold,
// and every foldInterval when any do; an idle store does nothing.
func (b *Badger) foldLoop() {
	defer close(b.foldDone)
	t := time.NewTicker(foldInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.counters.due:
		}
		b.foldCounters()
	}
}

// foldCounters folds the counter changes written since the last fold.
func (b *Badger) foldCounters() {
	if b.counters.seq.Load() == b.counters.folded.Load() {
		return
	}
	if err := b.begin(context.Background()); err != nil {
		return
	}
	defer b.mu.RUnlock()
	if b.roomToWrite() != nil {
		return
	}
	if err := b.counters.fold(b.db, false); err != nil {
		b.logger.Warn("fold the store's counters", "error", err)
	}
}

// every runs fn every interval until Close, in a goroutine that closes
// done when it ends; the first run comes after first rather than interval
// when first > 0. With interval <= 0 it runs nothing and closes done at
// once. The value-log collector, the free-space check and the periodic
// verification are such loops.
func (b *Badger) every(interval time.Duration, done chan struct{}, fn func(), first time.Duration) {
	everyUntil(b.stop, interval, done, fn, first)
}

// everyUntil is every until stop is closed rather than until Close.
func everyUntil(stop <-chan struct{}, interval time.Duration, done chan struct{}, fn func(), first time.Duration) {
	if interval <= 0 {
		close(done)
		return
	}
	go func() {
		defer close(done)
		if first > 0 {
			select {
			case <-stop:
				return
			case <-time.After(first):
				fn()
			}
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

// tryPass takes the store's turn for a pass over all it holds (see
// Badger.pass) when no other pass has it; done gives it back.
func (b *Badger) tryPass() (done func(), ok bool) {
	select {
	case b.pass <- struct{}{}:
		return b.endPass, true
	default:
		return nil, false
	}
}

// waitPass takes the store's turn for a pass, waiting for the pass that
// has it, or fails when ctx ends first.
func (b *Badger) waitPass(ctx context.Context) (done func(), err error) {
	select {
	case b.pass <- struct{}{}:
		return b.endPass, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *Badger) endPass() { <-b.pass }

// collectAlone is the collector's periodic pass: skipped when another
// pass runs (a reclaim runs one of its own).
func (b *Badger) collectAlone() {
	if done, ok := b.tryPass(); ok {
		defer done()
		b.collectGarbage()
	}
}

// trimWhile trims the store's mapped pages (trimMapped) every trimPeriod
// until the function it returns is called. A collector pass reads each
// value log it rewrites whole through its map, and it runs from
// compactLoop (a reclaim) or a loop of its own, neither of which trims
// meanwhile: the first reclaim after the 1 GiB generated backfill, which
// rewrote seven 64 MiB value logs, took the daemon from 53 to 166-194 MB
// (FootprintBackfill, 26 Nov), past issue 12's 150 MB. With it,
// BenchmarkReclaim's peak of file-backed memory is 45-49 MB against
// 72-73 MB, in the same time.
func (b *Badger) trimWhile() (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	everyUntil(done, trimPeriod, ended, func() { b.trimMapped(mappedBudget) }, 0)
	return func() {
		close(done)
		<-ended
		b.trimMapped(mappedBudget)
	}
}

// trimPeriod is how often trimWhile trims: a collector pass reads a
// value log from the page cache at about a gigabyte a second, so at
// 100 ms the peak stayed where it was; at 20 ms it costs a /proc read
// and, past the budget, a madvise per tick.
const trimPeriod = 20 * time.Millisecond

// collectGarbage rewrites value-log files until Badger finds none worth
// rewriting (ErrNoRewrite), as its documentation recommends. Rewriting
// writes, so it waits while the disk is full, and it holds b.mu so that a
// reopen never swaps the database under it.
func (b *Badger) collectGarbage() {
	defer b.gcPasses.Add(1)
	defer b.trimWhile()()
	defer tightHeap()()
	for {
		select {
		case <-b.stop:
			return
		default:
		}
		if err := b.begin(context.Background()); err != nil {
			return
		}
		if err := b.roomToWrite(); err != nil {
			b.mu.RUnlock()
			return
		}
		err := b.db.RunValueLogGC(0.5)
		b.mu.RUnlock()
		if err == nil {
			continue
		}
		// ErrRejected means another collection is running or the
		// database is closing: nothing to report either way.
		if !errors.Is(err, badger.ErrNoRewrite) && !errors.Is(err, badger.ErrRejected) {
			b.logger.Warn("value log garbage collection", "error", err)
		}
		return
	}
}

// Close stops the collector and closes the database. It waits for calls in
// flight and is idempotent; later calls on the store fail.
func (b *Badger) Close() error {
	b.closeOnce.Do(func() {
		// From here on calls fail: the ones in flight end, and no new one
		// holds off the compaction or the lock Close waits for.
		b.closing.Store(true)
		close(b.stop)
		<-b.compactDone
		<-b.gcDone
		<-b.foldDone
		<-b.spaceDone
		<-b.verifyDone
		<-b.markersDone
		b.lockForClose()
		defer b.mu.Unlock()
		var err error
		if !b.closed { // a failed reopen leaves nothing open
			// No call is in flight: the counters in memory are the
			// store's, and the next Open reads c/base alone.
			// Not below the disk's reserve: the changes stay stored
			// and the next Open reads them.
			if foldAtClose && b.roomToWrite() == nil {
				if ferr := b.counters.fold(b.db, true); ferr != nil {
					b.logger.Warn("fold the store's counters", "error", ferr)
				}
			}
			err = b.db.Close()
		}
		b.closed = true
		if uerr := unlockDir(b.lock); err == nil {
			err = uerr
		}
		if err != nil {
			b.closeErr = fmt.Errorf("close store: %w", err)
		}
	})
	return b.closeErr
}

// DiskUsage is the disk space the store's files take now, as du counts
// it. Badger's own figure (db.Size) is refreshed once a minute and says
// 0 B for a store that was just created, with medallions in it.
func (b *Badger) DiskUsage() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return 0
	}
	n, err := allocatedBytes(b.dir, func(string) bool { return true })
	if err != nil {
		b.logger.Warn("measure store size", "error", err)
	}
	return n
}

// begin guards a call: it fails on a cancelled context or a closed store,
// and otherwise holds the read lock that Close waits for; release it with
// b.mu.RUnlock.
func (b *Badger) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.RLock()
	if b.shut() {
		b.mu.RUnlock()
		return errClosed
	}
	b.calls.Add(1)
	return nil
}

// shut reports whether no call may begin: the store is closed, or Close
// has begun. The caller holds b.mu, either side.
func (b *Badger) shut() bool { return b.closed || b.closing.Load() }

// Count returns how many medallions are stored, without scanning.
func (b *Badger) Count(ctx context.Context) (int, error) {
	if err := b.begin(ctx); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	defer b.mu.RUnlock()
	return int(b.counters.medallions.Load()), nil
}

// Create stores m as version 1 of a new medallion (see Store.Create).
func (b *Badger) Create(ctx context.Context, m *medallion.Medallion) (*medallion.Medallion, error) {
	if m == nil {
		return nil, errors.New("create: nil medallion")
	}
	id := m.Meta.MedallionID
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("create %s: %w", id, err)
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return nil, fmt.Errorf("create %s: %w", id, err)
	}

	c := m.Clone()
	c.Normalize()
	if c.Meta.CreatedAt == "" {
		c.Meta.CreatedAt = medallion.FormatTime(b.now())
	}
	if c.Meta.UpdatedAt == "" {
		c.Meta.UpdatedAt = c.Meta.CreatedAt
	}
	if c.Meta.Status == "" {
		c.Meta.Status = medallion.StatusActive
	}
	c.Meta.Version = 1
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var delta *counts
	write := func(txn *badger.Txn, indexVersion func(prev, cur *medallion.Medallion) error) error {
		switch _, err := txn.Get(latestKey(id)); {
		case err == nil:
			return ErrExists
		case !errors.Is(err, badger.ErrKeyNotFound):
			return err
		}
		var err error
		if delta, err = b.writeVersion(txn, nil, c); err != nil {
			return err
		}
		return indexVersion(nil, c)
	}
	var err error
	defer b.counters.writing()()
	// Two Creates of one id conflict on the m/ key they both read: the
	// loser runs again and then sees the winner's medallion (ErrExists).
	// Badger reports a conflict only when another commit touched a key
	// this one read, so a few attempts always settle.
	for attempt := 1; ; attempt++ {
		err = b.indexWrite(write)
		if !errors.Is(err, badger.ErrConflict) || attempt == 3 {
			break
		}
	}
	switch {
	case err == nil:
		b.counters.committed(delta)
		return c, nil
	case errors.Is(err, badger.ErrConflict):
		return nil, fmt.Errorf("create %s: %w", id, ErrConflict)
	default:
		return nil, fmt.Errorf("create %s: %w", id, err)
	}
}

// Update stores m as the next version of an existing medallion (see
// Store.Update).
func (b *Badger) Update(ctx context.Context, m *medallion.Medallion) (*medallion.Medallion, error) {
	if m == nil {
		return nil, errors.New("update: nil medallion")
	}
	id := m.Meta.MedallionID
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("update %s: %w", id, err)
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return nil, fmt.Errorf("update %s: %w", id, err)
	}

	c := m.Clone()
	c.Normalize()
	now := b.now()
	// Validate before reading, with the timestamps standing in for the
	// ones the store sets, so a bad body is reported as such even when
	// the id is unknown or the version stale.
	c.Meta.CreatedAt = medallion.FormatTime(now)
	c.Meta.UpdatedAt = c.Meta.CreatedAt
	if err := c.Validate(); err != nil {
		return nil, err
	}

	var delta *counts
	defer b.counters.writing()()
	err := b.indexWrite(func(txn *badger.Txn, indexVersion func(prev, cur *medallion.Medallion) error) error {
		prev, err := getLatestStored(txn, id)
		if err != nil {
			return err
		}
		if prev == nil {
			return ErrNotFound
		}
		old := prev.m
		if c.Meta.Version != old.Meta.Version {
			return fmt.Errorf("based on version %d but version %d is stored: %w", c.Meta.Version, old.Meta.Version, ErrConflict)
		}
		c.Meta.CreatedAt = old.Meta.CreatedAt
		if c.Meta.UpdatedAt, err = nextUpdatedAt(now, old.Meta.UpdatedAt); err != nil {
			return err
		}
		c.Meta.Version = old.Meta.Version + 1
		if err := c.Validate(); err != nil {
			return err
		}
		if delta, err = b.writeVersion(txn, prev, c); err != nil {
			return err
		}
		return indexVersion(old, c)
	})
	var verr *medallion.ValidationError
	switch {
	case err == nil:
		b.counters.committed(delta)
		return c, nil
	case errors.As(err, &verr):
		return nil, err
	case errors.Is(err, badger.ErrConflict):
		// Another Update of this id committed between our read and our
		// commit: ours was based on a version that is no longer latest.
		return nil, fmt.Errorf("update %s: %w", id, ErrConflict)
	default:
		return nil, fmt.Errorf("update %s: %w", id, err)
	}
}

// nextUpdatedAt is now at the store's precision, or one microsecond after
// prev when the clock has not moved past it (fast updates, a clock step
// back, or a prev set in the future), so versions are strictly ordered.
func nextUpdatedAt(now time.Time, prev string) (string, error) {
	p, err := medallion.ParseTime(prev)
	if err != nil {
		return "", fmt.Errorf("stored updated_at: %w", err)
	}
	t := now.UTC().Truncate(time.Microsecond)
	if !t.After(p) {
		t = p.UTC().Truncate(time.Microsecond).Add(time.Microsecond)
	}
	return medallion.FormatTime(t), nil
}

// stored is the latest version of a medallion as read in a transaction:
// decoded, and its record as stored.
type stored struct {
	m   *medallion.Medallion
	raw []byte
}

// writeVersion writes c, which must be valid, as the new latest version of
// its medallion: version 1 when prev is nil, else the version after prev,
// the latest version read in the same transaction. It is the one place a
// version is written (Import aside, which writes many at once): the
// version record, whole; the m/ key naming it; the index entries, moved
// from prev's; prev's record, rewritten as a delta from c when that is
// worth it (delta.go); and the change to the counters, which it returns
// for counters.committed once the transaction has committed.
func (b *Badger) writeVersion(txn *badger.Txn, prev *stored, c *medallion.Medallion) (*counts, error) {
	id := c.Meta.MedallionID
	value, ends := c.MarshalBinaryUnits()
	index, entry, err := indexEntries(c)
	if err != nil {
		return nil, err
	}
	var delta counts
	delta.addMedallion(c, 1, prev == nil)
	if prev != nil {
		delta.addMedallion(prev.m, -1, false)
		oldIndex, _, err := indexEntries(prev.m)
		if err != nil {
			return nil, err
		}
		// Deletes go first: an entry whose key did not change is then
		// written again rather than lost.
		for _, k := range oldIndex {
			if err := txn.Delete(k); err != nil {
				return nil, err
			}
		}
		if rec := shrink(prev.m, prev.raw, value, ends); len(rec) < len(prev.raw) {
			if err := txn.Set(versionKey(id, prev.m.Meta.Version), rec); err != nil {
				return nil, err
			}
		}
	}
	if err := txn.Set(latestKey(id), versionValue(c.Meta.Version)); err != nil {
		return nil, err
	}
	if err := txn.Set(versionKey(id, c.Meta.Version), value); err != nil {
		return nil, err
	}
	for _, k := range index {
		if err := txn.Set(k, entry); err != nil {
			return nil, err
		}
	}
	return &delta, b.counters.put(txn, &delta)
}

// getLatest reads the latest version of id, nil when absent.
func getLatest(txn *badger.Txn, id string) (*medallion.Medallion, error) {
	s, err := getLatestStored(txn, id)
	if s == nil {
		return nil, err
	}
	return s.m, nil
}

// getLatestStored reads the latest version of id and its record, nil when
// absent. The latest version is always stored whole.
func getLatestStored(txn *badger.Txn, id string) (*stored, error) {
	item, err := txn.Get(latestKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var version int
	if err := item.Value(func(v []byte) (err error) { version, err = parseVersion(v); return err }); err != nil {
		return nil, fmt.Errorf("latest version of %s: %w", id, err)
	}
	key := versionKey(id, version)
	item, err = txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		// m/ and v/ keys are written in one transaction, so this is
		// corruption, not a race.
		return nil, fmt.Errorf("latest version %d of %s is not stored", version, id)
	}
	if err != nil {
		return nil, err
	}
	s := &stored{m: new(medallion.Medallion)}
	if s.raw, err = item.ValueCopy(nil); err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	if err := decodeMedallion(s.raw, s.m); err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return s, nil
}

// readMedallion decodes the medallion stored at key into m, and reports
// whether there was one.
func readMedallion(txn *badger.Txn, key []byte, m *medallion.Medallion, decode decoder) (bool, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := item.Value(func(v []byte) error { return decode(v, m) }); err != nil {
		return false, fmt.Errorf("decode %s: %w", key, err)
	}
	return true, nil
}

// decodeMedallion decodes a stored version: the binary encoding, or JSON
// for versions written before the store switched to it (versions are never
// rewritten, so both stay readable). JSON cannot begin with the binary
// format byte, and the binary encoding never begins with '{' or
// whitespace.
func decodeMedallion(v []byte, m *medallion.Medallion) error {
	if len(v) > 0 && isJSONStart(v[0]) {
		return json.Unmarshal(v, m)
	}
	return m.UnmarshalBinary(v)
}

// decoder decodes a stored version: decodeMedallion, or
// decodeWithoutEvidence.
type decoder func(v []byte, m *medallion.Medallion) error

// decodeWithoutEvidence is decodeMedallion for readers that do not use
// the evidence (a load): it leaves m.Evidence nil, and costs a fraction of
// a whole decode for a medallion with much evidence
// (medallion.UnmarshalBinaryWithoutEvidence).
func decodeWithoutEvidence(v []byte, m *medallion.Medallion) error {
	if len(v) > 0 && isJSONStart(v[0]) {
		err := json.Unmarshal(v, m)
		m.Evidence = nil
		return err
	}
	return m.UnmarshalBinaryWithoutEvidence(v)
}

func isJSONStart(c byte) bool {
	return c == '{' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// Get returns the latest version of id, or (nil, nil) when absent.
func (b *Badger) Get(ctx context.Context, id string) (*medallion.Medallion, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("get %s: %w", id, err)
	}
	defer b.mu.RUnlock()
	var m *medallion.Medallion
	err := b.db.View(func(txn *badger.Txn) error {
		var err error
		m, err = getLatest(txn, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", id, err)
	}
	return m, nil
}

// GetVersion returns one version of id, or (nil, nil) when absent.
func (b *Badger) GetVersion(ctx context.Context, id string, version int) (*medallion.Medallion, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("get %s version %d: %w", id, version, err)
	}
	defer b.mu.RUnlock()
	if version < 1 {
		return nil, nil
	}
	var m *medallion.Medallion
	err := b.db.View(func(txn *badger.Txn) error {
		whole, err := versionBytes(txn, id, version)
		if err != nil || whole == nil {
			return err
		}
		m = new(medallion.Medallion)
		if err := decodeMedallion(whole, m); err != nil {
			return fmt.Errorf("decode %s: %w", versionKey(id, version), err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("get %s version %d: %w", id, version, err)
	}
	return m, nil
}

// History lists every version of id, oldest first (the version keys sort
// by big-endian version number). It reads only each record's meta, which
// every kind of record begins with (a delta's first literal), and keeps
// copies of its strings: 10,000 versions cost their meta, not 10,000
// decoded medallions kept alive by one string each.
func (b *Badger) History(ctx context.Context, id string) ([]medallion.VersionInfo, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("history %s: %w", id, err)
	}
	defer b.mu.RUnlock()
	var out []medallion.VersionInfo
	err := b.db.View(func(txn *badger.Txn) error {
		prefix := versionPrefix(id)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 16})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			var meta medallion.Meta
			if err := it.Item().Value(func(v []byte) (err error) { meta, err = recordMeta(v); return err }); err != nil {
				return fmt.Errorf("decode %s: %w", it.Item().Key(), err)
			}
			out = append(out, medallion.VersionInfo{
				Version:   meta.Version,
				UpdatedAt: meta.UpdatedAt,
				Model:     meta.Model,
				Status:    meta.Status,
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("history %s: %w", id, ErrNotFound)
	}
	return out, nil
}

// badgerLogger adapts hclog to badger.Logger. Badger logs every replay,
// flush and compaction at Info, which is noise for a daemon's journal, so
// only warnings and errors get through.
type badgerLogger struct{ l hclog.Logger }

var _ badger.Logger = badgerLogger{}

func (a badgerLogger) Errorf(format string, args ...any) {
	a.l.Error("badger error", "detail", strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (a badgerLogger) Warningf(format string, args ...any) {
	a.l.Warn("badger warning", "detail", strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (badgerLogger) Infof(string, ...any)  {}
func (badgerLogger) Debugf(string, ...any) {}
