package store

import (
	"bytes"

	badger "github.com/dgraph-io/badger/v4"
)

// cursor walks index entries in ascending suffix order (<order><id>, see
// the key layout): newest medallion first.
type cursor interface {
	// valid reports whether the cursor is on an entry.
	valid() bool
	// key is the current entry's suffix; it stays valid only until next.
	key() []byte
	// item is the current entry, for its value.
	item() *badger.Item
	// next moves to the following entry.
	next()
	// close releases the cursor's iterators.
	close()
}

// indexCursor walks the entries of one node or tag.
type indexCursor struct {
	it     *badger.Iterator
	prefix []byte
}

func newIndexCursor(txn *badger.Txn, prefix []byte) *indexCursor {
	// Values are not prefetched: they are read only when the entry has to
	// be checked against the query, and they are small and inline. Prefix
	// lets Badger skip tables whose key range cannot hold the prefix.
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	it.Seek(prefix)
	return &indexCursor{it: it, prefix: prefix}
}

func (c *indexCursor) valid() bool        { return c.it.ValidForPrefix(c.prefix) }
func (c *indexCursor) key() []byte        { return c.it.Item().Key()[len(c.prefix):] }
func (c *indexCursor) item() *badger.Item { return c.it.Item() }
func (c *indexCursor) next()              { c.it.Next() }
func (c *indexCursor) close()             { c.it.Close() }

// unionCursor merges its children, yielding an entry found in several of
// them once: the tag overlap rule.
type unionCursor struct {
	children []cursor
	cur      int    // index of the child holding the smallest key, -1 when done
	buf      []byte // copy of the current key while children move
}

func newUnionCursor(children []cursor) *unionCursor {
	u := &unionCursor{children: children}
	u.settle()
	return u
}

// settle points cur at the child with the smallest key.
func (u *unionCursor) settle() {
	u.cur = -1
	for i, c := range u.children {
		if c.valid() && (u.cur < 0 || bytes.Compare(c.key(), u.children[u.cur].key()) < 0) {
			u.cur = i
		}
	}
}

func (u *unionCursor) valid() bool        { return u.cur >= 0 }
func (u *unionCursor) key() []byte        { return u.children[u.cur].key() }
func (u *unionCursor) item() *badger.Item { return u.children[u.cur].item() }

// next advances every child sitting on the current key, so a medallion
// carrying several requested tags comes out once.
func (u *unionCursor) next() {
	u.buf = append(u.buf[:0], u.key()...)
	for _, c := range u.children {
		if c.valid() && bytes.Equal(c.key(), u.buf) {
			c.next()
		}
	}
	u.settle()
}

func (u *unionCursor) close() {
	for _, c := range u.children {
		c.close()
	}
}
