package store

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Badger writes its value log, memtables and tables through mmap. On a full
// disk such a write does not fail with ENOSPC: the page fault kills the
// process with SIGBUS, and a daemon restarted on the still-full disk dies
// again while opening (replaying the memtables writes tables). So the store
// measures the free space before every write and refuses to write once less
// than a reserve is left; the reserve leaves room for what Badger writes on
// its own (a memtable flush, a compaction, the tables of an open).

// DefaultReserve is the free space below which writes are refused when
// Options.Reserve is zero: two 8 MiB memtables flushed plus the compaction
// of a few small tables, with a wide margin.
const DefaultReserve = 64 << 20

// DefaultSpaceInterval is how often the free space is measured between
// writes when Options.SpaceInterval is zero: it notices a disk that filled
// or emptied while nothing was written, and reopens a read-only store
// read-write once space is back.
const DefaultSpaceInterval = 5 * time.Second

// openSlack is the space a read-write open of a full disk needs beyond the
// memtables it replays: a new memtable log's and value log's first pages
// and Badger's small bookkeeping files.
const openSlack = 4 << 20

// ErrDiskFull is wrapped by every write refused for want of disk space (see
// DiskFullError); reads keep working.
var ErrDiskFull = errors.New("disk full")

// DiskFullError is a write refused because less than the reserve is free
// under the store's directory.
type DiskFullError struct {
	Dir           string
	Free, Reserve int64
	// ReadOnly is set when the store was opened read-only (the disk was
	// full at start) and has not been reopened read-write yet.
	ReadOnly bool
}

func (e *DiskFullError) Error() string {
	what := "writes refused"
	if e.ReadOnly {
		what = "store opened read-only"
	}
	return fmt.Sprintf("disk full under %s: %d MiB free of the %d MiB kept in reserve; %s",
		e.Dir, e.Free>>20, e.Reserve>>20, what)
}

// Is makes errors.Is(err, ErrDiskFull) true.
func (e *DiskFullError) Is(target error) bool { return target == ErrDiskFull }

// Space is the store's last measurement of the free space under its
// directory.
type Space struct {
	// Free is the space an unprivileged writer may still use, in bytes.
	Free int64
	// Reserve is the free space below which writes are refused.
	Reserve int64
	// Full is Free < Reserve: writes are refused.
	Full bool
	// ReadOnly is set while the store is open read-only because the disk
	// was full at Open; it is reopened read-write once space is back.
	ReadOnly bool
}

// Writable reports whether writes are accepted.
func (s Space) Writable() bool { return !s.Full && !s.ReadOnly }

// Space measures the free space now (one statfs) and reports it; a change
// of Full or ReadOnly is passed to Options.OnSpace first.
func (b *Badger) Space() Space { return b.measure() }

// measure takes a measurement and reports a change to OnSpace. A failing
// statfs on our own directory keeps the last measurement: refusing every
// write because of it would stop the daemon for a reason a user cannot act
// on, and a real full disk shows in the next measurement.
func (b *Badger) measure() Space {
	free, err := b.freeSpace(b.dir)
	b.spaceMu.Lock()
	defer b.spaceMu.Unlock()
	if err != nil {
		b.logger.Warn("measure free space", "dir", b.dir, "error", err)
		return b.space
	}
	s := Space{Free: free, Reserve: b.reserve, Full: free < b.reserve, ReadOnly: b.readOnly.Load()}
	changed := s.Full != b.space.Full || s.ReadOnly != b.space.ReadOnly
	b.space = s
	if changed && b.onSpace != nil {
		b.onSpace(s)
	}
	return s
}

// roomToWrite is every write's guard: a *DiskFullError when the disk is too
// full or the store is read-only. Callers hold b.mu (read).
func (b *Badger) roomToWrite() error {
	b.wrote()
	s := b.measure()
	if s.Writable() {
		return nil
	}
	return &DiskFullError{Dir: b.dir, Free: s.Free, Reserve: s.Reserve, ReadOnly: s.ReadOnly}
}

// checkSpace measures the free space, every interval of the loop Open
// starts, and reopens a read-only store read-write once the disk has room
// again.
func (b *Badger) checkSpace() {
	if s := b.measure(); s.ReadOnly && !s.Full {
		b.reopenWritable()
	}
}

// openDB opens Badger read-write when the disk has room (s), and otherwise
// in a mode that writes nothing: Badger's own read-only mode when it allows
// it (it does not after an unclean stop, whose memtable logs need
// truncating, nor for a store never created), else read-write with
// compactions off and every write refused by the guard, when the disk has
// room for what that open writes (the replayed memtables' tables). readOnly
// reports the second and third cases. It first drops the empty logs
// Badger refuses to open (dropEmptyLogs): a reopen meets the one a failed
// memtable flush left (reclaim.go), and the fallback after a failed open
// one that open may have left.
func (b *Badger) openDB(s Space) (db *badger.DB, readOnly bool, err error) {
	if err := dropEmptyLogs(b.dir, b.logger); err != nil {
		return nil, false, err
	}
	opts := badgerOptions(b.dir, b.logger.Named("badger"))
	defer func() { err = asDamage(b.dir, err) }()
	if !s.Full {
		db, err = badger.Open(opts)
		return db, false, err
	}
	db, roErr := badger.Open(opts.WithReadOnly(true))
	if roErr == nil {
		return db, true, nil
	}
	need, err := replayBytes(b.dir)
	if err != nil {
		return nil, false, err
	}
	if need += openSlack; s.Free < need {
		full := &DiskFullError{Dir: b.dir, Free: s.Free, Reserve: s.Reserve, ReadOnly: true}
		return nil, false, fmt.Errorf("%w: it cannot be opened even read-only (Badger: %v; a read-write open needs %d MiB): free some space and start again",
			full, roErr, need>>20)
	}
	b.logger.Debug("badger refused a read-only open; opening read-write without compactions", "error", roErr)
	db, err = badger.Open(opts.WithNumCompactors(0))
	return db, true, err
}

// replayBytes is the disk space of the memtable logs, which a read-write
// open turns into tables.
func replayBytes(dir string) (int64, error) {
	return allocatedBytes(dir, func(name string) bool { return strings.HasSuffix(name, ".mem") })
}

// allocatedBytes is the disk space the files of dir that keep names take,
// as du counts it.
func allocatedBytes(dir string, keep func(name string) bool) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range entries {
		if !keep(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		n += allocated(fi)
	}
	return n, nil
}

// reopenWritable swaps a read-only database for a read-write one. It holds
// b.mu, so no call is in flight. If the read-write open fails the store
// goes back to read-only, so that reads keep working.
func (b *Badger) reopenWritable() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || !b.readOnly.Load() {
		return
	}
	if s, open := b.reopen(); open && !b.readOnly.Load() {
		b.logger.Info("store reopened read-write: disk space is back", "dir", b.dir, "free_mib", s.Free>>20)
	}
}

// reopen closes the database and opens it again, read-write when the disk
// has room, for a caller holding b.mu for writing. If the read-write open
// fails the store opens in a mode that writes nothing, so that reads keep
// working; if that fails too, nothing is open: every call now fails as
// after Close, and the daemon's status says why. It returns the space
// measured for the open and whether a database is open.
func (b *Badger) reopen() (Space, bool) {
	if err := b.db.Close(); err != nil {
		b.logger.Warn("close store to reopen it", "error", err)
	}
	s := b.measure()
	db, readOnly, err := b.openDB(s)
	if err != nil {
		b.logger.Error("reopen store read-write", "dir", b.dir, "error", err)
		s.Full = true // try the modes that write nothing
		if db, readOnly, err = b.openDB(s); err != nil {
			b.logger.Error("reopen store", "dir", b.dir, "error", err)
			b.closed = true
			return s, false
		}
	}
	b.db = db
	b.readOnly.Store(readOnly)
	b.measure()
	return s, true
}
