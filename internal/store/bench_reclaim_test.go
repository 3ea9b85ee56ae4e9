package store

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/resident"
)

// BenchmarkReclaim: the first reclaim after a backfill, on a store that
// had about 240 MiB of events written and cleared (writeAndClear's 420
// sessions of 500 events of about 1 KB; four 64 MiB value logs), with the
// default value-log size and reclaim threshold. Besides its time it
// reports the highest Go heap in use and file-backed resident memory
// (the test binary's own pages included) sampled every 2 ms while it
// runs: issue 12's peak RSS counts both.
//
//	go test -run '^$' -bench BenchmarkReclaim -benchtime 3x ./internal/store
func BenchmarkReclaim(b *testing.B) {
	var heap, mapped uint64
	for range b.N {
		b.StopTimer()
		s := openIngest(b, b.TempDir(), nil)
		writeAndClear(b, s, "bench", 420)
		s.PageOut()
		runtime.GC()
		before := s.DiskUsage()
		peak := samplePeaks(2 * time.Millisecond)
		b.StartTimer()
		ok := s.reclaimIfDue()
		b.StopTimer()
		h, m := peak()
		heap, mapped = max(heap, h), max(mapped, m)
		if !ok {
			b.Fatal("no reclaim")
		}
		b.ReportMetric(float64(before>>20), "before-MiB")
		b.ReportMetric(float64(s.DiskUsage()>>20), "after-MiB")
		s.Close()
	}
	b.ReportMetric(float64(heap>>20), "peak-heap-MB")
	b.ReportMetric(float64(mapped>>20), "peak-mapped-MB")
}

// samplePeaks samples the Go heap in use and the process's file-backed
// resident memory every period until the function it returns is called,
// which returns their highest values.
func samplePeaks(period time.Duration) (stop func() (heap, mapped uint64)) {
	done := make(chan struct{})
	out := make(chan [2]uint64)
	go func() {
		var ms runtime.MemStats
		var heap, mapped uint64
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				out <- [2]uint64{heap, mapped}
				return
			case <-t.C:
			}
			runtime.ReadMemStats(&ms)
			heap = max(heap, ms.HeapInuse)
			mapped = max(mapped, uint64(max(resident.FileBacked(), 0)))
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		p := <-out
		return p[0], p[1]
	}
}

// TestTightHeapNests: the collector's goal is tightGCPercent while any
// pass runs, and the goal from before the first once the last has ended,
// in whatever order they end; a lower goal is kept.
func TestTightHeapNests(t *testing.T) {
	gcPercent := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	a := tightHeap()
	bEnd := tightHeap()
	if got := gcPercent(); got != tightGCPercent {
		t.Fatalf("GOGC %d with two passes running, want %d", got, tightGCPercent)
	}
	a()
	if got := gcPercent(); got != tightGCPercent {
		t.Fatalf("GOGC %d with one pass still running, want %d", got, tightGCPercent)
	}
	bEnd()
	if got := gcPercent(); got != 150 {
		t.Fatalf("GOGC %d once the passes ended, want 150 as before", got)
	}
	debug.SetGCPercent(10)
	end := tightHeap()
	if got := gcPercent(); got != 10 {
		t.Fatalf("GOGC %d during a pass from 10, want 10 kept", got)
	}
	end()
	if got := gcPercent(); got != 10 {
		t.Fatalf("GOGC %d after a pass from 10, want 10", got)
	}
}
