package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

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
//	c/base                  → the counts up to a sequence number
//	c/d/<seq u64 BE>        → what one committed transaction changed
//	c/dropped               → u64 BE: every c/d/ key up to it is deleted
//
// Every transaction that adds or removes a medallion or an index entry, or
// changes a session record's totals, writes its change as a new c/d/ key
// (counters.put) beside its other writes. Writers never read these keys,
// so they never conflict over them the way a shared counter read and
// rewritten by every transaction would. Open reads c/base and the c/d/
// keys after its sequence number. A fold (at Open, at Close, and after
// foldEvery changes or foldInterval) sums the changes into a new c/base,
// one key written in one transaction, and then deletes the c/d/ keys it
// covers; a crash before they are gone leaves keys the next load skips.
// The counts on disk are thus exact after a kill -9 too: a change is
// committed with the data it counts. A store without c/base (written by
// an older build) is counted key by key once, at its first Open.
const (
	countsBaseKey    = "c/base"
	countsDroppedKey = "c/dropped"
	prefixCountDelta = "c/d/"
	countsFormat     = 0x01
	// foldChunk bounds the c/d/ keys one cleanup transaction deletes.
	foldChunk = 4096
	// foldEvery changes written start a fold; the next Open after a crash
	// then reads at most about this many (a few milliseconds).
	foldEvery = 10_000
)

// foldInterval is how often changes written since the last fold are
// folded when fewer than foldEvery were written.
const foldInterval = 10 * time.Minute

// counts are the store's counters, or a change to them.
type counts struct {
	// upto, in c/base only, is the last c/d/ sequence number it covers.
	upto                            uint64
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

// encode is the value of a c/ key: a format byte, upto (uvarint), the four totals
// (varint), the number of lists (uvarint), then per list its prefix
// (uvarint length, bytes) and count (varint).
func (c *counts) encode() []byte {
	v := binary.AppendUvarint([]byte{countsFormat}, c.upto)
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
	if c.upto, err = binary.ReadUvarint(d); err != nil {
		return c, fmt.Errorf("counts: %w", err)
	}
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
	if d.Len() != 0 {
		return c, fmt.Errorf("counts: %d bytes after the last list", d.Len())
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
	folded     atomic.Uint64 // seq as of the last fold
	foldMu     sync.Mutex    // one fold at a time; guards dropped
	dropped    uint64        // c/dropped
	due        chan struct{} // signalled when foldEvery changes await a fold
	// inflight is held (read) by every write transaction that may store a
	// change, from before it takes a sequence number until it committed
	// or failed. A fold takes it (write) to learn a number below which no
	// transaction is still open: changes commit in another order than
	// their numbers, and a fold that covered a number still to commit
	// would lose that change.
	inflight sync.RWMutex
}

// writing marks a write transaction in flight (see inflight); call the
// function it returns once the transaction has committed or failed.
func (cs *counters) writing() func() {
	cs.inflight.RLock()
	return cs.inflight.RUnlock
}

// put writes d as a c/d/ key in txn; nothing when d changes nothing.
func (cs *counters) put(txn *badger.Txn, d *counts) error {
	if d.zero() {
		return nil
	}
	seq := cs.seq.Add(1)
	if seq-cs.folded.Load() == foldEvery {
		select {
		case cs.due <- struct{}{}:
		default:
		}
	}
	return txn.Set(countDeltaKey(seq), d.encode())
}

func countDeltaKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prefixCountDelta), seq)
}

// committed applies d once its transaction has committed.
func (cs *counters) committed(d *counts) {
	cs.medallions.Add(d.medallions)
	cs.sizes.addAll(d.lists)
	cs.episodes.add(totalsDelta{sessions: int(d.sessions), buffered: d.buffered, checkpoints: d.checkpoints})
}

// load reads the stored counts into memory: c/base plus the c/d/ keys
// after it, or, when there is no c/base, a count of every key (the first
// Open of a store an older build wrote). It reports whether a fold is due.
func (cs *counters) load(db *badger.DB) (foldDue bool, err error) {
	cs.due = make(chan struct{}, 1)
	var total counts
	err = db.View(func(txn *badger.Txn) error {
		dropped, err := readDropped(txn)
		if err != nil {
			return err
		}
		cs.dropped = dropped
		base, ok, err := readBase(txn)
		if err != nil {
			return err
		}
		if !ok {
			foldDue = true
			if err := countEverything(txn, &total); err != nil {
				return err
			}
			// Changes stored beside no c/base are covered by the count.
			// New ones are numbered after every number used, deleted
			// ones included: reads start after c/base's number.
			total.upto = dropped
			return eachCountDelta(txn, dropped+1, func(seq uint64, _ *counts) { total.upto = seq })
		}
		total = base
		foldDue = dropped < base.upto // a fold's cleanup cut short
		return eachCountDelta(txn, base.upto+1, func(seq uint64, d *counts) {
			foldDue = true
			total.add(d)
			total.upto = seq
		})
	})
	if err != nil {
		return false, fmt.Errorf("load counters: %w", err)
	}
	cs.seq.Store(total.upto) // new changes come after every stored one
	cs.medallions.Store(total.medallions)
	cs.sizes.set(total.lists)
	cs.episodes.set(totalsDelta{sessions: int(total.sessions), buffered: total.buffered, checkpoints: total.checkpoints})
	return foldDue, nil
}

// readBase reads c/base; ok is false when there is none or it cannot be
// decoded: counters are derived data, counted again rather than a reason
// to refuse the store.
func readBase(txn *badger.Txn) (base counts, ok bool, err error) {
	item, err := txn.Get([]byte(countsBaseKey))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return counts{}, false, nil
	}
	if err != nil {
		return counts{}, false, err
	}
	if err := item.Value(func(v []byte) (err error) { base, err = decodeCounts(v); return err }); err != nil {
		return counts{}, false, nil
	}
	return base, true, nil
}

// readDropped reads c/dropped: every c/d/ key up to it has been deleted.
// Reads of c/d/ keys start after it, never walking the deleted keys,
// which Badger keeps as tombstones until a compaction drops them (a
// million of them made every Open 130 ms slower).
func readDropped(txn *badger.Txn) (uint64, error) {
	item, err := txn.Get([]byte(countsDroppedKey))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n uint64
	err = item.Value(func(v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("bad %s value %x", countsDroppedKey, v)
		}
		n = binary.BigEndian.Uint64(v)
		return nil
	})
	return n, err
}

// eachCountDelta calls fn with the change of every c/d/ key from sequence
// number from on, oldest first.
func eachCountDelta(txn *badger.Txn, from uint64, fn func(seq uint64, d *counts)) error {
	prefix := []byte(prefixCountDelta)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true})
	defer it.Close()
	for it.Seek(countDeltaKey(from)); it.ValidForPrefix(prefix); it.Next() {
		item := it.Item()
		if len(item.Key()) != len(prefix)+8 {
			return fmt.Errorf("bad counter key %q", item.Key())
		}
		var d counts
		if err := item.Value(func(v []byte) (err error) { d, err = decodeCounts(v); return err }); err != nil {
			return fmt.Errorf("%q: %w", item.Key(), err)
		}
		fn(binary.BigEndian.Uint64(item.Key()[len(prefix):]), &d)
	}
	return nil
}

// fold writes the counts as a new c/base and deletes the c/d/ keys it
// covers. atRest says no write is in flight (Open before its first write,
// Close after its last): the counts in memory are then the store's and are
// written as they are, also over a store without c/base. Otherwise the new
// c/base is c/base plus the stored changes, read in one snapshot.
func (cs *counters) fold(db *badger.DB, atRest bool) error {
	cs.foldMu.Lock()
	defer cs.foldMu.Unlock()
	var base counts
	if atRest {
		base.upto = cs.seq.Load()
		base.medallions = cs.medallions.Load()
		base.lists = cs.sizes.snapshot()
		s, bu, ch := cs.episodes.get()
		base.sessions, base.buffered, base.checkpoints = int64(s), bu, ch
	} else {
		cs.inflight.Lock()
		limit := cs.seq.Load() // every change up to it has committed or failed
		cs.inflight.Unlock()
		missing := false
		err := db.View(func(txn *badger.Txn) error {
			var ok bool
			var err error
			if base, ok, err = readBase(txn); err != nil || !ok {
				// None when opened read-only before it had one: the
				// next Open counts every key.
				missing = true
				return err
			}
			return eachCountDelta(txn, base.upto+1, func(seq uint64, d *counts) {
				if seq <= limit {
					base.add(d)
					base.upto = seq
				}
			})
		})
		if err != nil {
			return fmt.Errorf("fold counters: %w", err)
		}
		if missing {
			return nil
		}
	}
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(countsBaseKey), base.encode()) }); err != nil {
		return fmt.Errorf("fold counters: %w", err)
	}
	cs.folded.Store(base.upto)
	// The changes c/base now covers are garbage, deleted from the oldest
	// on, c/dropped moving with them; a crash meanwhile leaves keys that
	// load skips and the next fold deletes.
	prefix := []byte(prefixCountDelta)
	for cs.dropped < base.upto {
		err := db.Update(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
			defer it.Close()
			last := base.upto
			n := 0
			for it.Seek(countDeltaKey(cs.dropped + 1)); it.ValidForPrefix(prefix); it.Next() {
				seq := binary.BigEndian.Uint64(it.Item().Key()[len(prefix):])
				if seq > base.upto {
					break
				}
				if n == foldChunk {
					last = seq - 1
					break
				}
				if err := txn.Delete(it.Item().KeyCopy(nil)); err != nil {
					return err
				}
				n++
			}
			if err := txn.Set([]byte(countsDroppedKey), binary.BigEndian.AppendUint64(nil, last)); err != nil {
				return err
			}
			cs.dropped = last
			return nil
		})
		if err != nil {
			return fmt.Errorf("fold counters: drop folded changes: %w", err)
		}
	}
	return nil
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
