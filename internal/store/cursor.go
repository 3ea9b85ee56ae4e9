package store

import (
	"bytes"

	badger "github.com/dgraph-io/badger/v4"
)

// cursor walks index suffixes (<order><id>, see the key layout) in
// ascending byte order, newest medallion first. LatestForScope composes
// cursors: one per requested node or tag, a union over the tags and a
// leapfrog intersection over the nodes (and the tag union), so a query
// reads only index entries near its answer, never every medallion.
type cursor interface {
	// valid reports whether the cursor is on an entry.
	valid() bool
	// key is the current suffix; it stays valid only until the next move.
	key() []byte
	// next moves to the following entry.
	next()
	// seek moves to the first entry >= target, never backwards.
	seek(target []byte)
	// close releases the cursor's iterators.
	close()
}

// indexCursor walks the entries of one node or tag.
type indexCursor struct {
	it     *badger.Iterator
	prefix []byte
	buf    []byte // seek key scratch
}

func newIndexCursor(txn *badger.Txn, prefix []byte) *indexCursor {
	// Key-only: index values are empty, and Prefix lets Badger skip
	// tables whose key range cannot hold the prefix.
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	it.Seek(prefix)
	return &indexCursor{it: it, prefix: prefix}
}

func (c *indexCursor) valid() bool { return c.it.ValidForPrefix(c.prefix) }
func (c *indexCursor) key() []byte { return c.it.Item().Key()[len(c.prefix):] }
func (c *indexCursor) next()       { c.it.Next() }
func (c *indexCursor) close()      { c.it.Close() }

func (c *indexCursor) seek(target []byte) {
	if c.valid() && bytes.Compare(c.key(), target) >= 0 {
		return
	}
	c.buf = append(append(c.buf[:0], c.prefix...), target...)
	c.it.Seek(c.buf)
}

// unionCursor yields every suffix found in any child once: the tag
// overlap rule.
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

func (u *unionCursor) valid() bool { return u.cur >= 0 }
func (u *unionCursor) key() []byte { return u.children[u.cur].key() }

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

func (u *unionCursor) seek(target []byte) {
	for _, c := range u.children {
		c.seek(target)
	}
	u.settle()
}

func (u *unionCursor) close() {
	for _, c := range u.children {
		c.close()
	}
}

// intersectCursor yields the suffixes found in every child (leapfrog
// join): the graph-node subset rule, and nodes ∩ tag union.
type intersectCursor struct {
	children []cursor
	ok       bool
	buf      []byte // the highest key seen while leapfrogging
}

func newIntersectCursor(children []cursor) *intersectCursor {
	x := &intersectCursor{children: children}
	x.settle()
	return x
}

// settle seeks every child to the highest key among them until all agree
// or one runs out. Each seek skips entries that cannot be in the answer.
func (x *intersectCursor) settle() {
	for {
		x.buf = x.buf[:0]
		for _, c := range x.children {
			if !c.valid() {
				x.ok = false
				return
			}
			if k := c.key(); bytes.Compare(k, x.buf) > 0 {
				x.buf = append(x.buf[:0], k...)
			}
		}
		agree := true
		for _, c := range x.children {
			if !bytes.Equal(c.key(), x.buf) {
				agree = false
				c.seek(x.buf)
				if !c.valid() {
					x.ok = false
					return
				}
			}
		}
		if agree {
			x.ok = true
			return
		}
	}
}

func (x *intersectCursor) valid() bool { return x.ok }
func (x *intersectCursor) key() []byte { return x.children[0].key() }

func (x *intersectCursor) next() {
	x.children[0].next()
	x.settle()
}

func (x *intersectCursor) seek(target []byte) {
	x.children[0].seek(target)
	x.settle()
}

func (x *intersectCursor) close() {
	for _, c := range x.children {
		c.close()
	}
}
