package search

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// openStore opens a real Badger store under t.TempDir(), closed at the end.
func openStore(t *testing.T, dir string) *store.Badger {
	t.Helper()
	st, err := store.Open(dir, store.Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openIndex(t *testing.T, st *store.Badger) *Index {
	t.Helper()
	ix, err := Open(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ix.Close)
	return ix
}

func newMedallion(id string, nodes ...string) *medallion.Medallion {
	return &medallion.Medallion{
		Meta:  medallion.Meta{MedallionID: id, SchemaVersion: medallion.SchemaVersion, Model: "test", Status: medallion.StatusActive},
		Scope: medallion.Scope{GraphNodes: nodes, Tags: []string{"project_state"}},
	}
}

// write stores m as the next version of its id (or the first), returning
// the stored version.
func write(t *testing.T, st *store.Badger, m *medallion.Medallion) *medallion.Medallion {
	t.Helper()
	ctx := context.Background()
	cur, err := st.Get(ctx, m.Meta.MedallionID)
	if err != nil {
		t.Fatal(err)
	}
	var out *medallion.Medallion
	if cur == nil {
		out, err = st.Create(ctx, m)
	} else {
		m = m.Clone()
		m.Meta.Version = cur.Meta.Version
		out, err = st.Update(ctx, m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func search(t *testing.T, ix *Index, q string, scope []string) []Hit {
	t.Helper()
	res, err := ix.Search(context.Background(), q, scope, 10)
	if err != nil {
		t.Fatal(err)
	}
	return res.Hits
}

// refs lists hits as "ref state[ by]" for comparison.
func refs(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		s := h.MedallionID + " " + h.Ref + " " + h.State
		if h.By != "" {
			s += " by " + h.By
		}
		out = append(out, s)
	}
	return out
}

// threeVersions writes a medallion through three versions: a decision
// superseded, a question resolved, a decision revised, a rule removed and
// brought back.
func threeVersions(t *testing.T, st *store.Badger) {
	m := newMedallion("med-a", "repo:muse")
	m.Summary.HighLevel = "Muse turns plain-text scores into MIDI."
	m.Decisions = []medallion.Decision{
		{ID: "D-001", Statement: "Keep the store in Badger", Rationale: "embedded, no server", Confidence: 0.8},
		{ID: "D-002", Statement: "Retry flaky uploads three times", Rationale: "the CDN drops connections", Confidence: 0.7},
	}
	m.OpenQuestions = []medallion.OpenQuestion{{ID: "Q-001", Question: "Should the index be sharded by term?", Priority: medallion.PriorityHigh}}
	m.Affordances.Invariants = []string{"Never link cgo into medallionctl"}
	write(t, st, m)

	m.Decisions = []medallion.Decision{
		{ID: "D-002", Statement: "Retry flaky uploads five times with backoff", Rationale: "three was not enough", Confidence: 0.7},
		{ID: "D-003", Statement: "Keep the store in SQLite", Rationale: "This supersedes D-001 (Keep the store in Badger).", Confidence: 0.8},
		{ID: "D-004", Statement: "Shard the index by term prefix", Rationale: "This resolves Q-001.", Confidence: 0.8},
	}
	m.OpenQuestions = nil
	m.Affordances.Invariants = nil
	write(t, st, m)

	m.Affordances.Invariants = []string{"Never link cgo into medallionctl"}
	write(t, st, m)
}

func TestSearchMarksWhatLeft(t *testing.T) {
	st := openStore(t, t.TempDir())
	ix := openIndex(t, st)
	threeVersions(t, st)

	for _, tc := range []struct {
		query string
		want  []string
	}{
		// The current decision first; the one it superseded still found.
		{"store badger sqlite", []string{"med-a D-003 current", "med-a D-001 superseded by D-003"}},
		{"shard the index", []string{"med-a D-004 current", "med-a Q-001 resolved by D-004"}},
		{"retry uploads", []string{"med-a D-002 current", "med-a D-002 revised"}},
		// Removed in version 2, back in version 3: current again, once.
		{"cgo", []string{"med-a invariant current"}},
		{"nothing like it", nil},
	} {
		if got := refs(search(t, ix, tc.query, nil)); !slices.Equal(got, tc.want) {
			t.Errorf("search %q = %q, want %q", tc.query, got, tc.want)
		}
	}
	for _, h := range search(t, ix, "badger", nil) {
		if h.Ref == "D-001" && (h.First != 1 || h.Until != 2) {
			t.Errorf("the superseded decision: versions %d to %d, want 1 and left in 2", h.First, h.Until)
		}
	}
}

func TestSearchIdentifiers(t *testing.T) {
	st := openStore(t, t.TempDir())
	ix := openIndex(t, st)
	m := newMedallion("med-b", "repo:medallion")
	m.Affordances.AvoidRepeating = []string{
		"LatestForScope must read the index, never scan every medallion",
		"the latest version of a scope is found by a scan",
		"internal/store/badger.go: set max_line before opening",
		"HTTPServer timeouts are set in server.go",
	}
	write(t, st, m)
	for _, tc := range []struct{ query, first string }{
		// The identifier itself beats its words met apart.
		{"LatestForScope", "LatestForScope must read the index, never scan every medallion"},
		{"latest_for_scope", "LatestForScope must read the index, never scan every medallion"},
		{"badger.go", "internal/store/badger.go: set max_line before opening"},
		{"maxLine", "internal/store/badger.go: set max_line before opening"},
		{"http server", "HTTPServer timeouts are set in server.go"},
	} {
		hits := search(t, ix, tc.query, nil)
		if len(hits) == 0 || hits[0].Text != tc.first {
			t.Errorf("search %q: first hit %v, want %q", tc.query, refsText(hits), tc.first)
		}
	}
}

func refsText(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%.2f %s", h.Score, h.Text))
	}
	return out
}

func TestSearchScope(t *testing.T) {
	st := openStore(t, t.TempDir())
	ix := openIndex(t, st)
	for _, id := range []string{"med-x", "med-y"} {
		m := newMedallion(id, "repo:"+id)
		m.Affordances.Invariants = []string{"Run the migrations before the tests"}
		write(t, st, m)
	}
	if got := refs(search(t, ix, "migrations", []string{"med-y"})); !slices.Equal(got, []string{"med-y invariant current"}) {
		t.Errorf("scoped search = %q", got)
	}
	if got := search(t, ix, "migrations", []string{}); len(got) != 0 {
		t.Errorf("an empty scope found %q", refs(got))
	}
	if got := search(t, ix, "migrations", nil); len(got) != 2 {
		t.Errorf("an unscoped search found %q", refs(got))
	}
}

// TestRebuildMatchesWrites: an index rebuilt from the stored versions is
// the index the writes built, and a store written without an index gets
// one at Open.
func TestRebuildMatchesWrites(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	st := openStore(t, dir)
	ix := openIndex(t, st)
	threeVersions(t, st)
	queries := []string{"store badger sqlite", "shard the index", "retry uploads", "cgo", "muse midi"}
	before := map[string][]string{}
	for _, q := range queries {
		before[q] = refs(search(t, ix, q, nil))
	}
	items := ix.Items()
	if items == 0 {
		t.Fatal("nothing indexed")
	}

	// The format key gone: the next Open starts over.
	if err := st.Write(ctx, func(txn *badger.Txn) error { return txn.Delete([]byte(keyFormat)) }); err != nil {
		t.Fatal(err)
	}
	ix = openIndex(t, st)
	if ix.Items() != items {
		t.Errorf("rebuilt index holds %d items, the written one %d", ix.Items(), items)
	}
	for _, q := range queries {
		if got := refs(search(t, ix, q, nil)); !slices.Equal(got, before[q]) {
			t.Errorf("after a rebuild, search %q = %q, want %q", q, got, before[q])
		}
	}

	// A store written with no index at all.
	st.SetIndexer(nil)
	m := newMedallion("med-late", "repo:late")
	m.Affordances.Invariants = []string{"Vendor the protobuf files"}
	write(t, st, m)
	if err := st.Write(ctx, func(txn *badger.Txn) error { return txn.Delete([]byte(keyFormat)) }); err != nil {
		t.Fatal(err)
	}
	ix = openIndex(t, st)
	if got := refs(search(t, ix, "protobuf", nil)); !slices.Equal(got, []string{"med-late invariant current"}) {
		t.Errorf("a version written without the index: search = %q", got)
	}
	if got := refs(search(t, ix, "store badger sqlite", nil)); !slices.Equal(got, before["store badger sqlite"]) {
		t.Errorf("after the second rebuild: %q", got)
	}
}

// TestStatsSurviveRestart: the corpus figures BM25 uses are the same after
// a restart (summed from the stats keys, then folded into one).
func TestStatsSurviveRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	st, err := store.Open(dir, store.Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, st)
	threeVersions(t, st)
	docs, length := ix.docs.Load(), ix.length.Load()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second open reads the folded key
		st = openStore(t, dir)
		ix = openIndex(t, st)
		if ix.docs.Load() != docs || ix.length.Load() != length {
			t.Errorf("after a restart: %d documents of %d terms, want %d of %d", ix.docs.Load(), ix.length.Load(), docs, length)
		}
		keys := 0
		st.View(context.Background(), func(txn *badger.Txn) error {
			p := []byte(prefixStats)
			it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
			defer it.Close()
			for it.Seek(p); it.ValidForPrefix(p); it.Next() {
				keys++
			}
			return nil
		})
		if keys != 1 {
			t.Errorf("%d stats keys after Open, want them folded into one", keys)
		}
		ix.Close()
		st.Close()
	}
}

// TestImportIsIndexed: an import's versions are indexed as they are
// stored, history included.
func TestImportIsIndexed(t *testing.T) {
	ctx := context.Background()
	src := openStore(t, t.TempDir())
	threeVersions(t, src)
	var versions []*medallion.Medallion
	if err := src.Export(ctx, func(m *medallion.Medallion) error { versions = append(versions, m); return nil }); err != nil {
		t.Fatal(err)
	}
	dst := openStore(t, t.TempDir())
	ix := openIndex(t, dst)
	if err := dst.Import(ctx, versions); err != nil {
		t.Fatal(err)
	}
	if got := refs(search(t, ix, "shard the index", nil)); !slices.Equal(got, []string{"med-a D-004 current", "med-a Q-001 resolved by D-004"}) {
		t.Errorf("after an import: %q", got)
	}
}

func TestDocRoundTrip(t *testing.T) {
	d := &Doc{MedallionID: "m:1", Kind: "avoid_repeating", Ref: "avoid_repeating", Text: "ünïcode\nlines", First: 3, Until: 300, State: "superseded", By: "D-010"}
	got, err := decodeDoc(encodeDoc(d))
	if err != nil || *got != *d {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", d, got, err)
	}
	for _, bad := range [][]byte{nil, {docFormat}, {2, 0, 0}, {docFormat, 99, 0, 1, 0}, encodeDoc(d)[:10]} {
		if _, err := decodeDoc(bad); err == nil {
			t.Errorf("decodeDoc(%x) took it", bad)
		}
	}
}

// TestMergeKeepsResults: one block per write until a search finds the
// term fragmented; the merge leaves one block and the same answer.
func TestMergeKeepsResults(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	ix := openIndex(t, st)
	for i := range 3 * mergeAt {
		m := newMedallion(fmt.Sprintf("med-%02d", i), "repo:zoo")
		m.Affordances.Invariants = []string{fmt.Sprintf("Feed the zebra %d times a day", i)}
		write(t, st, m)
	}
	blocks := func() int {
		n := 0
		st.View(ctx, func(txn *badger.Txn) error {
			p := termPrefix("zebra")
			it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
			defer it.Close()
			for it.Seek(p); it.ValidForPrefix(p); it.Next() {
				n++
			}
			return nil
		})
		return n
	}
	if n := blocks(); n != 3*mergeAt {
		t.Fatalf("%d blocks before a search, want one per write", n)
	}
	before, err := ix.Search(ctx, "zebra", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for blocks() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("still %d blocks after the search asked for a merge", blocks())
		}
		time.Sleep(10 * time.Millisecond)
	}
	after, err := ix.Search(ctx, "zebra", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if before.Matched != 3*mergeAt || after.Matched != before.Matched || !slices.Equal(refs(after.Hits), refs(before.Hits)) {
		t.Errorf("matched %d then %d; hits %q then %q", before.Matched, after.Matched, refs(before.Hits), refs(after.Hits))
	}
}

// TestPruneKeepsTheBest: the MaxScore cut changes how many documents are
// scored, never which are best.
func TestPruneKeepsTheBest(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	ix := openIndex(t, st)
	c := newCorpus(7)
	for i := range 150 {
		if _, err := st.Create(ctx, c.medallion(i)); err != nil {
			t.Fatal(err)
		}
	}
	q := newCorpus(7)
	pruned := 0
	for i := range 40 {
		query := q.vocab[i%7] + " " + q.vocab[30+i] + " " + q.vocab[2000+i*13]
		prune = true
		cut, err := ix.Search(ctx, query, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		prune = false
		all, err := ix.Search(ctx, query, nil, 10)
		prune = true
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(refsText(cut.Hits), refsText(all.Hits)) {
			t.Errorf("%q: with the cut %q\nwithout %q", query, refsText(cut.Hits), refsText(all.Hits))
		}
		if cut.Matched > all.Matched {
			t.Errorf("%q: matched %d with the cut, %d without", query, cut.Matched, all.Matched)
		}
		if cut.Matched < all.Matched {
			pruned++
		}
	}
	if pruned == 0 {
		t.Error("no query was cut: the test compares nothing")
	}
	t.Logf("%d of 40 queries cut", pruned)
}
