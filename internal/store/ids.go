package store

import (
	"context"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// IDLister is implemented by stores that can name every medallion they
// hold. It is kept out of Store because only whole-store views need it
// (the review of every medallion, a count of pending items), and a query
// by scope answers everything else from indexes.
type IDLister interface {
	// IDs returns the id of every stored medallion, in byte order.
	IDs(ctx context.Context) ([]string, error)
}

var _ IDLister = (*Badger)(nil)

// IDs returns every medallion id, in byte order, from the m/ keys alone
// (no value is read).
func (b *Badger) IDs(ctx context.Context) ([]string, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("list ids: %w", err)
	}
	defer b.mu.RUnlock()
	var ids []string
	err := b.db.View(func(txn *badger.Txn) error {
		prefix := []byte(prefixLatest)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			ids = append(ids, string(it.Item().Key()[len(prefix):]))
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list ids: %w", err)
	}
	return ids, nil
}
