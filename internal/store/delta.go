package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Old versions are stored as differences (issue 12: a medallion
// checkpointed 10,000 times took 23-42 KB per version, stored whole).
//
// The latest version of a medallion is always stored whole, so reading it
// (Get, LatestForScope) costs what it did. When an update stores version
// N+1, the record of version N is rewritten as a reverse delta: the
// instructions that rebuild N's bytes from N+1's. A version thus costs
// about what changed between it and the next one: a checkpoint that adds
// an evidence entry and rewords a decision stores those two units, a new
// meta, and a few copy instructions for the rest. Every keyframeEvery-th
// version stays whole, and so does a version whose delta would not be
// much smaller, so rebuilding any version reads at most keyframeEvery-1
// deltas, and the store never depends on a long chain: damage to one
// record loses at most the versions below it up to the previous whole one.
//
// A delta record is deltaFormat, the base version (uvarint; always the
// next version), then operations: uvarint n<<1|1 and n literal bytes, or
// uvarint n<<1 and uvarint offset, "copy n bytes of the base from
// offset". The first operation is always a literal holding the version's
// format byte and meta fields, so a history listing reads the meta of a
// delta without its base. deltaFormat is none of the medallion encoding's
// format bytes (0x01-0x05) and cannot begin JSON.
const (
	deltaFormat = 0x10
	// minMatch is the shortest unit looked up in the base to start a
	// copy: a copy instruction costs 2-4 bytes, and short units (counts,
	// empty strings) match all over the base.
	minMatch = 8
)

// keyframeEvery: every 64th version whole made those most of the stored
// bytes (a 26 KB medallion every 64 versions is 400 bytes a version, twice
// a checkpoint's delta); at 256, rebuilding the dearest version applies
// 255 deltas (33 ms for 26 KB, BenchmarkHistory), and only GetVersion of
// an old version pays that. A variable only so that tests reach
// keyframes quickly.
var keyframeEvery = 256

// isDelta reports whether a stored version record is a delta.
func isDelta(v []byte) bool { return len(v) > 0 && v[0] == deltaFormat }

// makeDelta encodes target (a whole encoding, its unit ends from
// MarshalBinaryUnits) as operations over base, the encoding of version
// baseVersion.
func makeDelta(baseVersion int, base []byte, baseEnds []int, target []byte, targetEnds []int) []byte {
	// Units of the base by content, the first place each occurs; the
	// meta (unit 0) is never copied.
	at := make(map[string]int, len(baseEnds))
	for i := 1; i < len(baseEnds); i++ {
		if u := base[baseEnds[i-1]:baseEnds[i]]; len(u) >= minMatch {
			if _, ok := at[string(u)]; !ok {
				at[string(u)] = baseEnds[i-1]
			}
		}
	}
	out := binary.AppendUvarint([]byte{deltaFormat}, uint64(baseVersion))
	// Pending is either a literal, target[litFrom:pos], or a copy,
	// base[copyFrom:copyFrom+copyLen].
	litFrom, copyFrom, copyLen := 0, 0, 0
	flush := func(pos int) {
		switch {
		case copyLen > 0:
			out = binary.AppendUvarint(out, uint64(copyLen)<<1)
			out = binary.AppendUvarint(out, uint64(copyFrom))
		case pos > litFrom:
			out = binary.AppendUvarint(out, uint64(pos-litFrom)<<1|1)
			out = append(out, target[litFrom:pos]...)
		}
		litFrom, copyLen = pos, 0
	}
	pos := targetEnds[0]
	flush(pos) // the meta, always a literal first
	for _, end := range targetEnds[1:] {
		u := target[pos:end]
		next := copyFrom + copyLen
		switch {
		case copyLen > 0 && next+len(u) <= len(base) && bytes.Equal(base[next:next+len(u)], u):
			copyLen += len(u)
		case len(u) >= minMatch && at[string(u)] > 0:
			flush(pos)
			copyFrom, copyLen = at[string(u)], len(u)
		default:
			if copyLen > 0 {
				flush(pos)
			}
		}
		pos = end
		if copyLen > 0 {
			litFrom = pos
		}
	}
	flush(pos)
	return out
}

// parseDelta splits a delta record into its base version and operations.
func parseDelta(v []byte) (base int, ops []byte, err error) {
	b, n := binary.Uvarint(v[1:])
	if n <= 0 || b == 0 || b > 1<<62 {
		return 0, nil, errors.New("bad delta header")
	}
	return int(b), v[1+n:], nil
}

// applyDelta rebuilds a version from its base and a delta's operations,
// into out's memory when it is given (an export rebuilds every version:
// a new buffer for each was most of its allocations).
func applyDelta(out, base, ops []byte) ([]byte, error) {
	if out == nil {
		out = make([]byte, 0, len(base))
	}
	out = out[:0]
	for len(ops) > 0 {
		x, n := binary.Uvarint(ops)
		if n <= 0 {
			return nil, errors.New("bad delta operation")
		}
		ops = ops[n:]
		size := x >> 1
		if x&1 == 1 {
			if size > uint64(len(ops)) {
				return nil, errors.New("delta literal runs past the record")
			}
			out = append(out, ops[:size]...)
			ops = ops[size:]
			continue
		}
		off, n := binary.Uvarint(ops)
		if n <= 0 || off > uint64(len(base)) || size > uint64(len(base))-off {
			return nil, errors.New("delta copies from outside its base")
		}
		ops = ops[n:]
		out = append(out, base[off:off+size]...)
	}
	return out, nil
}

// recordMeta reads the meta of a stored version record of any kind
// without decoding the rest; its strings share nothing with v.
func recordMeta(v []byte) (medallion.Meta, error) {
	switch {
	case isDelta(v):
		_, ops, err := parseDelta(v)
		if err != nil {
			return medallion.Meta{}, err
		}
		x, n := binary.Uvarint(ops)
		if n <= 0 || x&1 == 0 || x>>1 > uint64(len(ops)-n) {
			return medallion.Meta{}, errors.New("delta does not begin with its meta")
		}
		return medallion.UnmarshalBinaryMeta(ops[n : n+int(x>>1)])
	case len(v) > 0 && isJSONStart(v[0]):
		var m struct {
			Meta medallion.Meta `json:"meta"`
		}
		err := json.Unmarshal(v, &m)
		return m.Meta, err
	default:
		return medallion.UnmarshalBinaryMeta(v)
	}
}

// shrink returns the record to store for version prev once next follows
// it: a delta from next when one is worth it, else prev's own record
// (prevRaw, which may be JSON or an older binary format).
func shrink(prev *medallion.Medallion, prevRaw []byte, next []byte, nextEnds []int) []byte {
	if prev.Meta.Version%keyframeEvery == 0 {
		return prevRaw
	}
	enc, ends := prev.MarshalBinaryUnits()
	if !bytes.Equal(enc, prevRaw) {
		// Written by an older build (JSON, an older format byte): its
		// bytes cannot be rebuilt from units of the current encoding.
		return prevRaw
	}
	d := makeDelta(prev.Meta.Version+1, next, nextEnds, enc, ends)
	if len(d) > len(prevRaw)/2 {
		return prevRaw
	}
	return d
}

// versionBytes returns the whole encoding of one version of id, rebuilt
// from the deltas above it when it is stored as one; nil when the version
// is not stored. The records from that version up to the first whole one
// are read in one forward walk (the keys sort by version).
func versionBytes(txn *badger.Txn, id string, version int) ([]byte, error) {
	prefix := versionPrefix(id)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 16})
	defer it.Close()
	var deltas [][]byte
	want := version
	for it.Seek(versionKey(id, version)); it.ValidForPrefix(prefix); it.Next() {
		item := it.Item()
		if v := int(binary.BigEndian.Uint64(item.Key()[len(prefix):])); v != want {
			break
		}
		raw, err := item.ValueCopy(nil)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", item.Key(), err)
		}
		if !isDelta(raw) {
			return rebuildDown(raw, deltas)
		}
		base, ops, err := parseDelta(raw)
		if err != nil || base <= want {
			return nil, fmt.Errorf("version %d of %s: bad delta record (base %d): %v", want, id, base, err)
		}
		deltas = append(deltas, ops)
		want = base
	}
	if want == version {
		return nil, nil
	}
	return nil, fmt.Errorf("version %d of %s, the base of version %d, is not stored", want, id, version)
}

// rebuildDown applies deltas, the lowest version's first, to whole, the
// version above the last of them.
func rebuildDown(whole []byte, deltas [][]byte) ([]byte, error) {
	out := whole
	for i := len(deltas) - 1; i >= 0; i-- {
		var err error
		if out, err = applyDelta(nil, out, deltas[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// record is one stored version record of a medallion.
type record struct {
	version int
	raw     []byte
}

// rebuilder rebuilds the versions of medallions from their records,
// reusing the memory of the versions it handed out before.
type rebuilder struct {
	spare [][]byte
}

// all calls fn with the whole encoding of every version in recs (one
// medallion's records, ascending by version), lowest first, or with the
// error that kept one from being rebuilt; whole is only valid until fn
// returns. Each run of deltas is rebuilt downward from the whole version
// above it, so every delta is applied once and at most one run is held
// in memory.
func (r *rebuilder) all(recs []record, fn func(version int, whole []byte, err error) error) error {
	for i := 0; i < len(recs); {
		j := i
		for j < len(recs) && isDelta(recs[j].raw) {
			j++
		}
		// recs[i:j] are deltas, recs[j] (if any) is whole.
		wholes := make([][]byte, j-i+1)
		errs := make([]error, j-i+1)
		if j < len(recs) {
			wholes[j-i] = recs[j].raw
		} else {
			errs[j-i] = errors.New("no whole version above")
		}
		for k := j - 1; k >= i; k-- {
			above := k - i + 1
			base, ops, err := parseDelta(recs[k].raw)
			switch {
			case err != nil:
			case errs[above] != nil:
				err = fmt.Errorf("its base, version %d: %w", base, errs[above])
			case k+1 >= len(recs) || recs[k+1].version != base:
				err = fmt.Errorf("its base, version %d, is not stored", base)
			default:
				var buf []byte
				if n := len(r.spare); n > 0 {
					buf, r.spare = r.spare[n-1], r.spare[:n-1]
				}
				wholes[k-i], err = applyDelta(buf, wholes[above], ops)
			}
			errs[k-i] = err
		}
		for k := i; k <= j && k < len(recs); k++ {
			if err := fn(recs[k].version, wholes[k-i], errs[k-i]); err != nil {
				return err
			}
			if k < j && wholes[k-i] != nil {
				r.spare = append(r.spare, wholes[k-i])
			}
		}
		i = j + 1
	}
	return nil
}
