package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Export and Import move medallions, every version of each with its
// status and evidence, between stores: transcripts are the source of truth
// for events, medallions are what a store holds that nothing else does.

// Export calls fn with every stored version of every medallion: by id,
// oldest version first, as stored (timestamps and versions unchanged),
// each rebuilt whole where it is stored as a delta. It reads one
// snapshot, so a concurrent update is either in it whole or not at all.
func (b *Badger) Export(ctx context.Context, fn func(*medallion.Medallion) error) error {
	return b.exportView(ctx, func(txn *badger.Txn) error { return b.eachVersion(ctx, txn, fn) })
}

// exportView runs read, an export's reading of the store, in one snapshot,
// once no other pass over the store (a reclaim, a collector pass) runs.
func (b *Badger) exportView(ctx context.Context, read func(*badger.Txn) error) error {
	done, err := b.waitPass(ctx)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer done()
	if err := b.begin(ctx); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer b.mu.RUnlock()
	if err := b.db.View(read); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// ExportJSON is Export for a writer of JSON Lines: it calls fn with each
// version as the line json.Encoder writes for the medallion Export hands
// out (the JSON and a newline), the same bytes, written straight from the
// stored encoding without decoding it into a medallion (AppendJSON):
// through Export and encoding/json, the daemon's automatic export took
// 1.7-1.9 times the CPU (BenchmarkExport in internal/daemon). line is
// only valid until fn returns. It returns the ExportState of the snapshot
// it read.
func (b *Badger) ExportJSON(ctx context.Context, fn func(line []byte) error) (ExportState, error) {
	var line []byte
	var state ExportState
	err := b.exportView(ctx, func(txn *badger.Txn) error {
		var err error
		if state, err = exportState(ctx, txn); err != nil {
			return err
		}
		return b.eachWhole(ctx, txn, func(id []byte, version int, whole []byte) error {
			var err error
			if line, err = appendJSONLine(line[:0], whole); err != nil {
				return fmt.Errorf("decode %s: %w", versionKey(string(id), version), err)
			}
			return fn(line)
		})
	})
	return state, err
}

// ExportState tells two exports apart without writing them: what an
// export holds changed between two reads of the store exactly when their
// states differ, or the store is another one (which the caller tells
// apart). Versions counts the stored version records; LastCommit is
// the highest Badger commit timestamp among them. Every write of a record
// (a new version, an old one rewritten as a delta, an import) commits it
// with a timestamp above every earlier one, also across restarts (Badger
// starts from the highest one it holds), so it raises LastCommit; a
// record removed without one written lowers Versions. A state changes for
// a write that leaves the export as it was (a record rewritten with the
// same content), never the other way round.
type ExportState struct {
	Versions   int64  `json:"versions"`
	LastCommit uint64 `json:"last_commit"`
}

// ExportState reads the state an export would have now: the version
// records' keys, not their values (a small part of an export's reading).
func (b *Badger) ExportState(ctx context.Context) (ExportState, error) {
	var state ExportState
	err := b.exportView(ctx, func(txn *badger.Txn) error {
		var err error
		state, err = exportState(ctx, txn)
		return err
	})
	return state, err
}

// exportState reads the ExportState of txn's snapshot.
func exportState(ctx context.Context, txn *badger.Txn) (ExportState, error) {
	var state ExportState
	prefix := []byte(prefixVersion)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		if state.Versions%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return state, err
			}
		}
		state.Versions++
		state.LastCommit = max(state.LastCommit, it.Item().Version())
	}
	return state, nil
}

// appendJSONLine appends to dst what json.Encoder writes for the
// medallion whole (a version record's whole encoding) decodes to.
func appendJSONLine(dst, whole []byte) ([]byte, error) {
	if len(whole) > 0 && isJSONStart(whole[0]) {
		// Stored as JSON by an older build: its lists may be null, which
		// only the decoded medallion says.
		m := new(medallion.Medallion)
		if err := json.Unmarshal(whole, m); err != nil {
			return dst, err
		}
		out, err := json.Marshal(m)
		if err != nil {
			return dst, err
		}
		return append(append(dst, out...), '\n'), nil
	}
	out, err := medallion.AppendJSON(dst, whole)
	if err != nil {
		return dst, err
	}
	return append(out, '\n'), nil
}

// eachVersion calls fn with every stored version in txn: by id, oldest
// version first, each rebuilt whole where it is stored as a delta. Export
// and Reindex read the store with it.
func (b *Badger) eachVersion(ctx context.Context, txn *badger.Txn, fn func(*medallion.Medallion) error) error {
	return b.eachWhole(ctx, txn, func(id []byte, version int, whole []byte) error {
		m := new(medallion.Medallion)
		if err := decodeMedallion(whole, m); err != nil {
			return fmt.Errorf("decode %s: %w", versionKey(string(id), version), err)
		}
		return fn(m)
	})
}

// eachWhole calls fn with the whole encoding of every stored version in
// txn, with its id and number: by id, oldest version first, each rebuilt
// where it is stored as a delta; whole is only valid until fn returns. Every value read faults its pages of the
// value log in, and nothing else would hand them back before the store's
// next check (up to 30 s): the daemon's first automatic export of a
// 600 MB store left 82 MB of them resident. So it trims them as it goes.
func (b *Badger) eachWhole(ctx context.Context, txn *badger.Txn, fn func(id []byte, version int, whole []byte) error) error {
	// The records of one medallion are collected (deltas are small) and
	// handed out rebuilt when the next id begins.
	var id []byte
	var recs []record
	var r rebuilder
	flush := func() error {
		err := r.all(recs, func(version int, whole []byte, err error) error {
			if err != nil {
				return fmt.Errorf("rebuild %s: %w", versionKey(string(id), version), err)
			}
			return fn(id, version, whole)
		})
		recs = recs[:0]
		return err
	}
	prefix := []byte(prefixVersion)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 16})
	defer it.Close()
	n := 0
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n++; n%trimEvery == 0 {
			b.trimMapped(mappedBudget)
		}
		item := it.Item()
		key := item.Key()
		if len(key) < len(prefix)+1+8 {
			return fmt.Errorf("bad version key %q", key)
		}
		if kid := key[len(prefix) : len(key)-9]; !bytes.Equal(kid, id) {
			if err := flush(); err != nil {
				return err
			}
			id = append(id[:0], kid...)
		}
		raw, err := item.ValueCopy(nil)
		if err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		recs = append(recs, record{version: int(binary.BigEndian.Uint64(key[len(key)-8:])), raw: raw})
	}
	return flush()
}

// trimEvery is how many versions eachVersion reads between two looks at
// the process's mapped memory (trimMapped: one read of /proc/self/statm,
// about 10 µs, then a page-out when above the budget). With it the first
// export of that store (905 versions, 65 MB of JSON) peaks at 52-54 MB
// RSS instead of 131-136.
const trimEvery = 64

// ErrBadImport is wrapped by Import's error when the versions handed to it
// do not make one medallion (mixed ids, missing or misnumbered versions).
var ErrBadImport = errors.New("bad import")

// badImport is an ErrBadImport with its own sentence.
type badImport struct{ msg string }

func (e *badImport) Error() string        { return e.msg }
func (e *badImport) Is(target error) bool { return target == ErrBadImport }

// importChunk is how many versions one Import transaction writes: well
// under Badger's batch limit even for versions kept in the LSM tree.
const importChunk = 256

// Import stores versions, every version of one medallion (1, 2, … n in
// order, one id), as they are: timestamps, status and evidence unchanged,
// version n the latest. It fails with ErrExists when the id is stored
// already (an import never overwrites), and with a
// *medallion.ValidationError naming the version when one is invalid.
func (b *Badger) Import(ctx context.Context, versions []*medallion.Medallion) error {
	if len(versions) == 0 {
		return &badImport{"import: no versions"}
	}
	id := versions[0].Meta.MedallionID
	if err := b.begin(ctx); err != nil {
		return fmt.Errorf("import %s: %w", id, err)
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return fmt.Errorf("import %s: %w", id, err)
	}
	values := make([][]byte, len(versions))
	ends := make([][]int, len(versions))
	clones := make([]*medallion.Medallion, len(versions))
	for i, v := range versions {
		c := v.Clone()
		c.Normalize()
		if c.Meta.MedallionID != id {
			return &badImport{fmt.Sprintf("import %s: version %d belongs to %q", id, i+1, c.Meta.MedallionID)}
		}
		if c.Meta.Version != i+1 {
			return &badImport{fmt.Sprintf("import %s: version %d is numbered %d: every version from 1 on is needed, in order", id, i+1, c.Meta.Version)}
		}
		if err := c.Validate(); err != nil {
			return fmt.Errorf("import %s version %d: %w", id, i+1, err)
		}
		values[i], ends[i] = c.MarshalBinaryUnits()
		clones[i] = c
	}
	// Every version but the latest is stored as the store's own updates
	// leave it: a delta from the next one where that is worth it.
	for i := range len(values) - 1 {
		values[i] = shrink(clones[i], values[i], values[i+1], ends[i+1])
	}
	latest := clones[len(clones)-1]
	index, entry, err := indexEntries(latest)
	if err != nil {
		return fmt.Errorf("import %s: %w", id, err)
	}
	// Versions go first, in chunks, and the m/ key and the index entries
	// last, with the final chunk: until then the medallion does not exist
	// for any reader, and an import cut short by a crash is simply done
	// again (the versions are written over with the same bytes). Up to
	// importChunk versions (every medallion seen so far) this is one
	// transaction; beyond, a Create of the same new id racing the import
	// could leave it the imported versions above its own.
	var delta counts
	defer b.counters.writing()()
	for start := 0; start < len(values); start += importChunk {
		end := min(start+importChunk, len(values))
		last := end == len(values)
		err := b.indexWrite(func(txn *badger.Txn, indexVersion func(prev, cur *medallion.Medallion) error) error {
			if _, err := txn.Get(latestKey(id)); err == nil {
				return ErrExists
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			for i := start; i < end; i++ {
				if err := txn.Set(versionKey(id, i+1), values[i]); err != nil {
					return err
				}
				var prev *medallion.Medallion
				if i > 0 {
					prev = clones[i-1]
				}
				if err := indexVersion(prev, clones[i]); err != nil {
					return err
				}
			}
			if !last {
				return nil
			}
			delta = counts{}
			delta.addMedallion(latest, 1, true)
			if err := b.counters.put(txn, &delta); err != nil {
				return err
			}
			if err := txn.Set(latestKey(id), versionValue(latest.Meta.Version)); err != nil {
				return err
			}
			for _, k := range index {
				if err := txn.Set(k, entry); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			if errors.Is(err, badger.ErrConflict) {
				err = ErrExists // another writer created the id meanwhile
			}
			return fmt.Errorf("import %s: %w", id, err)
		}
	}
	b.counters.committed(&delta)
	return nil
}

// GroupVersions collects consecutive versions of one id, as Export hands
// them out, and calls fn with each medallion's versions sorted by version.
// It is the reading side of an export for Import.
type GroupVersions struct {
	fn  func([]*medallion.Medallion) error
	cur []*medallion.Medallion
}

// NewGroupVersions returns a grouper that calls fn per medallion.
func NewGroupVersions(fn func([]*medallion.Medallion) error) *GroupVersions {
	return &GroupVersions{fn: fn}
}

// Add takes the next version; a new id hands the previous one's versions
// to fn.
func (g *GroupVersions) Add(m *medallion.Medallion) error {
	if len(g.cur) > 0 && g.cur[0].Meta.MedallionID != m.Meta.MedallionID {
		if err := g.Flush(); err != nil {
			return err
		}
	}
	g.cur = append(g.cur, m)
	return nil
}

// Flush hands the versions collected so far to fn.
func (g *GroupVersions) Flush() error {
	if len(g.cur) == 0 {
		return nil
	}
	cur := g.cur
	g.cur = nil
	slices.SortStableFunc(cur, func(a, b *medallion.Medallion) int { return a.Meta.Version - b.Meta.Version })
	return g.fn(cur)
}
