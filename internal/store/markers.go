package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	badger "github.com/dgraph-io/badger/v4"
)

// markerFilter lets Ingest skip the lookup of a dedupe marker (e/, see the
// key layout) that was never stored. In a backfill nearly every event is
// new, and every lookup missed after searching the memtables and the
// levels: 0.14-0.17 of the 2.4 CPU-s of the 200 MB backfill. The filter is
// a Bloom filter of the markers' hashes, so it says "absent" only of a
// marker that is absent; a wrong "maybe" costs the lookup, as before.
//
// It stays exact on the "absent" side by three rules:
//   - It answers nothing (every marker is looked up) until a key-only scan
//     of e/ has added every marker stored before the scan began: at Open
//     when markers exist (markerLoop, in the background), and again each
//     time it grows. A store without markers needs no scan.
//   - Ingest adds a marker's hash before it writes the marker, so before
//     its commit. The filter is only ever added to: a transaction that
//     fails or is retried leaves bits of markers never stored, which cost
//     a lookup each, and an expired marker keeps its bits alike.
//   - Ingest calls run one at a time, from their first lookup to their
//     commit (mu). A skipped Get is also a read Badger does not track, so
//     two concurrent transactions storing one new event would both commit
//     it (Badger only finds conflicts between a read and a later commit).
//     One at a time, the later one sees the earlier one's bits and looks
//     up. The daemon has one ingesting writer anyway (package ingest,
//     dispatch), so this costs it nothing.
type markerFilter struct {
	// mu is held by an Ingest from its first lookup to its commit, and to
	// install or drop a filter: a scan starts its snapshot holding it, so
	// every marker is either in the snapshot or added by an Ingest that
	// started after next was installed.
	mu sync.Mutex
	// cur answers lookups; nil until the first scan ends.
	cur *bloom
	// next is the filter a scan fills, bigger than cur; Ingest adds to it
	// too while the scan runs.
	next *bloom
	// rebuild wakes markerLoop (capacity 1).
	rebuild chan struct{}
	// gets and skips count the lookups made and skipped, for tests and
	// figures.
	gets, skips int64
}

// Sizes of the filter. A Bloom filter of b bits per marker with k probes
// says "maybe" of an absent marker with probability (1-e^(-k/b))^k; with
// k = 6 that is 2.2% at 8 bits, 0.4% at 12 and 0.09% at 16. A filter is
// built with 12 to 24 bits per marker it holds (1.5 to 3 bytes; the power
// of two above 12 bits) and rebuilt twice as big when it falls below 8
// (1 byte): a wrong "maybe" costs one lookup, so a few percent of them
// are not worth more memory, and the 16-byte hash already computed gives
// the probes (no new hash). 200k markers (a 1 GB backfill) take 256 KiB,
// with the old filter's 128 KiB beside it while it was rebuilt; a map of
// their hashes would take 16 bytes a marker plus the map's overhead, 4 to
// 8 MB.
const (
	markerProbes = 6
	// markerBuildBits and markerFullBits are the bits per marker a filter
	// is built for and is rebuilt below.
	markerBuildBits = 12
	markerFullBits  = 8
)

// minMarkerBits is the smallest filter, 128 KiB: it holds 131k markers
// before its first rebuild, about 600 MB of backfill. A variable so that a
// test can make the filter grow with a few hundred markers.
var minMarkerBits uint64 = 1 << 20

// bloom is a Bloom filter of marker hashes. Its bits are set and read
// atomically: a scan and an Ingest add to the filter being built at once.
type bloom struct {
	bits []uint64
	mask uint64 // len(bits)*64 - 1: the size is a power of two
	n    atomic.Int64
}

// newBloom makes a filter sized for n markers.
func newBloom(n int64) *bloom {
	m := minMarkerBits
	for m < uint64(n)*markerBuildBits {
		m <<= 1
	}
	return &bloom{bits: make([]uint64, m/64), mask: m - 1}
}

// probes calls fn with the k bit positions of a marker hash: double
// hashing over its two halves, already uniform (they are SHA-256). The
// step is odd, so the positions differ in a power-of-two filter.
func (f *bloom) probes(h []byte, fn func(word int, bit uint64) bool) bool {
	h1 := binary.LittleEndian.Uint64(h[:8])
	h2 := binary.LittleEndian.Uint64(h[8:markerHashLen]) | 1
	for i := range uint64(markerProbes) {
		pos := (h1 + i*h2) & f.mask
		if !fn(int(pos>>6), 1<<(pos&63)) {
			return false
		}
	}
	return true
}

func (f *bloom) add(h []byte) {
	f.probes(h, func(w int, bit uint64) bool {
		atomic.OrUint64(&f.bits[w], bit)
		return true
	})
	f.n.Add(1)
}

// mayHold reports false only when h was never added.
func (f *bloom) mayHold(h []byte) bool {
	return f.probes(h, func(w int, bit uint64) bool { return atomic.LoadUint64(&f.bits[w])&bit != 0 })
}

// full reports that the filter holds fewer than markerFullBits a marker.
func (f *bloom) full() bool {
	return uint64(f.n.Load())*markerFullBits > f.mask+1
}

// lock starts an Ingest's lookups and writes of markers.
func (m *markerFilter) lock() { m.mu.Lock() }

// unlock ends them, once the transaction is committed or given up, and
// wakes markerLoop if the filter has to grow.
func (m *markerFilter) unlock() {
	due := m.cur != nil && m.next == nil && m.cur.full()
	m.mu.Unlock()
	if due {
		m.wake()
	}
}

func (m *markerFilter) wake() {
	select {
	case m.rebuild <- struct{}{}:
	default:
	}
}

// mayHold reports whether the marker of hash h may be stored, so that it
// must be looked up. The caller holds mu.
func (m *markerFilter) mayHold(h []byte) bool {
	if m.cur != nil && !m.cur.mayHold(h) {
		m.skips++
		return false
	}
	m.gets++
	return true
}

// add records the marker of hash h, about to be written. The caller holds
// mu.
func (m *markerFilter) add(h []byte) {
	if m.cur != nil {
		m.cur.add(h)
	}
	if m.next != nil {
		m.next.add(h)
	}
}

// startMarkers makes the filter of a store just opened: answering at once
// when no marker is stored, otherwise after markerLoop's first scan.
func (b *Badger) startMarkers() error {
	b.markers.rebuild = make(chan struct{}, 1)
	var stored bool
	err := b.db.View(func(txn *badger.Txn) error {
		prefix := []byte(prefixMarker)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		it.Seek(prefix)
		stored = it.ValidForPrefix(prefix)
		return nil
	})
	if err != nil {
		return fmt.Errorf("look for dedupe markers: %w", err)
	}
	if stored {
		b.markers.wake()
	} else {
		b.markers.cur = newBloom(0)
	}
	go b.markerLoop()
	return nil
}

// markerLoop builds the filter each time it is woken, until Close.
func (b *Badger) markerLoop() {
	defer close(b.markersDone)
	for {
		select {
		case <-b.stop:
			return
		case <-b.markers.rebuild:
		}
		if err := b.rebuildMarkers(); err != nil {
			b.logger.Warn("build the dedupe filter; events are looked up without it", "error", err)
		}
	}
}

// markerScanHook, when set by a test, runs once a scan has its snapshot
// and before it reads it.
var markerScanHook func()

// errScanStopped ends a scan when the store closes.
var errScanStopped = fmt.Errorf("store closing: %w", errClosed)

// rebuildMarkers fills a new filter, big enough for the markers cur holds
// (see newBloom), with every marker stored, then puts it in cur's place.
// It holds the store open (begin) so that the database is not swapped
// under it, and gives up when Close begins.
func (b *Badger) rebuildMarkers() error {
	if err := b.begin(context.Background()); err != nil {
		return nil // closed
	}
	defer b.mu.RUnlock()
	m := &b.markers
	m.mu.Lock()
	var n int64
	if m.cur != nil {
		n = m.cur.n.Load()
	}
	next := newBloom(n)
	m.next = next
	txn := b.db.NewTransaction(false)
	m.mu.Unlock()
	defer txn.Discard()

	if markerScanHook != nil {
		markerScanHook()
	}
	err := addMarkers(txn, next, b.closing.Load)
	m.mu.Lock()
	m.next = nil
	if err == nil {
		m.cur = next
	}
	due := m.cur != nil && m.cur.full()
	m.mu.Unlock()
	if due {
		m.wake() // at Open, n was unknown
	}
	if errors.Is(err, errScanStopped) {
		return nil
	}
	return err
}

// addMarkers adds every marker txn sees to f, reading keys only; it
// returns errScanStopped once stop reports true. A damaged table makes
// Badger's iterator panic rather than fail (see verifyTables): the scan
// fails then, and the filter it was filling is dropped.
func addMarkers(txn *badger.Txn, f *bloom, stop func() bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("a block cannot be read: %v", r)
		}
	}()
	prefix := []byte(prefixMarker)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	i := 0
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		if i++; i%4096 == 0 && stop() {
			return errScanStopped
		}
		k := it.Item().Key()
		if len(k) != len(prefixMarker)+markerHashLen {
			continue // not ours: the filter only has to hold every marker
		}
		f.add(k[len(prefixMarker):])
	}
	return nil
}
