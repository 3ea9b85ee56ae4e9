// Package search keeps a full-text index of the items of every version of
// every medallion in the daemon's Badger store, and ranks them against a
// query (seed 000's searchByText).
//
// The index is written in the same transaction as each medallion version
// (store.Indexer), so it never drifts from what is stored; when its format
// key is absent (a store written before the index existed, a restored
// backup, a format change) Open rebuilds it from every stored version.
//
// A document is one item as its medallion held it: the kind (decision,
// open question, rule …), its reference (D-003, a list's name, a
// subsystem's name, "summary") and its text. An item that keeps its text
// across versions is one document; a new text is a new document and the
// old one is marked with why it left (revised, superseded by D-004,
// resolved, removed, rejected) and when. So a search finds what was
// decided even after it was overturned, and says so.
//
// Key layout, under the prefix "q/" (the store owns the others):
//
//	q/v                                   → format version
//	q/d/<doc id>                          → document (see encodeDoc)
//	q/p/<term> 0x00 <block id>            → a block of postings (postings.go)
//	q/n/<unix nano u64 BE> <seq u64 BE>   → documents and terms added (two varints)
//
// A doc id is 12 bytes: FNV-32a of the medallion id, then FNV-64a of the
// item's kind, reference and text. The medallion hash first keeps one
// medallion's documents together (its history is one prefix scan) and
// lets a scoped search drop postings of other medallions without reading
// their documents. A posting holds the document's id, the term's
// frequency in it and its length (in terms), so ranking reads postings
// only and decodes documents for the few best hits alone.
//
// No key is read, modified and written by two writes: postings go in new
// blocks, corpus statistics BM25 needs (documents, total length) in new
// delta keys summed into memory at Open and folded into one. Two
// transactions writing different medallions never conflict, which Badger
// would report as a failed Update.
package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// Key prefixes and the format this build writes.
const (
	Prefix        = "q/"
	keyFormat     = "q/v"
	prefixDoc     = "q/d/"
	prefixPosting = "q/p/"
	prefixStats   = "q/n/"
	// formatVersion changes whenever documents, terms or keys change
	// meaning: an index of another format is rebuilt at Open.
	formatVersion = "2"

	idSize  = 12
	midSize = 4
	sep     = 0x00
)

// Index is the search index of one store.
type Index struct {
	st  *store.Badger
	log hclog.Logger
	// docs and length are the corpus statistics: documents indexed and
	// their total length in terms.
	docs, length atomic.Int64
	seq          atomic.Uint64 // makes stats and block keys unique within a nanosecond

	// rebuilding, while set, holds the postings a rebuild gathers: it
	// writes them in large blocks rather than one block per version. Only
	// Open's goroutine uses it.
	rebuilding *postingBuffer

	merges     chan string // terms to merge (postings.go)
	stop       chan struct{}
	mergerDone chan struct{}
	closeOnce  sync.Once
}

var _ store.Indexer = (*Index)(nil)

// Open attaches an index to st: every later write of a medallion version
// is indexed with it. An index of another format, or none, is rebuilt
// from every stored version first (and logged, with the time it took).
// Call it before anything else writes to st.
func Open(ctx context.Context, st *store.Badger, logger hclog.Logger) (*Index, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	ix := &Index{st: st, log: logger, merges: make(chan string, 256), stop: make(chan struct{}), mergerDone: make(chan struct{})}
	st.SetIndexer(ix)
	var format []byte
	err := st.View(ctx, func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(keyFormat))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		format, err = item.ValueCopy(nil)
		return err
	})
	if err == nil && string(format) != formatVersion {
		err = ix.rebuild(ctx, string(format))
	} else if err == nil {
		err = ix.loadStats(ctx)
	}
	if err != nil {
		// Versions written from now on go unindexed: make the next Open
		// rebuild rather than trust an index that misses them.
		st.SetIndexer(nil)
		_ = st.Write(ctx, func(txn *badger.Txn) error { return txn.Delete([]byte(keyFormat)) })
		return nil, fmt.Errorf("open search index: %w", err)
	}
	go ix.merger()
	return ix, nil
}

// rebuild indexes every stored version anew.
func (ix *Index) rebuild(ctx context.Context, had string) error {
	start := time.Now()
	if had == "" {
		ix.log.Info("building the search index from every stored version")
	} else {
		ix.log.Info("rebuilding the search index: its format changed", "from", had, "to", formatVersion)
	}
	ix.docs.Store(0)
	ix.length.Store(0)
	ix.rebuilding = &postingBuffer{}
	versions, err := ix.st.Reindex(ctx, Prefix, func(write func(func(*badger.Txn) error) error, last bool) error {
		if !last && ix.rebuilding.n < flushPostings {
			return nil
		}
		return ix.flushBuffer(write, ix.rebuilding)
	})
	ix.rebuilding = nil
	if err != nil {
		return err
	}
	err = ix.st.Write(ctx, func(txn *badger.Txn) error { return txn.Set([]byte(keyFormat), []byte(formatVersion)) })
	if err != nil {
		return err
	}
	if err := ix.loadStats(ctx); err != nil {
		return err
	}
	ix.log.Info("search index built", "versions", versions, "items", ix.docs.Load(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// Items counts the documents indexed: item texts over every version.
func (ix *Index) Items() int64 { return ix.docs.Load() }

// Doc is one indexed item text.
type Doc struct {
	MedallionID string
	// Kind is api.KindDecision, api.KindQuestion, api.KindSubsystem, a
	// list's name (medallion.ItemInvariant …) or medallion.ItemSummary.
	Kind string
	// Ref is the item's reference within its medallion: a decision or
	// question id, a subsystem's name, or the kind again for list items
	// and the summary (their position changes from version to version).
	Ref  string
	Text string
	// First is the version the text appeared in. Until is the version it
	// left in, 0 while the latest version holds it; State says why it
	// left (api.StateSuperseded …) and By what superseded or resolved it.
	First, Until int
	State, By    string
}

// The kinds and states as stored: one byte each, by position.
var (
	kinds  = []string{"decision", "open_question", "subsystem", medallion.ItemSummary, medallion.ItemInvariant, medallion.ItemAvoidRepeating, medallion.ItemEntryPoint}
	states = []string{"current", "superseded", "resolved", "revised", "removed", "rejected"}
)

// docFormat is the first byte of an encoded document.
const docFormat = 1

// encodeDoc: the format byte, the kind and state bytes, First and Until
// (uvarints), then MedallionID, Ref, By and Text, each a uvarint length
// and the bytes.
func encodeDoc(d *Doc) []byte {
	b := []byte{docFormat, byte(slices.Index(kinds, d.Kind)), byte(slices.Index(states, d.State))}
	b = binary.AppendUvarint(b, uint64(d.First))
	b = binary.AppendUvarint(b, uint64(d.Until))
	for _, s := range []string{d.MedallionID, d.Ref, d.By, d.Text} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func decodeDoc(b []byte) (*Doc, error) {
	bad := func(what string) (*Doc, error) { return nil, fmt.Errorf("bad search document: %s", what) }
	if len(b) < 3 || b[0] != docFormat {
		return bad("format")
	}
	if int(b[1]) >= len(kinds) || int(b[2]) >= len(states) {
		return bad("kind or state")
	}
	d := &Doc{Kind: kinds[b[1]], State: states[b[2]]}
	b = b[3:]
	for _, n := range []*int{&d.First, &d.Until} {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return bad("version")
		}
		*n, b = int(v), b[k:]
	}
	for _, s := range []*string{&d.MedallionID, &d.Ref, &d.By, &d.Text} {
		v, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < v {
			return bad("text")
		}
		*s, b = string(b[k:k+int(v)]), b[k+int(v):]
	}
	return d, nil
}

// docID is the id of one item text of medallion mid.
type docID [idSize]byte

func midHash(mid string) [midSize]byte {
	h := fnv.New32a()
	h.Write([]byte(mid))
	var out [midSize]byte
	binary.BigEndian.PutUint32(out[:], h.Sum32())
	return out
}

func newDocID(mid, kind, ref, text string) docID {
	var id docID
	m := midHash(mid)
	copy(id[:], m[:])
	h := fnv.New64a()
	for _, s := range []string{kind, ref, text} {
		h.Write([]byte(s))
		h.Write([]byte{sep})
	}
	binary.BigEndian.PutUint64(id[midSize:], h.Sum64())
	return id
}

func docKey(id docID) []byte { return append([]byte(prefixDoc), id[:]...) }

// item is one item of one version, before it is a document.
type item struct{ kind, ref, text string }

// items lists the items of m; nil for a nil m.
func items(m *medallion.Medallion) []item {
	if m == nil {
		return nil
	}
	var out []item
	add := func(kind, ref, text string) {
		if strings.TrimSpace(text) != "" {
			out = append(out, item{kind, ref, strings.TrimSpace(text)})
		}
	}
	add(medallion.ItemSummary, medallion.ItemSummary, m.Summary.HighLevel)
	for _, s := range m.Summary.Subsystems {
		add("subsystem", s.Name, SubsystemText(s))
	}
	for _, d := range m.Decisions {
		add("decision", d.ID, DecisionText(d))
	}
	for _, q := range m.OpenQuestions {
		add("open_question", q.ID, QuestionText(q))
	}
	for _, name := range medallion.ReviewLists {
		for _, t := range *m.List(name) {
			add(name, name, t)
		}
	}
	return out
}

// DecisionText is the text a decision is indexed by: its statement and
// rationale.
func DecisionText(d medallion.Decision) string {
	return joinNonEmpty("\nWhy: ", d.Statement, d.Rationale)
}

// QuestionText is the text an open question is indexed by: the question
// and what blocks it.
func QuestionText(q medallion.OpenQuestion) string {
	return joinNonEmpty("\nBlocked on: ", q.Question, strings.Join(q.BlockedOn, "; "))
}

// SubsystemText is the text a subsystem is indexed by: its name and notes.
func SubsystemText(s medallion.Subsystem) string {
	return joinNonEmpty(": ", s.Name, s.Notes)
}

func joinNonEmpty(sep string, a, b string) string {
	if strings.TrimSpace(b) == "" {
		return strings.TrimSpace(a)
	}
	return strings.TrimSpace(a + sep + b)
}

// IndexVersion indexes version cur of a medallion, prev being the version
// before it (nil for the first): new item texts become documents, texts
// that left are marked with why, and texts that come back are current
// again. It is the store.Indexer hook, run inside the write's transaction.
func (ix *Index) IndexVersion(txn *badger.Txn, prev, cur *medallion.Medallion) (func(), error) {
	mid := cur.Meta.MedallionID
	before := map[docID]item{}
	for _, it := range items(prev) {
		before[newDocID(mid, it.kind, it.ref, it.text)] = it
	}
	now := map[docID]bool{}
	var added, addedLen int64
	pb := &postingBuffer{}
	for _, it := range items(cur) {
		id := newDocID(mid, it.kind, it.ref, it.text)
		if now[id] {
			continue // the same text twice in one list
		}
		now[id] = true
		if _, ok := before[id]; ok {
			continue
		}
		d, err := getDoc(txn, id)
		if err != nil {
			return nil, err
		}
		if d != nil {
			if d.Until == 0 {
				continue
			}
			d.Until, d.State, d.By = 0, "current", ""
			if err := txn.Set(docKey(id), encodeDoc(d)); err != nil {
				return nil, err
			}
			continue
		}
		n, err := addDoc(txn, pb, id, &Doc{MedallionID: mid, Kind: it.kind, Ref: it.ref, Text: it.text, First: cur.Meta.Version, State: "current"})
		if err != nil {
			return nil, err
		}
		added, addedLen = added+1, addedLen+int64(n)
	}
	var leaving leaveReasons
	for id, it := range before {
		if now[id] {
			continue
		}
		if leaving == nil {
			leaving = reasons(prev, cur)
		}
		state, by := leaving.of(it, cur)
		d, err := getDoc(txn, id)
		if err != nil {
			return nil, err
		}
		if d == nil {
			// The version before was written without the index (it
			// cannot be, once built; kept for safety): index it now.
			d = &Doc{MedallionID: mid, Kind: it.kind, Ref: it.ref, Text: it.text, First: prev.Meta.Version}
			n, err := addDoc(txn, pb, id, d)
			if err != nil {
				return nil, err
			}
			added, addedLen = added+1, addedLen+int64(n)
		}
		d.Until, d.State, d.By = cur.Meta.Version, state, by
		if err := txn.Set(docKey(id), encodeDoc(d)); err != nil {
			return nil, err
		}
	}
	if added == 0 {
		return nil, nil
	}
	// A rebuild gathers the postings of many versions and writes them in
	// large blocks (Open); only a committed version's count, as a retried
	// transaction runs this again.
	rebuilding := ix.rebuilding
	if rebuilding == nil {
		if err := pb.write(ix, txn); err != nil {
			return nil, err
		}
	}
	if err := txn.Set(ix.statsKey(), statsValue(added, addedLen)); err != nil {
		return nil, err
	}
	return func() {
		ix.docs.Add(added)
		ix.length.Add(addedLen)
		if rebuilding != nil {
			rebuilding.take(pb)
		}
	}, nil
}

// addDoc stores a new document, adds its postings to pb, and returns its
// length in terms.
func addDoc(txn *badger.Txn, pb *postingBuffer, id docID, d *Doc) (int, error) {
	if d.State == "" {
		d.State = "current"
	}
	if err := txn.Set(docKey(id), encodeDoc(d)); err != nil {
		return 0, err
	}
	terms := Terms(d.Text)
	tf := map[string]int{}
	for _, t := range terms {
		tf[t]++
	}
	for t, n := range tf {
		pb.add(t, id, n, len(terms))
	}
	return len(terms), nil
}

func getDoc(txn *badger.Txn, id docID) (*Doc, error) {
	item, err := txn.Get(docKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var d *Doc
	err = item.Value(func(v []byte) (err error) { d, err = decodeDoc(v); return err })
	return d, err
}

func (ix *Index) statsKey() []byte {
	k := binary.BigEndian.AppendUint64([]byte(prefixStats), uint64(time.Now().UnixNano()))
	return binary.BigEndian.AppendUint64(k, ix.seq.Add(1))
}

func statsValue(docs, length int64) []byte {
	return binary.AppendVarint(binary.AppendVarint(nil, docs), length)
}

// loadStats sums the stats keys into memory and folds them, so the next
// Open reads a few keys (plus one per write since) instead of one per
// write ever made.
func (ix *Index) loadStats(ctx context.Context) error {
	type delta struct {
		key          []byte
		docs, length int64
	}
	var deltas []delta
	err := ix.st.View(ctx, func(txn *badger.Txn) error {
		p := []byte(prefixStats)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true})
		defer it.Close()
		for it.Seek(p); it.ValidForPrefix(p); it.Next() {
			d := delta{key: it.Item().KeyCopy(nil)}
			err := it.Item().Value(func(v []byte) error {
				var n, m int
				d.docs, n = binary.Varint(v)
				d.length, m = binary.Varint(v[max(n, 0):])
				if n <= 0 || m <= 0 {
					return fmt.Errorf("bad search stats %x", v)
				}
				return nil
			})
			if err != nil {
				return err
			}
			deltas = append(deltas, d)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var docs, length int64
	for _, d := range deltas {
		docs, length = docs+d.docs, length+d.length
	}
	ix.docs.Store(docs)
	ix.length.Store(length)
	// Each transaction replaces a chunk of keys by their sum, so a crash
	// between two leaves the totals right. Nothing else reads or rewrites
	// stats keys: a write adding one meanwhile is simply kept.
	const chunk = 4096
	for len(deltas) > 1 {
		part := deltas[:min(chunk, len(deltas))]
		deltas = deltas[len(part):]
		err := ix.st.Write(ctx, func(txn *badger.Txn) error {
			var d, l int64
			for _, x := range part {
				if err := txn.Delete(x.key); err != nil {
					return err
				}
				d, l = d+x.docs, l+x.length
			}
			return txn.Set(ix.statsKey(), statsValue(d, l))
		})
		if err != nil {
			// Folding is an optimisation: the sums in memory are right.
			ix.log.Warn("search stats not folded", "keys", len(part), "error", err)
			return nil
		}
	}
	return nil
}

// MedallionDocs returns every document of medallion mid: the texts its
// items had over all its versions, oldest first.
func (ix *Index) MedallionDocs(ctx context.Context, mid string) ([]*Doc, error) {
	var out []*Doc
	h := midHash(mid)
	p := append([]byte(prefixDoc), h[:]...)
	err := ix.st.View(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true})
		defer it.Close()
		for it.Seek(p); it.ValidForPrefix(p); it.Next() {
			var d *Doc
			if err := it.Item().Value(func(v []byte) (err error) { d, err = decodeDoc(v); return err }); err != nil {
				return err
			}
			if d.MedallionID == mid { // another id with the same hash
				out = append(out, d)
			}
		}
		return nil
	})
	slices.SortStableFunc(out, func(a, b *Doc) int {
		if a.First != b.First {
			return a.First - b.First
		}
		return strings.Compare(a.Text, b.Text)
	})
	return out, err
}
