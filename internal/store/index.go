package store

import (
	"context"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Indexer keeps an index derived from medallion versions (the search
// index, package search) in the store, under key prefixes of its own that
// the store never touches. IndexVersion is called inside the transaction
// that writes each new version, so the index commits with the version or
// not at all and never drifts from what is stored.
type Indexer interface {
	// IndexVersion writes what version cur changes in the index; prev is
	// the version before it, nil for a medallion's first. An error aborts
	// the write of the version. committed, when not nil, is called once
	// the transaction has committed (for counters kept in memory).
	IndexVersion(txn *badger.Txn, prev, cur *medallion.Medallion) (committed func(), err error)
}

// indexerBox holds the Indexer: atomic.Pointer needs one concrete type.
type indexerBox struct{ ix Indexer }

// SetIndexer makes every later Create, Update and Import index the
// versions it writes. Set it before the store's first write (the daemon
// does, right after Open); nil turns indexing off.
func (b *Badger) SetIndexer(ix Indexer) {
	if ix == nil {
		b.indexer.Store(nil)
		return
	}
	b.indexer.Store(&indexerBox{ix})
}

// WatchWrites makes fn hear of every medallion version the store writes
// from now on (Create, Update, Import), after the transaction that wrote
// it has ended, and before the write returns to its caller: whoever keeps
// something derived from the medallions (the server's rendered loads)
// drops it there. fn also hears of versions whose transaction failed; it
// must be quick and must not write to the store.
func (b *Badger) WatchWrites(fn func(prev, cur *medallion.Medallion)) {
	for {
		old := b.watchers.Load()
		var fns []func(prev, cur *medallion.Medallion)
		if old != nil {
			fns = append(fns, *old...)
		}
		fns = append(fns, fn)
		if b.watchers.CompareAndSwap(old, &fns) {
			return
		}
	}
}

// indexWrite runs one write transaction whose fn may index versions with
// the index function it is given, and calls their committed functions
// after a successful commit. A retried transaction starts afresh. Every
// version written goes through index, so the watchers hear of each one
// here (WatchWrites).
func (b *Badger) indexWrite(fn func(txn *badger.Txn, index func(prev, cur *medallion.Medallion) error) error) error {
	var after []func()
	var written [][2]*medallion.Medallion
	defer func() {
		// Loaded after the transaction: a watcher registered while it ran
		// hears of it too.
		w := b.watchers.Load()
		if w == nil {
			return
		}
		for _, v := range written {
			for _, f := range *w {
				f(v[0], v[1])
			}
		}
	}()
	err := b.db.Update(func(txn *badger.Txn) error {
		after = after[:0]
		return fn(txn, func(prev, cur *medallion.Medallion) error {
			written = append(written, [2]*medallion.Medallion{prev, cur})
			box := b.indexer.Load()
			if box == nil {
				return nil
			}
			committed, err := box.ix.IndexVersion(txn, prev, cur)
			if err != nil {
				return fmt.Errorf("index version %d: %w", cur.Meta.Version, err)
			}
			if committed != nil {
				after = append(after, committed)
			}
			return nil
		})
	})
	if err == nil {
		for _, f := range after {
			f()
		}
	}
	return err
}

// View runs fn in a read-only transaction, for an Indexer reading its own
// keys.
func (b *Badger) View(ctx context.Context, fn func(txn *badger.Txn) error) error {
	if err := b.begin(ctx); err != nil {
		return err
	}
	defer b.mu.RUnlock()
	return b.db.View(fn)
}

// Write runs fn in a read-write transaction, for an Indexer (re)building
// its own keys; it fails with ErrDiskFull like every write.
func (b *Badger) Write(ctx context.Context, fn func(txn *badger.Txn) error) error {
	if err := b.begin(ctx); err != nil {
		return err
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return err
	}
	return b.db.Update(fn)
}

// DropPrefix deletes every key starting with prefix, for an Indexer
// starting its index over. It must not name one of the store's own
// prefixes.
//
// Badger blocks its writes while it drops a prefix, and fails the writes
// it blocks (ErrBlockedWrites); worse, a commit that passed its check
// just before is queued but never written until the drop ends, while the
// drop waits for that commit to read (badger v4.9.6: sendToWriteCh,
// filterPrefixesToDrop), and the store hangs. So the drop runs with no
// call in flight, holding b.mu for writing, as a reclaim's does
// (reclaim.go): the calls that come meanwhile wait for it.
func (b *Badger) DropPrefix(ctx context.Context, prefix string) error {
	if err := b.lockAlone(ctx); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if b.shut() {
		return errClosed
	}
	b.calls.Add(1)
	if err := b.roomToWrite(); err != nil {
		return err
	}
	return b.db.DropPrefix([]byte(prefix))
}

// reindexBatch is how many versions one Reindex transaction indexes: few
// enough to stay under Badger's transaction limit for ordinary versions,
// many enough that commits do not dominate a rebuild.
const reindexBatch = 64

// Reindex drops every key under prefix (the indexer's own) and hands
// every stored version to the indexer, each medallion's versions in
// order, as if each were written now. After each batch of versions
// committed, and once more at the end (last), afterBatch may write what
// the indexer gathered with write (a transaction on the store, under the
// call Reindex already holds). It reads one snapshot; versions written
// meanwhile are indexed by their own write. It returns how many versions
// it indexed.
func (b *Badger) Reindex(ctx context.Context, prefix string, afterBatch func(write func(func(*badger.Txn) error) error, last bool) error) (int, error) {
	box := b.indexer.Load()
	if box == nil {
		return 0, errors.New("reindex: no indexer set")
	}
	if err := b.DropPrefix(ctx, prefix); err != nil {
		return 0, fmt.Errorf("reindex: drop %s: %w", prefix, err)
	}
	if err := b.begin(ctx); err != nil {
		return 0, err
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return 0, err
	}
	type pair struct{ prev, cur *medallion.Medallion }
	var batch []pair
	// index writes pairs in one transaction; one that is too big for it
	// is split in two.
	var index func(pairs []pair) error
	index = func(pairs []pair) error {
		var after []func()
		err := b.db.Update(func(txn *badger.Txn) error {
			after = after[:0]
			for _, p := range pairs {
				committed, err := box.ix.IndexVersion(txn, p.prev, p.cur)
				if err != nil {
					return fmt.Errorf("index %s version %d: %w", p.cur.Meta.MedallionID, p.cur.Meta.Version, err)
				}
				if committed != nil {
					after = append(after, committed)
				}
			}
			return nil
		})
		if errors.Is(err, badger.ErrTxnTooBig) && len(pairs) > 1 {
			if err := index(pairs[:len(pairs)/2]); err != nil {
				return err
			}
			return index(pairs[len(pairs)/2:])
		}
		if err != nil {
			return err
		}
		for _, f := range after {
			f()
		}
		return afterBatch(b.db.Update, false)
	}
	n := 0
	var prev *medallion.Medallion
	err := b.db.View(func(txn *badger.Txn) error {
		return b.eachVersion(ctx, txn, func(m *medallion.Medallion) error {
			p := pair{cur: m}
			if prev != nil && prev.Meta.MedallionID == m.Meta.MedallionID {
				p.prev = prev
			}
			prev = m
			n++
			if batch = append(batch, p); len(batch) < reindexBatch {
				return nil
			}
			err := index(batch)
			batch = batch[:0]
			return err
		})
	})
	if err == nil && len(batch) > 0 {
		err = index(batch)
	}
	if err == nil {
		err = afterBatch(b.db.Update, true)
	}
	if err != nil {
		return n, fmt.Errorf("reindex: %w", err)
	}
	return n, nil
}
