package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// The million-medallion data set of issue 12: every medallion belongs to
// one of millionRepos repositories, drawn Zipf-like (a few repositories
// hold most medallions, as a few projects hold most of a user's work),
// with up to two module nodes and 1–3 tags like benchMedallion's.
// Filling it takes minutes, so these benchmarks run only with
// MEDALLION_PERF=1.
const (
	millionSize  = 1_000_000
	millionRepos = 20_000
)

func zipfRepo(rng *rand.Rand) string {
	z := rand.NewZipf(rng, 1.1, 1, millionRepos-1)
	return fmt.Sprintf("repo:r%05d", z.Uint64())
}

func millionMedallion(rng *rand.Rand, i int) *medallion.Medallion {
	m := benchMedallion(rng, i)
	m.Meta.MedallionID = fmt.Sprintf("med-%07d", i)
	modules := m.Scope.GraphNodes[:min(rng.IntN(3), len(m.Scope.GraphNodes))]
	m.Scope.GraphNodes = append([]string{zipfRepo(rng)}, modules...)
	return m
}

func millionStore(b *testing.B) *seededDB {
	if os.Getenv("MEDALLION_PERF") == "" {
		b.Skip("fills a million medallions; set MEDALLION_PERF=1")
	}
	return seededDBFor(b, "zipf1M", millionSize, millionMedallion)
}

// BenchmarkOpenMillion is the store's part of the daemon's start at a
// million medallions (issue 12: ≤ 300 ms): Open, up to the first call it
// can answer. Run it with -benchtime 5x or so; every iteration closes and
// reopens the shared store.
func BenchmarkOpenMillion(b *testing.B) {
	db := millionStore(b)
	var lat []time.Duration
	for b.Loop() {
		if err := db.store.Close(); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		s, err := store.Open(db.dir, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		db.store = s
	}
	if n, err := db.store.Count(context.Background()); err != nil || n != millionSize {
		b.Fatalf("count %d, %v", n, err)
	}
	reportLatencies(b, lat)
}

// BenchmarkLatestForScopeMillion: the load query (one repository node,
// limit 10) and the curator's (the node and a tag) over a million
// medallions, the repository drawn with the same Zipf law as the data
// (issue 12: p99 ≤ 1 ms).
func BenchmarkLatestForScopeMillion(b *testing.B) {
	queries := []struct {
		name  string
		scope func(rng *rand.Rand) medallion.Scope
	}{
		{"repo", func(rng *rand.Rand) medallion.Scope {
			return medallion.Scope{GraphNodes: []string{zipfRepo(rng)}}
		}},
		{"repo+tag", func(rng *rand.Rand) medallion.Scope {
			return medallion.Scope{GraphNodes: []string{zipfRepo(rng)}, Tags: []string{benchTag(rng.IntN(benchTags))}}
		}},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			timeScopeQueries(b, millionStore(b).store, 11, 10, q.scope)
		})
	}
	// The same queries right after the store handed its pages back, as a
	// daemon's store does 2 s after the last write and after 30–60 s
	// without a call: 5,000 queries of another seed read the pages a
	// daemon's recent queries would have, then PageOut hands everything
	// back (what the automatic export and the idle check call).
	for _, q := range queries {
		b.Run(q.name+"/after-release", func(b *testing.B) {
			s := millionStore(b).store
			rng := rand.New(rand.NewPCG(7, 7))
			for range 5000 {
				if _, err := s.LatestForScope(context.Background(), q.scope(rng), 10); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			s.PageOut() // holds every call off while it runs
			took := time.Since(start)
			timeScopeQueries(b, s, 11, 10, q.scope)
			b.ReportMetric(float64(took.Microseconds())/1000, "release-ms")
		})
	}
}
