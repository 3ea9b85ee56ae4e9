package store_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// Benchmark data shape: each medallion has 1–3 graph nodes out of
// benchNodes and 1–3 tags out of benchTags, drawn from a fixed seed, and a
// body of about 1.5 KB of JSON like a small real medallion.
const (
	benchNodes = 1000
	benchTags  = 50
)

// seededDB is a store filled once per size and shared by every run of the
// benchmarks that read it: filling 100k medallions takes far longer than
// the queries measured.
type seededDB struct {
	once  sync.Once
	dir   string
	keep  bool // dir was given (MEDALLION_PERF_DIR) and outlives the run
	store *store.Badger
	err   error
}

var (
	seededMu sync.Mutex
	seeded   = map[string]*seededDB{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, db := range seeded {
		if db.store != nil {
			db.store.Close()
		}
		if db.dir != "" && !db.keep {
			os.RemoveAll(db.dir)
		}
	}
	os.Exit(code)
}

func benchNode(i int) string { return fmt.Sprintf("module:pkg%04d", i) }
func benchTag(i int) string  { return fmt.Sprintf("tag%02d", i) }

// distinct draws 1–3 distinct names from a pool.
func distinct(rng *rand.Rand, pool int, name func(int) string) []string {
	n := 1 + rng.IntN(3)
	var out []string
	for len(out) < n {
		if v := name(rng.IntN(pool)); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

var benchBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// benchMedallion is medallion i of a benchmark data set.
func benchMedallion(rng *rand.Rand, i int) *medallion.Medallion {
	stamp := medallion.FormatTime(benchBase.Add(time.Duration(rng.Int64N(int64(365 * 24 * time.Hour)))))
	return &medallion.Medallion{
		Meta: medallion.Meta{
			MedallionID:   fmt.Sprintf("med-%06d", i),
			SchemaVersion: medallion.SchemaVersion,
			Model:         "tier0",
			CreatedAt:     stamp,
			UpdatedAt:     stamp,
		},
		Scope: medallion.Scope{
			GraphNodes: distinct(rng, benchNodes, benchNode),
			Tags:       distinct(rng, benchTags, benchTag),
		},
		Summary: medallion.Summary{
			HighLevel: "The package parses transcripts written by coding agents, buffers them per session and " +
				"hands complete episodes to the curator at checkpoints; offsets only advance with the data they cover.",
			Subsystems: []medallion.Subsystem{
				{Name: "tail", Status: medallion.SubsystemStable, Notes: "follows files by dev/inode and a fingerprint"},
				{Name: "parse", Status: medallion.SubsystemInProgress, Notes: "codex format still missing tool results"},
			},
		},
		Decisions: []medallion.Decision{
			{ID: "D-001", Statement: "Use bufio.Reader with a line cap", Rationale: "bufio.Scanner dies on lines over 64 KiB", Confidence: 0.9},
			{ID: "D-002", Statement: "Advance offsets in the same transaction as the events", Rationale: "never lose or duplicate an event", Confidence: 1},
		},
		OpenQuestions: []medallion.OpenQuestion{
			{ID: "Q-001", Question: "Should idle sessions checkpoint after 5 or 15 minutes?", BlockedOn: []string{"owner"}, Priority: medallion.PriorityMedium},
		},
		Affordances: medallion.Affordances{
			RecommendedEntryPoints: []string{"internal/tail/tail.go", "internal/transcript/claude.go"},
			AvoidRepeating:         []string{"go test -race ./... on 2 cores times out; test one package"},
			Invariants:             []string{"transcript content never above Debug", "offsets advance only past a newline"},
		},
	}
}

// seededStore returns the shared store holding size benchmark medallions,
// filling it on first use.
func seededStore(b *testing.B, size int) *store.Badger {
	return seededDBFor(b, fmt.Sprint(size), size, benchMedallion).store
}

// seededOptions opens the benchmarks' stores without the periodic
// verification: a store over 24 MiB is read back whole 10 s after Open
// (1.2 GB at a million medallions, many seconds of both cores), and a
// query benchmark running then measured that pass, not its queries.
//
// Once writing stops (and 2 s after Open, which counts as a write), the
// store hands its mapped pages back and the page cache drops them
// (mapped_linux.go): seededDBFor waits for that before it returns, so that
// a benchmark never has it land inside its measurement; its first queries
// then read from disk, as a daemon's first ones after a quiet period do.
var seededOptions = store.Options{VerifyInterval: -1, OnQuiet: func() {
	select {
	case seededQuiet <- struct{}{}:
	default:
	}
}}

var seededQuiet = make(chan struct{}, 1)

// awaitQuiet waits for the store's next quiet signal (see seededOptions).
func awaitQuiet(b *testing.B) {
	select {
	case <-seededQuiet:
	case <-time.After(time.Minute):
		b.Log("the store did not go quiet within a minute")
	}
}

// seededDBFor returns the shared store named name, filling it on first use
// with size medallions made by newMedallion. With MEDALLION_PERF_DIR set,
// the store is kept in that directory under name and a later run reuses
// it (a million medallions take minutes to fill).
func seededDBFor(b *testing.B, name string, size int, newMedallion func(*rand.Rand, int) *medallion.Medallion) *seededDB {
	seededMu.Lock()
	db := seeded[name]
	if db == nil {
		db = &seededDB{}
		seeded[name] = db
	}
	seededMu.Unlock()
	db.once.Do(func() {
		start := time.Now()
		if keep := os.Getenv("MEDALLION_PERF_DIR"); keep != "" {
			db.dir, db.keep = filepath.Join(keep, name), true
			if _, err := os.Stat(filepath.Join(db.dir, "MANIFEST")); err == nil {
				if db.store, db.err = store.Open(db.dir, seededOptions); db.err == nil {
					awaitQuiet(b)
				}
				return
			}
		} else if db.dir, db.err = os.MkdirTemp("", "medallion-bench"); db.err != nil {
			return
		}
		db.store, db.err = store.Open(db.dir, seededOptions)
		if db.err != nil {
			return
		}
		// Medallion i is drawn from its own seed, so the data set does not
		// depend on goroutine scheduling, and is made only when created (a
		// million made up front took gigabytes); a few goroutines create
		// them, which Badger batches into fewer commits.
		const workers = 4
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < size; i += workers {
					m := newMedallion(rand.New(rand.NewPCG(uint64(size), uint64(i))), i)
					if _, err := db.store.Create(context.Background(), m); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		if db.err = <-errs; db.err != nil {
			return
		}
		runtime.GC() // drop the seed data before measuring anything
		// Reopen, as a restarted daemon would, and let Badger finish the
		// compactions the bulk load queued: queries measured while
		// compactions share the two cores would mostly measure those.
		if db.err = db.store.Close(); db.err != nil {
			return
		}
		select {
		case <-seededQuiet: // the fill's, not the reopened store's
		default:
		}
		reopen := time.Now()
		if db.store, db.err = store.Open(db.dir, seededOptions); db.err != nil {
			return
		}
		opened := time.Since(reopen)
		// Badger has no "compactions done" signal: wait until no level is
		// due and the levels have not changed for a second.
		deadline := time.Now().Add(2 * time.Minute)
		levels, due := store.Levels(db.store)
		for still := 0; still < 10 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			now, nowDue := store.Levels(db.store)
			if now == levels && !nowDue && !due {
				still++
			} else {
				still = 0
			}
			levels, due = now, nowDue
		}
		awaitQuiet(b)
		b.Logf("seeded %d medallions in %v, reopened (counting keys) in %v, %d bytes on disk; %s",
			size, time.Since(start).Round(time.Millisecond), opened.Round(time.Millisecond), db.store.DiskUsage(), levels)
	})
	if db.err != nil {
		b.Fatalf("seed %d medallions: %v", size, db.err)
	}
	return db
}

// reportLatencies adds the median and 99th percentile of per-operation
// times: ns/op is a mean, and the README quotes the median.
func reportLatencies(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// reportSlowestFaults reports the page faults of the slowest 1 % of the
// queries, a query on average (slow-faults/op): after a release, whether
// the p99 is the queries that fault many pages back or something else
// (another goroutine, the collector). lat[i] and faults[i] are query i's.
func reportSlowestFaults(b *testing.B, lat []time.Duration, faults []int64) {
	order := make([]int, len(lat))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(lat[j], lat[i]) })
	slowest := order[:max(1, len(order)/100)]
	var n int64
	for _, i := range slowest {
		n += faults[i]
	}
	b.ReportMetric(float64(n)/float64(len(slowest)), "slow-faults/op")
}

// timeScopeQueries runs LatestForScope on s over b.N scopes drawn by scope
// (from a generator seeded with seed) and reports the latency
// percentiles, the CPU per query (a getrusage call of about a microsecond
// included: it counts each query's faults), the page faults and the
// results per query.
func timeScopeQueries(b *testing.B, s *store.Badger, seed uint64, limit int, scope func(*rand.Rand) medallion.Scope) {
	rng := rand.New(rand.NewPCG(seed, seed))
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	results := 0
	// faults[i] is what query i faulted, counted outside its latency:
	// since the count after the query before (drawing a scope between
	// two queries faults nothing).
	faults := make([]int64, 0, b.N)
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	minor0, major0 := pageFaults(b)
	last := minor0
	b.ResetTimer()
	for b.Loop() {
		sc := scope(rng)
		start := time.Now()
		ms, err := s.LatestForScope(ctx, sc, limit)
		lat = append(lat, time.Since(start))
		now, _ := pageFaults(b)
		faults = append(faults, now-last)
		last = now
		if err != nil {
			b.Fatal(err)
		}
		results += len(ms)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/1e3/float64(len(lat)), "cpu-µs/op")
	minor, major := pageFaults(b)
	b.ReportMetric(float64(minor-minor0)/float64(len(lat)), "faults/op")
	b.ReportMetric(float64(major-major0)/float64(len(lat)), "disk-faults/op")
	reportSlowestFaults(b, lat, faults)
	reportLatencies(b, lat)
	b.ReportMetric(float64(results)/float64(len(lat)), "results/op")
}

func BenchmarkLatestForScope(b *testing.B) {
	queries := []struct {
		name  string
		scope func(rng *rand.Rand) medallion.Scope
	}{
		{"node", func(rng *rand.Rand) medallion.Scope {
			return medallion.Scope{GraphNodes: []string{benchNode(rng.IntN(benchNodes))}}
		}},
		{"node+tag", func(rng *rand.Rand) medallion.Scope {
			return medallion.Scope{GraphNodes: []string{benchNode(rng.IntN(benchNodes))}, Tags: []string{benchTag(rng.IntN(benchTags))}}
		}},
		{"tag", func(rng *rand.Rand) medallion.Scope {
			return medallion.Scope{Tags: []string{benchTag(rng.IntN(benchTags))}}
		}},
	}
	const limit = 10
	for _, size := range []int{10_000, 100_000} {
		for _, q := range queries {
			b.Run(fmt.Sprintf("%dk/%s", size/1000, q.name), func(b *testing.B) {
				timeScopeQueries(b, seededStore(b, size), 7, limit, q.scope)
			})
		}
	}
}

func BenchmarkCreate(b *testing.B) {
	s, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	ms := make([]*medallion.Medallion, b.N)
	for i := range ms {
		ms[i] = benchMedallion(rng, i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if _, err := s.Create(ctx, ms[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
}

func BenchmarkUpdate(b *testing.B) {
	s, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(4, 4))
	// Updates rotate over 1,000 medallions, each carrying its own latest
	// version, as checkpoints of many scopes would.
	latest := make([]*medallion.Medallion, 1000)
	for i := range latest {
		if latest[i], err = s.Create(ctx, benchMedallion(rng, i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		m := latest[i%len(latest)]
		m.Summary.HighLevel = fmt.Sprintf("checkpoint %d", i)
		if latest[i%len(latest)], err = s.Update(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "updates/s")
}
