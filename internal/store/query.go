package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
)

// How LatestForScope plans a query.
//
// Every answer is in the list of any requested node, and in the union of
// the requested tags' lists. The planner walks the shortest of these (by
// listSizes) and checks each entry against the whole query using the scope
// copy the entry holds (see the key layout), stopping after limit matches;
// only then are those medallions read. A query thus reads at most the
// shortest list, never every medallion.
//
// The first design intersected the lists with a leapfrog join (Seek each
// list to the highest key among them). On Badger a Seek merges every level
// of the tree and costs several times a Next, and a leapfrog step seeks
// once per list: one node (~200 entries) with one tag (~4,000) over 100k
// medallions took 1.5 ms, against 0.25 ms then, most of it decoding the
// answers' JSON, and 0.14 ms with the binary encoding
// (BenchmarkLatestForScope). Walking the shortest list costs at most one
// Next per entry of that list, which a join cannot beat by much.

// listSizes counts the index entries of every node and tag, keyed by the
// index prefix, so the planner can pick the shortest list. It is loaded
// from the stored counters at Open (counters.go) and kept up to date after
// each commit; a query that runs during a commit may see the count from
// just before it, which only affects which list is walked, never the
// answer.
type listSizes struct {
	mu sync.Mutex
	n  map[string]int64
}

// countLists counts the entries under the node and tag prefixes key by
// key (how a store without stored counters is counted). Keys of one name
// are adjacent, so counting runs avoids a map update per key.
func countLists(txn *badger.Txn) map[string]int64 {
	n := make(map[string]int64)
	for _, kind := range []string{prefixNode, prefixTag} {
		prefix := []byte(kind)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		var run []byte
		var count int64
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			k := it.Item().Key()
			name := k[:bytes.IndexByte(k[len(prefix):], sep)+len(prefix)+1]
			if !bytes.Equal(name, run) {
				if count > 0 {
					n[string(run)] = count
				}
				run, count = append(run[:0], name...), 0
			}
			count++
		}
		if count > 0 {
			n[string(run)] = count
		}
		it.Close()
	}
	return n
}

// set replaces every size.
func (l *listSizes) set(n map[string]int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n = make(map[string]int64, len(n))
	for k, v := range n {
		if v > 0 {
			l.n[k] = v
		}
	}
}

// addAll adds a committed transaction's changes, by index prefix.
func (l *listSizes) addAll(d map[string]int64) {
	if len(d) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, delta := range d {
		if l.n[k] += delta; l.n[k] <= 0 {
			delete(l.n, k)
		}
	}
}

// snapshot copies every size.
func (l *listSizes) snapshot() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int64, len(l.n))
	for k, v := range l.n {
		out[k] = v
	}
	return out
}

func (l *listSizes) get(prefix []byte) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[string(prefix)]
}

// plan is how one query runs: the lists to walk (merged when several) and
// the rule every entry is checked against.
type plan struct {
	walk      [][]byte // index prefixes
	nodes     []string // all required
	tags      []string // any required; none means any tags
	nodeNeeds [][]byte // scopeNeedle of each node
	tagNeeds  [][]byte // scopeNeedle of each tag
}

func (b *Badger) plan(nodes, tags []string) plan {
	p := plan{nodes: nodes, tags: tags}
	for _, n := range nodes {
		p.nodeNeeds = append(p.nodeNeeds, scopeNeedle('n', n))
	}
	for _, t := range tags {
		p.tagNeeds = append(p.tagNeeds, scopeNeedle('t', t))
	}
	var shortest []byte
	nodeCost := int64(-1)
	for _, n := range nodes {
		prefix := indexPrefix(prefixNode, n)
		if c := b.counters.sizes.get(prefix); nodeCost < 0 || c < nodeCost {
			shortest, nodeCost = prefix, c
		}
	}
	var tagCost int64
	var tagPrefixes [][]byte
	for _, t := range tags {
		prefix := indexPrefix(prefixTag, t)
		tagCost += b.counters.sizes.get(prefix)
		tagPrefixes = append(tagPrefixes, prefix)
	}
	if len(nodes) > 0 && (len(tags) == 0 || nodeCost <= tagCost) {
		p.walk = [][]byte{shortest}
	} else {
		p.walk = tagPrefixes
	}
	return p
}

// matchValue checks a scope copy from an index entry against the query.
func (p *plan) matchValue(v []byte) bool {
	for _, n := range p.nodeNeeds {
		if !bytes.Contains(v, n) {
			return false
		}
	}
	if len(p.tagNeeds) == 0 {
		return true
	}
	for _, t := range p.tagNeeds {
		if bytes.Contains(v, t) {
			return true
		}
	}
	return false
}

// matchScope checks a stored scope against the query, for entries whose
// scope was too big to copy.
func (p *plan) matchScope(s medallion.Scope) bool {
	for _, n := range p.nodes {
		if !slices.Contains(s.GraphNodes, n) {
			return false
		}
	}
	if len(p.tags) == 0 {
		return true
	}
	for _, t := range p.tags {
		if slices.Contains(s.Tags, t) {
			return true
		}
	}
	return false
}

// LatestForScope answers from the node and tag indexes (see plan): it
// walks the shortest requested list, newest first, checks each entry's
// scope copy, and stops after limit matches.
func (b *Badger) LatestForScope(ctx context.Context, scope medallion.Scope, limit int) ([]*medallion.Medallion, error) {
	return b.latestForScope(ctx, scope, limit, decodeMedallion)
}

// LatestForScopeWithoutEvidence is LatestForScope with every answer's
// Evidence left nil, for a reader that does not use it: the save file a
// load renders shows none, and since the store packs evidence (binaryV5)
// its event ids are most of a decode's work.
func (b *Badger) LatestForScopeWithoutEvidence(ctx context.Context, scope medallion.Scope, limit int) ([]*medallion.Medallion, error) {
	return b.latestForScope(ctx, scope, limit, decodeWithoutEvidence)
}

func (b *Badger) latestForScope(ctx context.Context, scope medallion.Scope, limit int, decode decoder) ([]*medallion.Medallion, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("latest for scope: %w", err)
	}
	defer b.mu.RUnlock()
	nodes, droppedNode := queryNames(scope.GraphNodes)
	tags, _ := queryNames(scope.Tags)
	// A dropped node can match nothing, so neither can the whole query;
	// requested tags that were all dropped likewise, since an empty tag
	// list would otherwise mean "any tags".
	if limit <= 0 || droppedNode || (len(scope.Tags) > 0 && len(tags) == 0) || (len(nodes) == 0 && len(tags) == 0) {
		return []*medallion.Medallion{}, nil
	}
	p := b.plan(nodes, tags)
	var hits []hit
	err := b.db.View(func(txn *badger.Txn) error {
		var cur cursor
		if len(p.walk) == 1 {
			cur = newIndexCursor(txn, p.walk[0])
		} else {
			lists := make([]cursor, len(p.walk))
			for i, prefix := range p.walk {
				lists[i] = newIndexCursor(txn, prefix)
			}
			cur = newUnionCursor(lists)
		}
		defer cur.close()

		// The hits' version keys share one buffer, and their medallions
		// one array: a query's allocations are mostly Badger's and the
		// decoding's, not one key, id and struct per answer.
		hits = make([]hit, 0, min(limit, 64))
		keys := make([]byte, 0, min(limit, 64)*(len(prefixVersion)+32+1+8))
		for ; cur.valid() && len(hits) < limit; cur.next() {
			var version int
			var match, hasScope bool
			err := cur.item().Value(func(v []byte) error {
				var copied []byte
				var err error
				version, copied, hasScope, err = parseEntry(v)
				match = hasScope && p.matchValue(copied)
				return err
			})
			if err != nil {
				return fmt.Errorf("index entry of %s: %w", idFromSuffix(cur.key()), err)
			}
			if !match && hasScope {
				continue
			}
			start := len(keys)
			keys = appendVersionKey(keys, cur.key()[orderSize:], version)
			h := hit{key: keys[start:len(keys):len(keys)]}
			if !hasScope {
				h.m = new(medallion.Medallion)
				if err := indexed(txn, h.key, h.m, decode); err != nil {
					return err
				}
				if !p.matchScope(h.m.Scope) {
					keys = keys[:start]
					continue
				}
			}
			hits = append(hits, h)
		}
		// Reading the answers waits until the limit is reached: finding
		// and reading a medallion costs about 3 µs and decoding it 1 µs
		// (15 µs when versions were stored as JSON). Decoding the hits on
		// several goroutines was tried, with JSON, and measured slower:
		// waking another thread costs more than the 10 decodes it would
		// share.
		ms := make([]medallion.Medallion, len(hits))
		for i := range hits {
			if hits[i].m == nil {
				hits[i].m = &ms[i]
				if err := indexed(txn, hits[i].key, hits[i].m, decode); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("latest for scope: %w", err)
	}
	out := make([]*medallion.Medallion, len(hits))
	for i, h := range hits {
		out[i] = h.m
	}
	return out, nil
}

// hit is one medallion in a query's answer: the key of the version its
// index entry names, and once read, the medallion.
type hit struct {
	key []byte
	m   *medallion.Medallion
}

// indexed reads into m the version of a medallion an index entry names,
// by its version key.
func indexed(txn *badger.Txn, key []byte, m *medallion.Medallion, decode decoder) error {
	found, err := readMedallion(txn, key, m, decode)
	if err == nil && !found {
		id, version := parseVersionKey(key)
		err = indexCorrupt(id, version)
	}
	return err
}

// indexCorrupt reports an index entry naming a version that is not
// stored. Index entries and versions are written in one transaction, so
// this is corruption, not a race.
func indexCorrupt(id string, version int) error {
	return fmt.Errorf("index names version %d of %s but it is not stored", version, id)
}
