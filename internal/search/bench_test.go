package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// benchItemsEnv sets how many items BenchmarkSearch indexes: 20,000 by
// default (make bench), 1000000 for the README's figures (about ten
// minutes on 2 cores, 2 GB of disk).
const benchItemsEnv = "MEDALLION_SEARCH_BENCH_ITEMS"

// itemsPerMedallion is how many items each generated medallion holds.
const itemsPerMedallion = 20

// corpus generates item texts: words drawn Zipf-like from a vocabulary of
// made-up words (as in prose, a few are everywhere and most are rare),
// with a code identifier now and then.
type corpus struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	syll := []string{"ka", "lo", "mi", "ra", "te", "su", "no", "vi", "de", "po", "ga", "zu", "be", "fi", "ho", "ny"}
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < 50000 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] && !stopwords[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &corpus{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, uint64(len(vocab)-1)), vocab: vocab}
}

func (c *corpus) word() string { return c.vocab[c.zipf.Uint64()] }

func (c *corpus) text() string {
	n := 8 + c.rng.IntN(20)
	words := make([]string, n)
	for i := range words {
		words[i] = c.word()
		if c.rng.IntN(12) == 0 {
			w := c.word()
			words[i] += strings.ToUpper(w[:1]) + w[1:] // an identifier
		}
	}
	return strings.Join(words, " ")
}

func (c *corpus) medallion(i int) *medallion.Medallion {
	m := &medallion.Medallion{
		Meta:  medallion.Meta{MedallionID: fmt.Sprintf("bench-%07d", i), SchemaVersion: medallion.SchemaVersion, Model: "bench", Status: medallion.StatusActive},
		Scope: medallion.Scope{GraphNodes: []string{"repo:r" + strconv.Itoa(i%2000)}, Tags: []string{"project_state"}},
	}
	m.Summary.HighLevel = c.text()
	for j := range 6 {
		m.Decisions = append(m.Decisions, medallion.Decision{ID: fmt.Sprintf("D-%03d", j+1), Statement: c.text(), Rationale: c.text(), Confidence: 0.5})
	}
	for j := range 3 {
		m.OpenQuestions = append(m.OpenQuestions, medallion.OpenQuestion{ID: fmt.Sprintf("Q-%03d", j+1), Question: c.text(), BlockedOn: []string{}, Priority: medallion.PriorityLow})
	}
	for range 4 {
		m.Affordances.Invariants = append(m.Affordances.Invariants, c.text())
		m.Affordances.AvoidRepeating = append(m.Affordances.AvoidRepeating, c.text())
	}
	m.Affordances.RecommendedEntryPoints = []string{"internal/" + c.word() + "/" + c.word() + ".go", "cmd/" + c.word()}
	return m // 1 summary + 6 + 3 + 8 + 2 = 20 items
}

// BenchmarkSearch indexes MEDALLION_SEARCH_BENCH_ITEMS items (written
// through the store with the index attached, one Create per medallion of
// 20 items), times a rebuild from the store, then queries: one common
// word, a rare one, three words, a scoped query.
func BenchmarkSearch(b *testing.B) {
	items := 20000
	if v := os.Getenv(benchItemsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < itemsPerMedallion {
			b.Fatalf("%s=%q: want a number of items of at least %d", benchItemsEnv, v, itemsPerMedallion)
		}
		items = n
	}
	ctx := context.Background()
	dir := b.TempDir()
	st, err := store.Open(dir, store.Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ix, err := Open(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	c := newCorpus(1)
	start := time.Now()
	meds := items / itemsPerMedallion
	for i := range meds {
		if _, err := st.Create(ctx, c.medallion(i)); err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(start)
	b.Logf("indexed %d items in %d medallions: %s (%.0f items/s); store %d MB", ix.Items(), meds, took.Round(time.Millisecond), float64(ix.Items())/took.Seconds(), st.DiskUsage()>>20)

	if err := st.Write(ctx, func(txn *badger.Txn) error { return txn.Delete([]byte(keyFormat)) }); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	if ix, err = Open(ctx, st, nil); err != nil {
		b.Fatal(err)
	}
	b.Logf("rebuilt from the store: %s (%d items)", time.Since(start).Round(time.Millisecond), ix.Items())
	start = time.Now()
	if _, err = Open(ctx, st, nil); err != nil {
		b.Fatal(err)
	}
	b.Logf("open of a built index: %s", time.Since(start).Round(time.Microsecond))

	// Query words by how common they are: the vocabulary is in Zipf
	// rank order.
	q := newCorpus(1)
	scope := []string{}
	for i := 0; i < meds; i += 2000 { // the medallions of repo:r0
		scope = append(scope, fmt.Sprintf("bench-%07d", i))
	}
	for _, tc := range []struct {
		name  string
		query func(i int) string
		scope []string
	}{
		{"common word", func(i int) string { return q.vocab[2+i%5] }, nil},
		{"mid word", func(i int) string { return q.vocab[200+i%500] }, nil},
		{"rare word", func(i int) string { return q.vocab[20000+i%5000] }, nil},
		{"three words", func(i int) string { return q.vocab[2+i%5] + " " + q.vocab[300+i%500] + " " + q.vocab[5000+i%5000] }, nil},
		{"identifier", func(i int) string {
			w := q.vocab[50+i%50]
			return q.vocab[10+i%10] + strings.ToUpper(w[:1]) + w[1:]
		}, nil},
		{"scoped three words", func(i int) string { return q.vocab[2+i%5] + " " + q.vocab[300+i%500] + " " + q.vocab[5000+i%5000] }, scope},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var lat []time.Duration
			matched := 0
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				res, err := ix.Search(ctx, tc.query(i), tc.scope, 10)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				matched += res.Matched
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(matched)/float64(len(lat)), "matched/op")
		})
	}
}
