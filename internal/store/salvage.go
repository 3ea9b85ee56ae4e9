package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
)

// SalvageResult says what Salvage could read.
type SalvageResult struct {
	// Versions counts the medallion versions handed to fn, Unreadable the
	// ones whose value could not be read or decoded.
	Versions, Unreadable int
	// FromLogs counts the versions found only by reading the value logs
	// directly (their tables were damaged or their MANIFEST lost).
	FromLogs int
	// Copied is set when Badger would not open the directory read-only
	// (after a crash its memtable logs need trimming) and a scratch copy
	// was read instead, leaving dir untouched either way.
	Copied bool
}

// Salvage reads every medallion version it can from the store in dir, a
// damaged one that Open refuses, and calls fn with each (by id, oldest
// version first). dir is never written: Badger opens it read-only, or, when
// it cannot, a copy made in scratch (a directory on a filesystem with room
// for the store, removed afterwards). Then the value logs are read entry by
// entry, past damage, for versions the tables no longer lead to: every
// version was stored whole while it was the latest, and whole versions
// are over Badger's value threshold and so in a value log, key and all.
// A version stored as a delta is rebuilt from the version above it
// (delta.go); one that cannot be read or rebuilt is counted and skipped.
func Salvage(dir, scratch string, logger hclog.Logger, fn func(*medallion.Medallion) error) (res SalvageResult, err error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	found := map[string][]byte{} // version key → record
	readErr := salvageTables(dir, scratch, logger, &res, found)
	if readErr != nil {
		logger.Warn("salvage: the tables could not be read whole; reading the value logs", "dir", dir, "error", readErr)
	}
	n, err := salvageLogs(dir, found)
	if err != nil {
		return res, fmt.Errorf("salvage %s: %w", dir, err)
	}
	res.FromLogs = n
	keys := slices.Sorted(maps.Keys(found))
	var r rebuilder
	for len(keys) > 0 {
		// The keys of one medallion's versions are adjacent.
		prefix := keys[0][:len(keys[0])-8]
		var recs []record
		for len(keys) > 0 && strings.HasPrefix(keys[0], prefix) && len(keys[0]) == len(prefix)+8 {
			k := keys[0]
			recs = append(recs, record{version: int(binary.BigEndian.Uint64([]byte(k[len(prefix):]))), raw: found[k]})
			keys = keys[1:]
		}
		err := r.all(recs, func(version int, whole []byte, err error) error {
			m := new(medallion.Medallion)
			if err == nil {
				err = decodeMedallion(whole, m)
			}
			if err == nil && m.Meta.MedallionID == "" {
				err = errors.New("no id")
			}
			if err != nil {
				res.Unreadable++
				logger.Warn("salvage: a medallion version cannot be read", "key", fmt.Sprintf("%q", prefix), "version", version, "error", err)
				return nil
			}
			res.Versions++
			return fn(m)
		})
		if err != nil {
			return res, err
		}
	}
	if readErr != nil && res.Versions == 0 {
		return res, fmt.Errorf("salvage %s: %w", dir, readErr)
	}
	return res, nil
}

// salvageTables reads the version records Badger can still find into
// found, by version key.
func salvageTables(dir, scratch string, logger hclog.Logger, res *SalvageResult, found map[string][]byte) (err error) {
	opts := badgerOptions(dir, logger.Named("badger"))
	db, roErr := badger.Open(opts.WithReadOnly(true))
	if roErr != nil {
		if err := copyStore(dir, scratch); err != nil {
			return fmt.Errorf("read-only open failed (%v) and so did a copy: %w", roErr, err)
		}
		defer os.RemoveAll(scratch)
		res.Copied = true
		if db, err = badger.Open(badgerOptions(scratch, logger.Named("badger")).WithNumCompactors(0)); err != nil {
			return err
		}
	}
	defer db.Close()
	defer func() {
		// A damaged block can make Badger's iterator panic rather than
		// fail; what was read so far stands.
		if r := recover(); r != nil {
			err = fmt.Errorf("reading stopped at damage: %v", r)
		}
	}()
	return db.View(func(txn *badger.Txn) error {
		prefix := []byte(prefixVersion)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			v, err := item.ValueCopy(nil)
			if err == nil && len(v) == 0 {
				err = errors.New("empty")
			}
			if err != nil || len(item.Key()) < len(prefix)+9 {
				res.Unreadable++
				logger.Warn("salvage: a medallion version cannot be read", "key", fmt.Sprintf("%q", item.Key()), "error", err)
				continue
			}
			found[string(item.KeyCopy(nil))] = v
		}
		return nil
	})
}

// salvageLogs reads every entry of dir's value logs, skipping over damage,
// and adds the version records found not yet in found. A version's key
// holds the same version whether stored whole or as a delta, so any copy
// will do; a whole one replaces a delta found in the tables, as it needs
// nothing else to be read.
func salvageLogs(dir string, found map[string][]byte) (int, error) {
	logs, err := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if err != nil {
		return 0, err
	}
	added := 0
	for _, path := range logs {
		err := eachLogEntry(path, func(e logEntry) {
			if len(e.key) <= 8 || e.meta&bitDelete != 0 || len(e.value) == 0 {
				return
			}
			key := string(e.key[:len(e.key)-8]) // without Badger's version
			if !strings.HasPrefix(key, prefixVersion) || len(key) < len(prefixVersion)+9 {
				return
			}
			prev, ok := found[key]
			if ok && (isDelta(e.value) || !isDelta(prev)) {
				return
			}
			if m, err := recordMeta(e.value); err != nil || m.MedallionID == "" {
				return
			}
			found[key] = e.value
			if !ok {
				added++
			}
		})
		if err != nil {
			return added, fmt.Errorf("read %s: %w", filepath.Base(path), err)
		}
	}
	return added, nil
}

// eachLogEntry calls fn with every intact entry of a log file, going on
// after damage at the next intact entry.
func eachLogEntry(path string, fn func(logEntry)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	end, err := lastNonZero(f, fi.Size(), 0)
	if err != nil {
		return err
	}
	off := int64(logHeaderSize)
	for off < end {
		r := bufio.NewReaderSize(io.NewSectionReader(f, off, end-off), 1<<16)
		for {
			e, n, ok := readEntry(r, end-off)
			if !ok {
				break
			}
			fn(e)
			off += n
		}
		if off >= end {
			break
		}
		next, err := findIntact(f, off+1, end, end)
		if err != nil {
			return err
		}
		if next < 0 {
			break
		}
		off = next
	}
	return nil
}

// copyStore copies Badger's files from dir to a new directory to, the
// memtable and value logs only up to their last written byte (they are
// sparse files hundreds of MiB long).
func copyStore(dir, to string) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == lockFileName || e.Name() == "LOCK" {
			continue
		}
		if err := copyFile(filepath.Join(dir, e.Name()), filepath.Join(to, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	n := fi.Size()
	if ext := filepath.Ext(from); ext == ".vlog" || ext == ".mem" {
		if n, err = lastNonZero(src, n, 0); err != nil {
			return err
		}
		if n == 0 {
			// Nothing written, not even the header (a crash came as
			// Badger created or deleted it): copied, it would be an
			// empty log, which Badger refuses (see dropEmptyLogs).
			return nil
		}
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, io.NewSectionReader(src, 0, n)); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
