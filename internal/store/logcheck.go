package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"
)

// Badger's value log (.vlog) and memtable logs (.mem) are sequences of
// entries after a 20-byte header. When Badger opens a store it reads the
// memtable logs and the last value log up to the first entry it cannot
// read, and cuts the file there, without a word: the lines of a damaged
// .mem file after the damage are lost (events and offsets roll back), and
// values after damage in a .vlog are cut away while the tables still point
// at them (the daemon then failed reading its file states). So the store
// reads the logs itself before Badger does, the same way, and refuses to
// open when Badger would throw away entries that are intact.
//
// The entry format (badger/v4 structs.go, value.go, memtable.go): meta and
// user-meta bytes, uvarint key length, value length and expiry, the key
// (with its 8-byte version), the value, and a big-endian CRC-32
// (Castagnoli) of everything before it. Entries of a transaction carry
// bitTxn and are valid only once an entry with bitFinTxn, whose value is
// the transaction's version in decimal, follows.

const (
	logHeaderSize  = 20     // Badger's vlogHeaderSize
	entryHeaderMax = 22     // Badger's maxHeaderSize
	bitDelete      = 1 << 0 // Badger's bitDelete: a tombstone
	bitTxn         = 1 << 6
	bitFinTxn      = 1 << 7
	maxKeyLen      = 1 << 16
	// resyncWindow bounds the search for an intact entry after the point
	// where Badger stops reading.
	resyncWindow = 8 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrDamaged is wrapped by Open's error when a file of the store is
// damaged in a way that opening it would make worse, and by the error of
// VerifyChecksums.
var ErrDamaged = errors.New("store is damaged")

// damageError names the damaged file and what the user can do.
type damageError struct {
	dir    string
	detail string
}

func (e *damageError) Error() string {
	return fmt.Sprintf("the store under %s is damaged: %s. "+recovery, e.dir, e.detail)
}

// recovery is what a damaged store's error tells the user to do.
const recovery = "To recover, stop medalliond and run 'medalliond repair': it moves the store aside (keeping it), " +
	"stores every medallion it can read from it and those of the newest automatic export, " +
	"and the next start re-ingests the transcripts still on disk. " +
	"Or put back a backup copy of the whole directory"

// Is makes errors.Is(err, ErrDamaged) true.
func (e *damageError) Is(target error) bool { return target == ErrDamaged }

// checkLogs reads the memtable logs and the newest value log of dir as
// Badger will at Open: those are the files Badger replays and cuts at the
// first entry it cannot read. Older value logs are only read entry by
// entry when a lookup lands on one, so damage there loses nothing at Open;
// the verification pass (verify) finds it in any live value. Reading every
// value log took 3.5 s of a million-medallion store's start (issue 12).
// A file where Badger would drop intact entries is a damageError.
// After a clean close (no memtable log is left) so is any unreadable byte:
// Close trims every log to its last entry. After a crash, an unreadable
// tail without an intact entry after it is most likely a write the crash
// cut short, which Badger rightly drops: it is only reported through torn,
// and Badger.verify finds it if a table pointed at it.
func checkLogs(dir string, torn func(file string, at, end int64)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("check logs: %w", err)
	}
	var logs []string
	newest := ""
	crashed := false
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if ext != ".mem" && ext != ".vlog" {
			continue
		}
		// An empty log is none: openDB drops it before Badger opens
		// (dropEmptyLogs), and the log Badger replays is the one before.
		if empty, err := emptyLog(e); err != nil {
			return fmt.Errorf("check logs: %w", err)
		} else if empty {
			continue
		}
		if ext == ".mem" {
			logs = append(logs, e.Name())
			crashed = true
		} else {
			newest = max(newest, e.Name()) // zero-padded numbers: names sort as numbers
		}
	}
	if newest != "" {
		logs = append(logs, newest)
	}
	slices.Sort(logs)
	for _, name := range logs {
		res, err := checkLog(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("check %s: %w", name, err)
		}
		switch {
		case res.intactAfter >= 0:
			return &damageError{dir: dir, detail: fmt.Sprintf(
				"%s cannot be read from byte %d on (%d bytes up to an intact entry at byte %d); Badger would cut the file there or fail to read it, and the %d bytes after the damage would be lost",
				name, res.stop, res.intactAfter-res.stop, res.intactAfter, res.end-res.stop)}
		case res.end > res.stop && !crashed:
			return &damageError{dir: dir, detail: fmt.Sprintf(
				"%s cannot be read from byte %d on (%d bytes) although the store was closed cleanly; Badger would cut the file there and what it held would be lost",
				name, res.stop, res.end-res.stop)}
		case res.end > res.stop && torn != nil:
			torn(name, res.stop, res.end)
		}
	}
	return nil
}

// emptyLog reports whether the directory entry e is a regular file of 0
// bytes (one removed meanwhile is not).
func emptyLog(e os.DirEntry) (bool, error) {
	if !e.Type().IsRegular() {
		return false, nil
	}
	fi, err := e.Info()
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.Size() == 0, nil
}

// dropEmptyLogs removes the memtable and value logs of dir that are empty
// (0 bytes), logging each one's name. Badger v4.9.6 cannot
// open a store holding one (badger issue 2207): it takes the file for one
// it has just created, sizes it, and fails with "Create a new file"
// (z.NewFile; read-only, the sizing itself fails). And a crash leaves
// them: Badger deletes a log by truncating it to 0 bytes and then
// removing it (z.MmapFile.Delete), a memtable log once its memtable is in
// a table (every memtable flush, the reclaim's among them), a value log
// after the collector moved its live values (reclaim.go); and it creates
// one empty before it sizes it. A kill -9 between the two steps (the
// truncation of a written log takes a while) came in one kill in twenty
// to thirty of TestReclaimCrash's, and the daemon then could not start: 7 of
// 8 runs of that test failed without this. A running store meets them
// too: when the sizing of a new memtable log fails (a file size limit, a
// full file system without sparse files) Badger leaves it empty, and the
// store reopens Badger after such a failed flush (reclaim.go), so every
// open of Badger drops them first (openDB; TestReclaimNewMemtableFails).
// An empty log holds nothing: removing it loses nothing.
func dropEmptyLogs(dir string, logger hclog.Logger) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("check logs: %w", err)
	}
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext != ".mem" && ext != ".vlog" {
			continue
		}
		if empty, err := emptyLog(e); err != nil {
			return fmt.Errorf("check logs: %w", err)
		} else if !empty {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("remove the empty log %s: %w", e.Name(), err)
		}
		logger.Warn("an empty log left by a crash or a failed Badger call is removed from the store", "dir", dir, "file", e.Name())
	}
	return nil
}

// logCheck is what checkLog found: Badger stops reading at stop; the last
// non-zero byte is at end-1; intactAfter is the offset of an intact entry
// after stop, or -1.
type logCheck struct {
	stop, end, intactAfter int64
}

// checkLog reads one log file the way Badger's logFile.iterate does.
func checkLog(path string) (logCheck, error) {
	f, err := os.Open(path)
	if err != nil {
		return logCheck{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return logCheck{}, err
	}
	size := fi.Size()
	res := logCheck{stop: min(logHeaderSize, size), intactAfter: -1}
	if size > logHeaderSize {
		res.stop, err = validEnd(f, size)
		if err != nil {
			return logCheck{}, err
		}
	}
	if res.end, err = lastNonZero(f, size, res.stop); err != nil {
		return logCheck{}, err
	}
	if res.end > res.stop {
		// Entries readable right where Badger stops are a transaction that
		// a crash cut short before its commit entry (kill -9 between two
		// writes of one transaction): Badger rightly drops them, and they
		// are no sign of damage. The search for intact data starts after
		// them.
		from := readableRun(f, res.stop, size)
		res.intactAfter, err = findIntact(f, from+1, min(res.end, from+resyncWindow), res.end)
		if err != nil {
			return logCheck{}, err
		}
	}
	return res, nil
}

// validEnd is the offset after the last entry (or finished transaction)
// Badger keeps.
func validEnd(f *os.File, size int64) (int64, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(f, logHeaderSize, size-logHeaderSize), 1<<16)
	off, valid := int64(logHeaderSize), int64(logHeaderSize)
	var lastCommit uint64
	for {
		e, n, ok := readEntry(r, size-off)
		if !ok {
			return valid, nil
		}
		off += n
		switch {
		case e.meta&bitTxn != 0:
			if len(e.key) < 8 {
				return valid, nil
			}
			ts := ^binary.BigEndian.Uint64(e.key[len(e.key)-8:]) // Badger stores MaxUint64-version
			if lastCommit == 0 {
				lastCommit = ts
			}
			if lastCommit != ts {
				return valid, nil
			}
		case e.meta&bitFinTxn != 0:
			ts, err := strconv.ParseUint(string(e.value), 10, 64)
			if err != nil || ts != lastCommit {
				return valid, nil
			}
			lastCommit, valid = 0, off
		default:
			if lastCommit != 0 {
				return valid, nil
			}
			valid = off
		}
	}
}

// readableRun returns the offset after the entries that can be read one
// after the other from off.
func readableRun(f *os.File, off, size int64) int64 {
	r := bufio.NewReaderSize(io.NewSectionReader(f, off, size-off), 1<<16)
	for {
		_, n, ok := readEntry(r, size-off)
		if !ok {
			return off
		}
		off += n
	}
}

type logEntry struct {
	meta       byte
	key, value []byte
}

// readEntry reads one entry of at most room bytes; ok is false where Badger
// would stop (end of data, a torn or zeroed entry, a checksum mismatch).
// The header is parsed from the reader's buffer and each part checksummed
// in one call: hashing byte by byte through a reader made this check most
// of a start (100 ms for a 56 MB value log).
func readEntry(r *bufio.Reader, room int64) (e logEntry, n int64, ok bool) {
	hdr, _ := r.Peek(entryHeaderMax) // fewer bytes at the end of the data
	if len(hdr) < 5 {
		return logEntry{}, 0, false
	}
	p := 2             // meta and user-meta bytes
	var lens [3]uint64 // key length, value length, expiry
	for i := range lens {
		v, k := binary.Uvarint(hdr[p:])
		if k <= 0 {
			return logEntry{}, 0, false
		}
		lens[i], p = v, p+k
	}
	klen, vlen := lens[0], lens[1]
	if klen > maxKeyLen || klen == 0 || vlen > uint64(room) {
		return logEntry{}, 0, false
	}
	total := int64(p) + int64(klen) + int64(vlen) + crc32.Size
	if total > room {
		return logEntry{}, 0, false
	}
	meta := hdr[0]
	sum := crc32.Update(0, castagnoli, hdr[:p])
	if _, err := r.Discard(p); err != nil {
		return logEntry{}, 0, false
	}
	buf := make([]byte, klen+vlen+crc32.Size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return logEntry{}, 0, false
	}
	body := buf[:klen+vlen]
	if binary.BigEndian.Uint32(buf[len(body):]) != crc32.Update(sum, castagnoli, body) {
		return logEntry{}, 0, false
	}
	return logEntry{meta: meta, key: body[:klen], value: body[klen:]}, total, true
}

// lastNonZero returns the offset after the last non-zero byte at or after
// from, or from when there is none: a log is preallocated with zeros (and
// sparse), so what matters is whether anything was written past the point
// Badger stops.
func lastNonZero(f *os.File, size, from int64) (int64, error) {
	const chunk = 1 << 20
	buf := make([]byte, chunk)
	zeros := make([]byte, chunk)
	for end := size; end > from; end -= chunk {
		start := max(end-chunk, from)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if bytes.Equal(b, zeros[:len(b)]) {
			continue // the usual preallocated tail, compared at memory speed
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != 0 {
				return start + int64(i) + 1, nil
			}
		}
	}
	return from, nil
}

// findIntact looks for an intact entry starting in [from, to) and ending
// by end; -1 when there is none. A random run of bytes passes the CRC-32
// once in four billion tries, so one found is real data.
func findIntact(f *os.File, from, to, end int64) (int64, error) {
	for p := from; p < to; p++ {
		var hdr [entryHeaderMax]byte
		n, err := f.ReadAt(hdr[:], p)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if n < 5 || hdr[0] == 0 && hdr[1] == 0 && hdr[2] == 0 {
			continue // zeros: not an entry (keys are never empty)
		}
		if !plausibleHeader(hdr[:n], end-p) {
			continue
		}
		r := bufio.NewReaderSize(io.NewSectionReader(f, p, end-p), 1<<16)
		if _, _, ok := readEntry(r, end-p); ok {
			return p, nil
		}
	}
	return -1, nil
}

// plausibleHeader rejects most non-entries before their checksum is
// computed: a key of 9 bytes or more (the version is 8) and a size that
// fits in room.
func plausibleHeader(b []byte, room int64) bool {
	rest := b[2:]
	klen, n1 := binary.Uvarint(rest)
	if n1 <= 0 || klen < 9 || klen > maxKeyLen {
		return false
	}
	vlen, n2 := binary.Uvarint(rest[n1:])
	if n2 <= 0 {
		return false
	}
	return int64(2+n1+n2)+int64(klen)+int64(vlen)+crc32.Size <= room
}

// verify reads every block of every table and every live value, checking
// their checksums: Badger otherwise reads a damaged table block only when
// a lookup lands on it (a full scan silently stops there) and hands out a
// damaged value without a word.
func (b *Badger) verify() error {
	if err := verifyTables(b.db); err != nil {
		return &damageError{dir: b.dir, detail: fmt.Sprintf("a table fails its checksum (%v)", err)}
	}
	var bad int
	var first error
	err := b.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%4096 == 0 {
				if b.stopping() {
					return errStopping // Close waits for the pass
				}
				// Every value read faults its pages of the value log in:
				// keep the pass within the daemon's memory (compact.go).
				b.trimMapped(mappedBudget)
			}
			item := it.Item()
			// Badger logs a value it cannot read and hands out an empty
			// one (Item.yieldItemValue): a value stored in the value log
			// is never empty (only those over 512 bytes go there), so an
			// empty one with a size is a failed read.
			err := item.Value(func(v []byte) error {
				if len(v) == 0 && item.ValueSize() > 0 {
					return errors.New("unreadable: its value log entry is damaged or cut")
				}
				return nil
			})
			if err != nil {
				bad++
				if first == nil {
					first = fmt.Errorf("value of key %q: %w", item.Key(), err)
				}
			}
		}
		return nil
	})
	if errors.Is(err, errStopping) {
		return err
	}
	if err != nil {
		return &damageError{dir: b.dir, detail: fmt.Sprintf("reading it back failed (%v)", err)}
	}
	if bad > 0 {
		return &damageError{dir: b.dir, detail: fmt.Sprintf("values that cannot be read: %d (the first: %v)", bad, first)}
	}
	return nil
}

// errStopping ends a verification pass that Close is waiting for.
var errStopping = errors.New("store is closing")

// stopping reports whether Close has begun.
func (b *Badger) stopping() bool {
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

// asDamage names a table Badger could not open as damage to the store.
// Badger's errors carry no type to test, only text; a table that fails to
// open is "Opening table: … err: …" (levels.go).
func asDamage(dir string, err error) error {
	if err == nil || !strings.Contains(err.Error(), "Opening table") {
		return err
	}
	return &damageError{dir: dir, detail: fmt.Sprintf("a table cannot be opened (%v)", err)}
}

// verifyTables is db.VerifyChecksum, which in badger v4.9.6 panics on the
// very damage it looks for: Table.VerifyChecksum wraps the error of a block
// it could not read with that nil block's offset (table/table.go:711). The
// panic happens after the level locks are released; the tables' references
// taken for the pass are not given back, which only keeps their files
// from being deleted by a later compaction of a store already damaged.
func verifyTables(db *badger.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("a block cannot be read: %v", r)
		}
	}()
	return db.VerifyChecksum()
}

// checkDamage runs verify, every interval of the loop Open starts. Bit rot
// and a stray write show up between restarts too; found, the damage is
// logged once and kept for Damage, and the store keeps serving what it can
// read. Blocks in Badger's block cache are checked as cached, not re-read
// from disk.
func (b *Badger) checkDamage() {
	if err := b.begin(context.Background()); err != nil {
		return
	}
	err := b.verify()
	b.mu.RUnlock()
	if errors.Is(err, errStopping) {
		return
	}
	if err == nil {
		b.damage.Store(nil)
		return
	}
	if prev := b.damage.Load(); prev == nil || (*prev).Error() != err.Error() {
		b.logger.Error("the store is damaged", "dir", b.dir, "error", err)
	}
	b.damage.Store(&err)
}

// Damage is what the last periodic verification found wrong with the
// store (an error wrapping ErrDamaged), or nil.
func (b *Badger) Damage() error {
	if p := b.damage.Load(); p != nil {
		return *p
	}
	return nil
}
