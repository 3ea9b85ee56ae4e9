//go:build unix

package daemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// BenchmarkExport times the daemon's automatic export (issue 12: the
// minute holding it was the only one above 0.1 % idle CPU) over a store
// of 100 medallions checkpointed 40 times each (400 × 60 with
// MEDALLION_PERF=1), most versions kept as deltas, and reports the
// process's CPU time per export beside the wall time: "written" as if a
// medallion had changed since the last export (its mark is removed
// first), "unchanged" with nothing written since. MEDALLION_PERF_STORE
// names a store to export instead (a copy of a daemon's DATA_DIR/store:
// it is opened, and may be written to, as the daemon would).
func BenchmarkExport(b *testing.B) {
	medallions, versions := 100, 40
	if os.Getenv("MEDALLION_PERF") != "" {
		medallions, versions = 400, 60
	}
	dataDir := b.TempDir()
	dir := filepath.Join(dataDir, "store")
	given := os.Getenv("MEDALLION_PERF_STORE")
	if given != "" {
		dir = given
	}
	st, err := store.Open(dir, store.Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if given == "" {
		seedVersions(b, st, medallions, versions)
	}
	ctx := context.Background()
	state, err := st.ExportState(ctx)
	if err != nil {
		b.Fatal(err)
	}
	e := newExporter(st, dataDir, hclog.NewNullLogger())
	e.keep = 1
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	e.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	for _, changed := range []bool{true, false} {
		name := map[bool]string{true: "written", false: "unchanged"}[changed]
		b.Run(name, func(b *testing.B) {
			cpu0 := cpuTime(b)
			n := 0
			for b.Loop() {
				if changed {
					marks, _ := filepath.Glob(filepath.Join(e.dir, "*.state"))
					for _, m := range marks {
						os.Remove(m)
					}
				}
				if _, err := e.export(ctx); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(n), "cpu-ms/export")
			all := e.exports()
			if len(all) != 1 {
				b.Fatalf("%d exports", len(all))
			}
			fi, err := os.Stat(all[0])
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size())/(1<<20), "MiB/export")
			b.ReportMetric(float64(state.Versions), "versions")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// seedVersions stores medallions medallions of versions versions each,
// every update a checkpoint's worth of change: new evidence, now and then
// a decision, an invariant or a new summary. The texts carry what JSON
// escapes (quotes, <, &, non-ASCII) as real medallions do.
func seedVersions(b *testing.B, st *store.Badger, medallions, versions int) {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(12, 12))
	for i := range medallions {
		m := &medallion.Medallion{
			Meta:  medallion.Meta{MedallionID: fmt.Sprintf("session:%04d", i), SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
			Scope: medallion.Scope{GraphNodes: []string{fmt.Sprintf("repo:r%d", i%7)}, Tags: []string{"project_state"}},
			Summary: medallion.Summary{HighLevel: "The store keeps sessions & medallions; \"deltas\" <between> versions — café.", Subsystems: []medallion.Subsystem{
				{Name: "ingest", Status: medallion.SubsystemStable, Notes: "tails transcripts and stores their events with the file offsets, in one transaction"},
				{Name: "store", Status: medallion.SubsystemInProgress, Notes: "keeps old versions as differences from the next one"},
			}},
		}
		m, err := st.Create(ctx, m)
		if err != nil {
			b.Fatal(err)
		}
		for v := 2; v <= versions; v++ {
			c := m.Clone()
			for range 1 + rng.IntN(2) {
				ev := medallion.Evidence{Item: "invariant", Text: fmt.Sprintf("invariant text number %d that the user stated in a long sentence with `code` and a path/to/file.go", rng.IntN(40)), SessionID: fmt.Sprintf("%08x-3c1d-4b7a-9f1e-2a6d8c4e9b10", i)}
				for range 1 + rng.IntN(4) {
					ev.EventIDs = append(ev.EventIDs, fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()>>16))
				}
				c.Evidence = append(c.Evidence, ev)
			}
			if len(c.Evidence) > medallion.MaxEvidence {
				c.Evidence = c.Evidence[len(c.Evidence)-medallion.MaxEvidence:]
			}
			switch rng.IntN(4) {
			case 0:
				c.Decisions = append(c.Decisions, medallion.Decision{ID: fmt.Sprintf("D-%03d", len(c.Decisions)+1),
					Statement: fmt.Sprintf("decision %d: keep the offsets in the same transaction as the events", v), Rationale: "user request", Confidence: 0.8})
			case 1:
				c.Affordances.Invariants = append(c.Affordances.Invariants, fmt.Sprintf("invariant %d from checkpoint %d: never log a secret", len(c.Affordances.Invariants), v))
			case 2:
				c.Summary.HighLevel = fmt.Sprintf("The store keeps sessions and medallions; rewritten at checkpoint %d.", v)
			}
			c.Meta.KnowledgeMaxTS = medallion.FormatTime(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(v) * time.Minute))
			if m, err = st.Update(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
	}
}
