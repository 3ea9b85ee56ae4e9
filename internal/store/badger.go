package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// DefaultGCInterval is how often the value log is garbage-collected when
// Options.GCInterval is zero.
const DefaultGCInterval = 10 * time.Minute

// ErrLocked: the store directory is already open, by this process or
// another one (most likely a running medalliond).
var ErrLocked = errors.New("store directory is in use by another open store (is medalliond already running?)")

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
}

// Badger is the Store kept in a Badger database (key layout in keys.go).
type Badger struct {
	db     *badger.DB // replaced only under mu (write), see reopenWritable
	dir    string
	lock   *os.File
	logger hclog.Logger
	now    func() time.Time

	// The free-space guard (space.go).
	reserve   int64
	freeSpace func(string) (int64, error)
	onSpace   func(Space)
	readOnly  atomic.Bool // set while db writes nothing (disk full at open)
	spaceMu   sync.Mutex  // orders measurements and their OnSpace calls
	space     Space       // the last measurement

	// count mirrors the number of m/ keys: counted once at Open, then
	// bumped after each committed Create, so Count never scans.
	count atomic.Int64
	// sizes guides LatestForScope to the shortest index list.
	sizes listSizes
	// episodes holds the sums EpisodeTotals reports (totals.go).
	episodes episodeTotals
	// indexer indexes every version written (index.go); nil: none.
	indexer atomic.Pointer[indexerBox]

	// mu makes Close wait for calls in flight and turns later calls
	// into errClosed instead of a Badger panic.
	mu     sync.RWMutex
	closed bool

	stop       chan struct{} // closed by Close: ends the collector, spaceLoop and verifyLoop
	gcDone     chan struct{}
	spaceDone  chan struct{}
	verifyDone chan struct{}
	damage     atomic.Pointer[error] // what the last verification pass found
	gcPasses   atomic.Int64          // completed collector passes, for tests

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
	b := &Badger{
		dir:        dir,
		lock:       lock,
		logger:     logger,
		now:        now,
		reserve:    opts.Reserve,
		freeSpace:  opts.FreeSpace,
		onSpace:    opts.OnSpace,
		stop:       make(chan struct{}),
		gcDone:     make(chan struct{}),
		spaceDone:  make(chan struct{}),
		verifyDone: make(chan struct{}),
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
	if err := b.verify(); err != nil {
		_ = db.Close()
		_ = unlockDir(lock)
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	b.readOnly.Store(readOnly)
	if readOnly {
		logger.Warn("disk full: store opened read-only; it reopens read-write once space is back",
			"dir", dir, "free_mib", free>>20, "reserve_mib", b.reserve>>20)
	}
	b.measure()
	n, err := b.countKeys()
	if err != nil {
		_ = db.Close()
		_ = unlockDir(lock)
		return nil, fmt.Errorf("open store %s: count medallions: %w", dir, err)
	}
	b.count.Store(n)
	b.every(gcInterval, b.gcDone, b.collectGarbage)
	b.every(spaceInterval, b.spaceDone, b.checkSpace)
	verifyInterval := opts.VerifyInterval
	if verifyInterval == 0 {
		verifyInterval = DefaultVerifyInterval
	}
	b.every(verifyInterval, b.verifyDone, b.checkDamage)
	return b, nil
}

// badgerOptions is a small-memory profile: Badger's defaults (64 MB
// memtables × 5, a 256 MB block cache) are sized for a database server,
// not a background daemon holding a few thousand medallions.
func badgerOptions(dir string, logger hclog.Logger) badger.Options {
	return badger.DefaultOptions(dir).
		WithLogger(badgerLogger{logger}).
		WithMemTableSize(8 << 20).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithNumLevelZeroTablesStall(4).
		WithBlockCacheSize(16 << 20).
		WithIndexCacheSize(8 << 20).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2).
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
		// Snappy shrinks the tables (keys and index entries) cheaply;
		// turning it off measured no faster.
		WithCompression(options.Snappy).
		// SyncWrites stays off (Badger's default): a commit reaches the
		// kernel before it returns, so a crash or kill -9 of the daemon
		// loses nothing; only a power cut can drop the last writes, and
		// an fsync per update would cap writes at the disk's flush rate.
		WithSyncWrites(false).
		// A damaged value is an error rather than garbage handed to a
		// decoder (issue 11: "unexpected end of JSON input" at start).
		WithVerifyValueChecksum(true)
}

// countKeys counts the m/ keys and the index lists without reading values.
func (b *Badger) countKeys() (int64, error) {
	var n int64
	err := b.db.View(func(txn *badger.Txn) error {
		prefix := []byte(prefixLatest)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			n++
		}
		it.Close()
		b.sizes.load(txn)
		return b.episodes.load(txn)
	})
	return n, err
}

// every runs fn every interval until Close, in a goroutine that closes
// done when it ends; with interval <= 0 it runs nothing and closes done at
// once. The value-log collector, the free-space check and the periodic
// verification are such loops.
func (b *Badger) every(interval time.Duration, done chan struct{}, fn func()) {
	if interval <= 0 {
		close(done)
		return
	}
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

// collectGarbage rewrites value-log files until Badger finds none worth
// rewriting (ErrNoRewrite), as its documentation recommends. Rewriting
// writes, so it waits while the disk is full, and it holds b.mu so that a
// reopen never swaps the database under it.
func (b *Badger) collectGarbage() {
	defer b.gcPasses.Add(1)
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
		close(b.stop)
		<-b.gcDone
		<-b.spaceDone
		<-b.verifyDone
		b.mu.Lock()
		defer b.mu.Unlock()
		var err error
		if !b.closed { // a failed reopen leaves nothing open
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

// DiskUsage is the size in bytes of the LSM tree and value log, as Badger
// last measured them (at Open, then once a minute).
func (b *Badger) DiskUsage() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return 0
	}
	lsm, vlog := b.db.Size()
	return lsm + vlog
}

// begin guards a call: it fails on a cancelled context or a closed store,
// and otherwise holds the read lock that Close waits for; release it with
// b.mu.RUnlock.
func (b *Badger) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return errClosed
	}
	return nil
}

// Count returns how many medallions are stored, without scanning.
func (b *Badger) Count(ctx context.Context) (int, error) {
	if err := b.begin(ctx); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	defer b.mu.RUnlock()
	return int(b.count.Load()), nil
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
	value, err := c.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("create %s: encode: %w", id, err)
	}
	index, entry, err := indexEntries(c)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", id, err)
	}

	write := func(txn *badger.Txn, indexVersion func(prev, cur *medallion.Medallion) error) error {
		switch _, err := txn.Get(latestKey(id)); {
		case err == nil:
			return ErrExists
		case !errors.Is(err, badger.ErrKeyNotFound):
			return err
		}
		if err := setAll(txn, c, value, index, entry); err != nil {
			return err
		}
		return indexVersion(nil, c)
	}
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
		b.count.Add(1)
		b.sizes.add(c, 1)
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

	var old *medallion.Medallion
	err := b.indexWrite(func(txn *badger.Txn, indexVersion func(prev, cur *medallion.Medallion) error) error {
		var err error
		old, err = getLatest(txn, id)
		if err != nil {
			return err
		}
		if old == nil {
			return ErrNotFound
		}
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
		oldIndex, _, err := indexEntries(old)
		if err != nil {
			return err
		}
		// Deletes go first: an entry whose key did not change is then
		// written again rather than lost.
		for _, k := range oldIndex {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		value, err := c.MarshalBinary()
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		index, entry, err := indexEntries(c)
		if err != nil {
			return err
		}
		if err := setAll(txn, c, value, index, entry); err != nil {
			return err
		}
		return indexVersion(old, c)
	})
	var verr *medallion.ValidationError
	switch {
	case err == nil:
		b.sizes.add(old, -1)
		b.sizes.add(c, 1)
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

// setAll writes the latest and version keys and the index entries of c.
func setAll(txn *badger.Txn, c *medallion.Medallion, value []byte, index [][]byte, entry []byte) error {
	id := c.Meta.MedallionID
	if err := txn.Set(latestKey(id), versionValue(c.Meta.Version)); err != nil {
		return err
	}
	if err := txn.Set(versionKey(id, c.Meta.Version), value); err != nil {
		return err
	}
	for _, k := range index {
		if err := txn.Set(k, entry); err != nil {
			return err
		}
	}
	return nil
}

// getLatest reads the latest version of id, nil when absent.
func getLatest(txn *badger.Txn, id string) (*medallion.Medallion, error) {
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
	m, err := getMedallion(txn, versionKey(id, version))
	if err == nil && m == nil {
		// m/ and v/ keys are written in one transaction, so this is
		// corruption, not a race.
		err = fmt.Errorf("latest version %d of %s is not stored", version, id)
	}
	return m, err
}

// getMedallion decodes the medallion stored at key, nil when absent.
// Decoding copies out of Badger's buffer, which is valid only inside the
// txn.
func getMedallion(txn *badger.Txn, key []byte) (*medallion.Medallion, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := new(medallion.Medallion)
	if err := item.Value(func(v []byte) error { return decodeMedallion(v, m) }); err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return m, nil
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
		var err error
		m, err = getMedallion(txn, versionKey(id, version))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("get %s version %d: %w", id, version, err)
	}
	return m, nil
}

// History lists every version of id, oldest first (the version keys sort
// by big-endian version number).
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
			// Only meta is needed, but decoding a whole binary version
			// (~1 µs) costs less than encoding/json took to skip the rest;
			// versions stored as JSON are decoded whole too, for one
			// decoding path.
			var v medallion.Medallion
			if err := it.Item().Value(func(b []byte) error { return decodeMedallion(b, &v) }); err != nil {
				return fmt.Errorf("decode %s: %w", it.Item().Key(), err)
			}
			out = append(out, medallion.VersionInfo{
				Version:   v.Meta.Version,
				UpdatedAt: v.Meta.UpdatedAt,
				Model:     v.Meta.Model,
				Status:    v.Meta.Status,
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
