package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
)

// backfillBytes is the size of the transcripts BenchmarkBackfill ingests.
const backfillBytes = 200 << 20

// writeBackfill writes about size bytes of Claude-Code-shaped sessions in
// files files under root: prompts, assistant text, tool calls with paths and
// commands, tool results of 0.5-20 KB and a few of 500 KB, progress noise.
func writeBackfill(tb testing.TB, root string, files int, size int64) int64 {
	tb.Helper()
	var total int64
	for i := range files {
		id := fmt.Sprintf("bf%06d-0000-4000-8000-%012d", i, i)
		dir := filepath.Join(root, fmt.Sprintf("-home-dev-proj%d", i%3))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, id+".jsonl"))
		if err != nil {
			tb.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		g := fixture.NewClaude(id, fmt.Sprintf("/home/dev/proj%d", i%3), uint64(i)+1)
		g.Big, g.BigSize = 3, 500<<10
		var n int64
		for n < size/int64(files) {
			for _, l := range g.Turn() {
				w.Write(l)
				n += int64(len(l))
			}
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
		total += n
	}
	return total
}

// BenchmarkBackfill starts the real daemon on a fresh data dir over 200 MB
// of transcripts and waits until every byte is ingested. It reports the
// throughput (MB/s, from b.SetBytes) and the daemon's peak resident memory
// (VmHWM) under the default memory_limit, and the throughput against one
// goroutine decoding the same lines into map[string]any (issue 12's
// target: ≥ 2×), measured just before each run. On a shared machine that
// ratio moves with the load of the moment, so it also reports the ratio of
// CPU time per byte (decode's over the daemon's, all its goroutines
// included, up to the last byte read). The checkpoint triggers are the
// defaults (every 10 events), so checkpoints run during the backfill as
// they would on a first start; checkpoints-settled-s is when the last of
// them ran (after the start, once none has run for 3 s): whether they
// keep up with the reading.
func BenchmarkBackfill(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc for the peak RSS")
	}
	root := b.TempDir()
	total := writeBackfill(b, root, 8, backfillBytes)
	b.SetBytes(total)
	b.ResetTimer()
	var hwm float64
	var events int64
	var ratios, cpuRatios, settles []float64
	for range b.N {
		b.StopTimer()
		decode := decodeRate(b, root)
		d := newIngestd(b, root, "checkpoint {\n  every_events = 10\n}\n")
		b.StartTimer()
		start := time.Now()
		d.start()
		var st = d.status()
		waitFor(b, 10*time.Minute, "the backfill", func() bool {
			st = d.status()
			return st.Bytes >= total && st.BacklogBytes == 0
		})
		elapsed := time.Since(start)
		b.StopTimer()
		daemonCPU := float64(cpuTicks(b, d.pid())) / 100 // USER_HZ
		// Checkpoints keeping up: how long after the start the last one
		// ran, once none has run for 3 s.
		settled, count := time.Since(start), st.Checkpoints
		for quiet := time.Now(); time.Since(quiet) < 3*time.Second; time.Sleep(100 * time.Millisecond) {
			if n := d.status().Checkpoints; n != count {
				settled, count, quiet = time.Since(start), n, time.Now()
			}
		}
		_, h, err := procMemory(d.pid())
		if err != nil {
			b.Fatal(err)
		}
		hwm = max(hwm, h)
		events = st.Events
		settles = append(settles, settled.Seconds())
		rate, cpuRate := float64(total)/elapsed.Seconds(), float64(total)/daemonCPU
		ratios = append(ratios, rate/decode.wall)
		cpuRatios = append(cpuRatios, cpuRate/decode.cpu)
		b.Logf("%d MB in %s: %.1f MB/s, %.2f× a map[string]any decode at %.1f MB/s; CPU %.1f s, %.1f MB per CPU-second, %.2f× the decode's %.1f; %d events, peak RSS %.0f MB; %d checkpoints, the last %s after the start",
			total>>20, elapsed.Round(time.Millisecond), rate/1e6, rate/decode.wall, decode.wall/1e6,
			daemonCPU, cpuRate/1e6, cpuRate/decode.cpu, decode.cpu/1e6, st.Events, h, count, settled.Round(time.Millisecond))
		d.stop()
		b.StartTimer()
	}
	b.ReportMetric(hwm, "peak-rss-MB")
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(slices.Min(ratios), "min-vs-map-decode")
	b.ReportMetric(slices.Min(cpuRatios), "min-cpu-vs-map-decode")
	b.ReportMetric(slices.Max(settles), "checkpoints-settled-s")
}
