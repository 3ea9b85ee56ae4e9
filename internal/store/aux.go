package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	badger "github.com/dgraph-io/badger/v4"
)

// prefixAux holds small records of the daemon's other parts that must
// survive a restart beside the data they describe: Tier 1's per-session
// digest backlog and the LLM's daily token ledger. Keys are
// "x/<owner>/<name>"; the owner chooses the names.
const prefixAux = "x/"

// maxAuxValue bounds one record: these are small by design, and a bug
// that grew one without bound should fail loudly, not fill the disk.
const maxAuxValue = 4 << 20

// GetAux returns the record stored under key, or nil when there is none.
func (b *Badger) GetAux(ctx context.Context, key string) ([]byte, error) {
	if err := b.begin(ctx); err != nil {
		return nil, err
	}
	defer b.mu.RUnlock()
	var out []byte
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(prefixAux + key))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		out, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	return out, nil
}

// PutAux stores value under key; a nil or empty value deletes the record.
func (b *Badger) PutAux(ctx context.Context, key string, value []byte) error {
	if len(value) > maxAuxValue {
		return fmt.Errorf("write %s: %d bytes is over the %d-byte limit of a record", key, len(value), maxAuxValue)
	}
	if err := b.begin(ctx); err != nil {
		return err
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	err := b.db.Update(func(txn *badger.Txn) error {
		if len(value) == 0 {
			return txn.Delete([]byte(prefixAux + key))
		}
		return txn.Set([]byte(prefixAux+key), value)
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// AuxInt returns the integer stored under key by AddAuxInt (absent is
// 0). It only reads, so it works on a store open read-only (disk full):
// the token ledger can still tell how much was spent.
func (b *Badger) AuxInt(ctx context.Context, key string) (int64, error) {
	v, err := b.GetAux(ctx, key)
	if err != nil || v == nil {
		return 0, err
	}
	n, err := parseAuxInt(v)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", key, err)
	}
	return n, nil
}

func parseAuxInt(v []byte) (int64, error) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %w", err)
	}
	return n, nil
}

var auxAddMu sync.Mutex

// AddAuxInt adds delta to the integer stored under key (absent is 0) in
// one transaction, and returns the new value; the daily token ledger
// counts with it, so two checkpoints never lose each other's tokens. It is
// a write even when delta is 0 (refused on a full disk): read with AuxInt.
func (b *Badger) AddAuxInt(ctx context.Context, key string, delta int64) (int64, error) {
	if err := b.begin(ctx); err != nil {
		return 0, err
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return 0, fmt.Errorf("add to %s: %w", key, err)
	}
	// One adder at a time: a read-modify-write races with itself, and
	// Badger's answer to that is ErrConflict. Adds are rare (one per model
	// call), so a process-wide lock costs nothing.
	auxAddMu.Lock()
	defer auxAddMu.Unlock()
	var n int64
	for range 3 {
		err := b.db.Update(func(txn *badger.Txn) error {
			n = 0
			item, err := txn.Get([]byte(prefixAux + key))
			switch {
			case errors.Is(err, badger.ErrKeyNotFound):
			case err != nil:
				return err
			default:
				if err := item.Value(func(v []byte) (err error) {
					n, err = parseAuxInt(v)
					return err
				}); err != nil {
					return err
				}
			}
			n += delta
			return txn.Set([]byte(prefixAux+key), strconv.AppendInt(nil, n, 10))
		})
		if errors.Is(err, badger.ErrConflict) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("add to %s: %w", key, err)
		}
		return n, nil
	}
	return 0, fmt.Errorf("add to %s: %w", key, badger.ErrConflict)
}

// AuxKeys lists the keys of the records whose key starts with prefix, in
// key order.
func (b *Badger) AuxKeys(ctx context.Context, prefix string) ([]string, error) {
	if err := b.begin(ctx); err != nil {
		return nil, err
	}
	defer b.mu.RUnlock()
	var out []string
	p := []byte(prefixAux + prefix)
	err := b.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
		defer it.Close()
		for it.Seek(p); it.ValidForPrefix(p); it.Next() {
			out = append(out, string(it.Item().Key()[len(prefixAux):]))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s*: %w", prefix, err)
	}
	return out, nil
}
