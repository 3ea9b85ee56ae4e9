package store

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Key layout of the Badger store. Every key starts with a one-letter
// prefix and a slash; the store owns the prefixes below and nothing else,
// so other data may live beside it under other prefixes.
//
//	m/<id>                          → latest version number, u64 BE
//	v/<id> 0x00 <version u64 BE>    → that version's medallion
//	n/<node> 0x00 <order> <id>      → graph-node index entry → <entry>
//	t/<tag> 0x00 <order> <id>       → tag index entry → <entry>
//
// m/ only names the latest version. The latest version is stored whole,
// in the binary encoding of medallion.MarshalBinary (first byte 0x01-0x05),
// or as JSON (first byte '{') if an older build wrote it; readers take both
// (decodeMedallion). An older version is stored whole or, once a newer one
// follows, as a reverse delta from it (first byte 0x10, delta.go): its
// content never changes, its record may shrink once.
//
// The counters (counters.go) live under c/: c/base, c/dropped and one
// c/d/<seq> key per write transaction that changed a count.
//
// <order> is the 12-byte inverted updated_at (seconds since the epoch with
// the sign bit flipped, u64 BE, then nanoseconds u32 BE, every byte
// complemented), so a forward scan of one node's or tag's entries yields
// the newest medallion first, and equal instants come out by id ascending
// because the id follows as plain bytes. Every node's and tag's entries
// sort by this same suffix, so several lists merge in one pass.
//
// <entry> is "s", the latest version number (u64 BE), then a copy of the
// medallion's whole scope: for every node 0x00 "n" <node>, for every tag
// 0x00 "t" <tag>, and a final 0x00. It lets LatestForScope walk one list,
// check the rest of a query against the entry itself (see plan) and read
// the right version without looking up m/. A scope that would take more
// than maxScopeCopy bytes is left out ("x" and the version only), and the
// query reads the medallion to check it: the copy is repeated in every
// entry, so without the cap a medallion with thousands of tags would
// write megabytes per version.
//
// The 0x00 separators are unambiguous: medallion.Validate rejects control
// characters in nodes and tags, and ids are limited to [A-Za-z0-9._:-].
// Big-endian fixed-width integers keep byte order equal to numeric order.
//
// "r/flush" is written and dropped at once by a reclaim (reclaim.go), and
// only ever read back by the DropPrefix that drops it.
//
// "q/" belongs to the Indexer (index.go; package search), which writes
// under it in the transactions that write versions.
//
// Ingestion (EpisodeStore, ingest.go) owns five more prefixes:
//
//	f/<file key>                        → FileState JSON
//	p/<file key>                        → the file's parser state (opaque)
//	s/<session>                         → session record JSON
//	b/<session> 0x00 <last seq u64 BE>  → episode chunk
//	e/<sha256(event id)[:16]>           → dedupe marker: empty, DedupeTTL
//
// A parser state is written with the f/ key it belongs to, in the same
// transaction, so it always matches the stored offset. It lives apart from
// the FileState because only a parser resuming that file needs it, while
// every FileState is read at start-up: a long session's state can hold
// thousands of tool ids.
//
// A session record is the episode.SessionInfo plus the buffer's last seq
// (events get seqs 1, 2, 3 … per session, without gaps) and its cleared-up-to
// watermark: the buffered events are exactly the seqs in (watermark,
// last seq], whatever chunks a crash may have left behind.
//
// A chunk holds consecutive events of one session, the ones one Ingest call
// added (split at maxChunkBytes): a format byte (0x02: each event in
// transcript.Event's binary encoding; 0x01, from older builds: its JSON),
// the event count (u32 BE), then per event its length (uvarint) and
// encoding. It is keyed
// by its LAST seq, so seeking to the key of seq s lands on the chunk that
// holds s. Chunks rather than an entry per event because Badger charges a
// transaction for every value under the value threshold (512 bytes) in
// full, and a 1.2 MB batch limit then caps a batch near a thousand events;
// chunks over it go to the value log and cost the batch only their key,
// so the limit depends on the event count, not on text sizes, and the LSM
// tree stays small (no compactions rewriting transcript text).
//
// Session ids may hold any byte but 0x00 (Ingest refuses it), so the
// separator ends the session id unambiguously: "a" never reads "a/b"'s
// chunks. Marker keys hash the id: every marker costs a batch the same
// few bytes however long the transcript's ids are, and 128 bits make a
// collision (one event wrongly taken for a duplicate) beyond reach.
const (
	prefixLatest  = "m/"
	prefixVersion = "v/"
	prefixNode    = "n/"
	prefixTag     = "t/"

	prefixFile    = "f/"
	prefixParser  = "p/"
	prefixSession = "s/"
	prefixChunk   = "b/"
	prefixMarker  = "e/"

	sep       = 0x00
	orderSize = 12

	entryScope   = 's'
	entryNoScope = 'x'
	entryHeader  = 1 + 8 // kind, version
	maxScopeCopy = 2 << 10
)

func latestKey(id string) []byte {
	return append([]byte(prefixLatest), id...)
}

// versionValue is the value of an m/ key.
func versionValue(version int) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(version))
}

// parseVersion reads an m/ value or the version in an index entry.
func parseVersion(v []byte) (int, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("bad version value %x", v)
	}
	return int(binary.BigEndian.Uint64(v)), nil
}

// versionPrefix is the prefix of every version key of id; the separator
// keeps id "a" from matching the versions of id "ab".
func versionPrefix(id string) []byte {
	k := make([]byte, 0, len(prefixVersion)+len(id)+1+8)
	k = append(k, prefixVersion...)
	k = append(k, id...)
	return append(k, sep)
}

func versionKey(id string, version int) []byte {
	return binary.BigEndian.AppendUint64(versionPrefix(id), uint64(version))
}

// appendVersionKey appends the version key of id to k.
func appendVersionKey(k, id []byte, version int) []byte {
	k = append(append(append(k, prefixVersion...), id...), sep)
	return binary.BigEndian.AppendUint64(k, uint64(version))
}

// parseVersionKey splits a version key into its id and version.
func parseVersionKey(k []byte) (id string, version int) {
	n := len(k) - 8
	return string(k[len(prefixVersion) : n-1]), int(binary.BigEndian.Uint64(k[n:]))
}

// indexPrefix is the prefix of every index entry of one node or tag.
func indexPrefix(kind, name string) []byte {
	k := make([]byte, 0, len(kind)+len(name)+1+orderSize+medallion.MaxIDLen)
	k = append(k, kind...)
	k = append(k, name...)
	return append(k, sep)
}

// orderSuffix is the index sort key of a medallion: inverted updated_at,
// then id.
func orderSuffix(updated time.Time, id string) []byte {
	s := make([]byte, 0, orderSize+len(id))
	s = binary.BigEndian.AppendUint64(s, ^(uint64(updated.Unix()) ^ 1<<63))
	s = binary.BigEndian.AppendUint32(s, ^uint32(updated.Nanosecond()))
	return append(s, id...)
}

// idFromSuffix returns the id part of an index suffix.
func idFromSuffix(suffix []byte) string {
	return string(suffix[orderSize:])
}

// indexEntries lists the index keys of m, which must be valid (its
// updated_at parses), and the value every one of them holds.
func indexEntries(m *medallion.Medallion) (keys [][]byte, value []byte, err error) {
	updated, err := medallion.ParseTime(m.Meta.UpdatedAt)
	if err != nil {
		return nil, nil, fmt.Errorf("index %s: updated_at: %w", m.Meta.MedallionID, err)
	}
	suffix := orderSuffix(updated, m.Meta.MedallionID)
	keys = make([][]byte, 0, len(m.Scope.GraphNodes)+len(m.Scope.Tags))
	for _, n := range m.Scope.GraphNodes {
		keys = append(keys, append(indexPrefix(prefixNode, n), suffix...))
	}
	for _, t := range m.Scope.Tags {
		keys = append(keys, append(indexPrefix(prefixTag, t), suffix...))
	}
	return keys, entryValue(m), nil
}

// entryValue encodes the value of m's index entries (see the key layout).
func entryValue(m *medallion.Medallion) []byte {
	v := binary.BigEndian.AppendUint64([]byte{entryScope}, uint64(m.Meta.Version))
	for _, n := range m.Scope.GraphNodes {
		v = append(append(v, sep, 'n'), n...)
	}
	for _, t := range m.Scope.Tags {
		v = append(append(v, sep, 't'), t...)
	}
	v = append(v, sep)
	if len(v)-entryHeader > maxScopeCopy {
		v[0] = entryNoScope
		return v[:entryHeader]
	}
	return v
}

// parseEntry splits an index entry's value into the version and the scope
// copy; hasScope is false when the scope was too big to copy.
func parseEntry(v []byte) (version int, scope []byte, hasScope bool, err error) {
	if len(v) < entryHeader || (v[0] != entryScope && v[0] != entryNoScope) {
		return 0, nil, false, fmt.Errorf("bad index entry %x", v)
	}
	version = int(binary.BigEndian.Uint64(v[1:entryHeader]))
	return version, v[entryHeader:], v[0] == entryScope, nil
}

// scopeNeedle is what a scope copy holds for one node (kind 'n') or tag
// ('t'), with the separators on both sides. Separators only ever precede
// a kind byte and names hold none, so bytes.Contains on a scope copy
// matches whole entries only.
func scopeNeedle(kind byte, name string) []byte {
	return append(append([]byte{sep, kind}, name...), sep)
}

// queryNames dedupes requested nodes or tags, keeping their order, and
// drops the names holding the separator byte: no stored node or tag can
// hold it, and such a prefix would read into another name's entries.
// dropped reports whether any name was dropped.
func queryNames(names []string) (out []string, dropped bool) {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if strings.IndexByte(n, sep) >= 0 {
			dropped = true
			continue
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, dropped
}
