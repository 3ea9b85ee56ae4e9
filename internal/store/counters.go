package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Counters kept in the store (issue 12: opening a store of a million
// medallions counted every m/ key and every index entry, 2-5 s, and
// summed every session record).
//
// What Count, the query planner (listSizes) and EpisodeTotals need is kept
// under two more prefixes:
//
//	c/base                  → the counts as of the last fold
//	c/d/<seq u64 BE>        → what one committed transaction changed
//
// Every transaction that adds or removes a medallion or an index entry, or
// changes a session record's totals, writes its change as a new c/d/ key
// (putCounts) beside its other writes. Writers never read these keys, so
// they never conflict over them the way a shared counter read and
// rewritten by every transaction would. Open reads c/base and the c/d/
// keys; a fold (at Open, at Close and once a minute after writes) adds the
// c/d/ keys into c/base and deletes them, in one transaction that reads
// only keys no writer touches. The counts on disk are thus exact after a
// kill -9 too: a change is committed with the data it counts, and a fold
// is all or nothing. A store without c/base (written by an older build) is
// counted key by key once, at its first Open.
const (
	prefixCounts     = "c/"
	countsBaseKey    = "c/base"
	prefixCountDelta = "c/d/"
	countsFormat     = 0x01
	// foldChunk bounds the c/d/ keys one fold transaction deletes.
	foldChunk = 4096
)

// counts are the store's counters, or a change to them.
type counts struct {
	medallions                      int64
	sessions, buffered, checkpoints int64
	// lists counts the entries of each index list, by index prefix.
	lists map[string]int64
}

// addMedallion counts m's index entries (and, when whole, the medallion)
// sign times: +1 when it is written, -1 when it is replaced.
func (c *counts) addMedallion(m *medallion.Medallion, sign int64, whole bool) {
	if whole {
		c.medallions += sign
	}
	if c.lists == nil {
		c.lists = make(map[string]int64)
	}
	for _, n := range m.Scope.GraphNodes {
		c.list(string(indexPrefix(prefixNode, n)), sign)
	}
	for _, t := range m.Scope.Tags {
		c.list(string(indexPrefix(prefixTag, t)), sign)
	}
}

func (c *counts) list(prefix string, delta int64) {
	if c.lists[prefix] += delta; c.lists[prefix] == 0 {
		delete(c.lists, prefix)
	}
}

func (c *counts) add(d *counts) {
	c.medallions += d.medallions
	c.sessions += d.sessions
	c.buffered += d.buffered
	c.checkpoints += d.checkpoints
	if len(d.lists) > 0 && c.lists == nil {
		c.lists = make(map[string]int64, len(d.lists))
	}
	for k, v := range d.lists {
		c.list(k, v)
	}
}

func (c *counts) zero() bool {
	return c.medallions == 0 && c.sessions == 0 && c.buffered == 0 && c.checkpoints == 0 && len(c.lists) == 0
}

// encode is the value of a c/ key: a format byte, the four totals
// (varint), the number of lists (uvarint), then per list its prefix
// (uvarint length, bytes) and count (varint).
func (c *counts) encode() []byte {
	v := []byte{countsFormat}
	for _, n := range []int64{c.medallions, c.sessions, c.buffered, c.checkpoints} {
		v = binary.AppendVarint(v, n)
	}
	v = binary.AppendUvarint(v, uint64(len(c.lists)))
	for k, n := range c.lists {
		v = binary.AppendUvarint(v, uint64(len(k)))
		v = append(v, k...)
		v = binary.AppendVarint(v, n)
	}
	return v
}

func decodeCounts(v []byte) (counts, error) {
	var c counts
	if len(v) == 0 || v[0] != countsFormat {
		return c, errors.New("unknown counts format")
	}
	d := bytes.NewReader(v[1:])
	var err error
	for _, p := range []*int64{&c.medallions, &c.sessions, &c.buffered, &c.checkpoints} {
		if *p, err = binary.ReadVarint(d); err != nil {
			return c, fmt.Errorf("counts: %w", err)
		}
	}
	n, err := binary.ReadUvarint(d)
	if err != nil || n > uint64(d.Len()) {
		return c, fmt.Errorf("counts: bad list count")
	}
	c.lists = make(map[string]int64, n)
	for range n {
		l, err := binary.ReadUvarint(d)
		if err != nil || l > uint64(d.Len()) {
			return c, fmt.Errorf("counts: bad list name")
		}
		name := make([]byte, l)
		_, _ = d.Read(name)
		if c.lists[string(name)], err = binary.ReadVarint(d); err != nil {
			return c, fmt.Errorf("counts: %w", err)
		}
	}
	return c, nil
}

// counters is the in-memory side: the totals the store answers from, and
// the sequence of c/d/ keys.
type counters struct {
	medallions atomic.Int64
	sizes      listSizes
	episodes   episodeTotals
	seq        atomic.Uint64 // the last c/d/ sequence number used
	folded     atomic.Uint64 // seq as of the last fold started
	foldMu     sync.Mutex    // one fold at a time
}

// put writes d as a c/d/ key in txn; nothing when d changes nothing.
func (cs *counters) put(txn *badger.Txn, d *counts) error {
	if d.zero() {
		return nil
	}
	key := binary.BigEndian.AppendUint64([]byte(prefixCountDelta), cs.seq.Add(1))
	return txn.Set(key, d.encode())
}

// committed applies d once its transaction has committed.
func (cs *counters) committed(d *counts) {
	cs.medallions.Add(d.medallions)
	cs.sizes.addAll(d.lists)
	cs.episodes.add(totalsDelta{sessions: int(d.sessions), buffered: d.buffered, checkpoints: d.checkpoints})
}

// load reads the stored counts into memory: c/base plus the c/d/ keys, or,
// when there is no c/base, a count of every key (the first Open of a store
// an older build wrote). It reports whether a fold is due.
func (cs *counters) load(db *badger.DB) (foldDue bool, err error) {
	var total counts
	err = db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(countsBaseKey))
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			foldDue = true
			return countEverything(txn, &total)
		case err != nil:
			return err
		}
		if err := item.Value(func(v []byte) (err error) { total, err = decodeCounts(v); return err }); err != nil {
			return fmt.Errorf("%s: %w", countsBaseKey, err)
		}
		return eachCountDelta(txn, 0, func(seq uint64, d *counts) {
			total.add(d)
			cs.seq.Store(max(cs.seq.Load(), seq))
			foldDue = true
		})
	})
	if err != nil {
		return false, fmt.Errorf("load counters: %w", err)
	}
	cs.medallions.Store(total.medallions)
	cs.sizes.set(total.lists)
	cs.episodes.set(totalsDelta{sessions: int(total.sessions), buffered: total.buffered, checkpoints: total.checkpoints})
	return foldDue, nil
}

// eachCountDelta calls fn with up to limit c/d/ keys (all when limit is 0),
// oldest first.
func eachCountDelta(txn *badger.Txn, limit int, fn func(seq uint64, d *counts)) error {
	prefix := []byte(prefixCountDelta)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true})
	defer it.Close()
	n := 0
	for it.Seek(prefix); it.ValidForPrefix(prefix) && (limit == 0 || n < limit); it.Next() {
		item := it.Item()
		if len(item.Key()) != len(prefix)+8 {
			return fmt.Errorf("bad counter key %q", item.Key())
		}
		var d counts
		if err := item.Value(func(v []byte) (err error) { d, err = decodeCounts(v); return err }); err != nil {
			return fmt.Errorf("%q: %w", item.Key(), err)
		}
		fn(binary.BigEndian.Uint64(item.Key()[len(prefix):]), &d)
		n++
	}
	return nil
}

// fold adds the c/d/ keys into c/base and deletes them, foldChunk at a
// time. Without c/base (an older build's store) it writes the counts in
// memory as c/base and drops every c/d/ key: load counted every key, and
// the store was not written since (fold runs in Open before any write).
func (cs *counters) fold(db *badger.DB, fresh bool) error {
	cs.foldMu.Lock()
	defer cs.foldMu.Unlock()
	cs.folded.Store(cs.seq.Load())
	if fresh {
		var base counts
		base.medallions = cs.medallions.Load()
		base.lists = cs.sizes.snapshot()
		s, bu, ch := cs.episodes.get()
		base.sessions, base.buffered, base.checkpoints = int64(s), bu, ch
		if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(countsBaseKey), base.encode()) }); err != nil {
			return fmt.Errorf("fold counters: %w", err)
		}
	}
	for {
		n := 0
		err := db.Update(func(txn *badger.Txn) error {
			n = 0
			var base counts
			item, err := txn.Get([]byte(countsBaseKey))
			if err != nil {
				return err
			}
			if err := item.Value(func(v []byte) (err error) { base, err = decodeCounts(v); return err }); err != nil {
				return err
			}
			var keys [][]byte
			err = eachCountDelta(txn, foldChunk, func(seq uint64, d *counts) {
				if !fresh {
					base.add(d)
				}
				keys = append(keys, binary.BigEndian.AppendUint64([]byte(prefixCountDelta), seq))
			})
			if err != nil || len(keys) == 0 {
				return err
			}
			n = len(keys)
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return txn.Set([]byte(countsBaseKey), base.encode())
		})
		if err != nil {
			return fmt.Errorf("fold counters: %w", err)
		}
		if n < foldChunk {
			return nil
		}
	}
}

// countEverything counts the m/ keys, the index lists and the session
// records' totals key by key: how a store without c/base is counted.
func countEverything(txn *badger.Txn, c *counts) error {
	prefix := []byte(prefixLatest)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		c.medallions++
	}
	it.Close()
	c.lists = countLists(txn)
	t, err := sumSessions(txn)
	c.sessions, c.buffered, c.checkpoints = int64(t.sessions), t.buffered, t.checkpoints
	return err
}
