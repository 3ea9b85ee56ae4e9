package store

import (
	"context"
	"os"
	"testing"
	"time"
)

// BenchmarkHistory lists the history of one medallion checkpointed
// 1,000 times (10,000 with MEDALLION_PERF=1, issue 12's target: ≤ 100 ms
// in the daemon), each version adding evidence and now and then a
// decision or an invariant (checkpointed), and reports what a version
// costs stored against whole: the records (what stays once the value-log
// collector has dropped the whole copies each update wrote) and the
// latest version.
func BenchmarkHistory(b *testing.B) {
	n := 1000
	if os.Getenv("MEDALLION_PERF") != "" {
		n = 10_000
	}
	s, err := Open(b.TempDir(), Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	want := grow(b, s, "busy", n)
	grew := time.Since(start)
	var stored, whole int
	for i, r := range records(b, s, "busy") {
		enc, _ := want[i].MarshalBinary()
		stored, whole = stored+len(r), whole+len(enc)
	}
	latest, _ := want[n-1].MarshalBinary()
	b.Logf("%d versions written in %v (%.2f ms/update)", n, grew.Round(time.Millisecond), float64(grew.Microseconds())/1000/float64(n))
	// Each update wrote the new version whole to the value log; the
	// collector (every 10 minutes in the daemon) drops the copies no key
	// points at any more once compactions have counted them.
	du := func() int64 {
		n, err := allocatedBytes(s.dir, func(string) bool { return true })
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	before := du()
	// A reopen flushes the memtable (the versions' records are small
	// enough to stay in it), so that compactions see the keys whose
	// values were replaced.
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if s, err = Open(s.dir, Options{GCInterval: -1, Reserve: -1}); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.db.Flatten(1); err != nil {
		b.Fatal(err)
	}
	for s.db.RunValueLogGC(0.5) == nil {
	}
	b.Logf("on disk: %d MiB after the updates, %d MiB once collected", before>>20, du()>>20)
	ctx := context.Background()
	// The dearest version to read: the one after a whole one, rebuilt
	// through keyframeEvery-1 deltas.
	t0 := time.Now()
	if _, err := s.GetVersion(ctx, "busy", keyframeEvery+1); err != nil {
		b.Fatal(err)
	}
	b.Logf("GetVersion through %d deltas: %v", keyframeEvery-1, time.Since(t0).Round(time.Microsecond))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h, err := s.History(ctx, "busy")
		if err != nil || len(h) != n {
			b.Fatalf("%d entries, %v", len(h), err)
		}
	}
	b.ReportMetric(float64(stored)/float64(n), "stored-B/version")
	b.ReportMetric(float64(whole)/float64(n), "whole-B/version")
	b.ReportMetric(float64(len(latest)), "latest-B")
	// Issue 12: evidence should not dominate the medallion.
	bare := want[n-1].Clone()
	bare.Evidence = nil
	rest, _ := bare.MarshalBinary()
	b.ReportMetric(100*float64(len(latest)-len(rest))/float64(len(latest)), "evidence-%")
}
