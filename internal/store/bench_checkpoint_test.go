package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/store"
)

// BenchmarkClearEpisodeLongSession plays one live session of 50,000
// events: the tailer hands over 10 events at a time (a chunk each) and a
// checkpoint clears the buffer every 100 events, 500 checkpoints in all.
// It reports the median ClearEpisode time of the first and of the last 50
// checkpoints and their ratio: a checkpoint must cost the same at event
// 50,000 as at event 100 (issue 12: ≤ 1.5×). One iteration is the whole
// session; run it with -benchtime 1x.
func BenchmarkClearEpisodeLongSession(b *testing.B) {
	const (
		events    = 50_000
		perBatch  = 10
		perClear  = 100
		window    = 50
		sessionID = "0b7e5f0e-3c1d-4b7a-9f1e-2a6d8c4e9b10"
	)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	evs := benchBatch(rng, sessionID, perBatch)
	var first, last, ratio float64
	for b.Loop() {
		b.StopTimer()
		s, err := store.Open(b.TempDir(), store.Options{GCInterval: -1})
		if err != nil {
			b.Fatal(err)
		}
		fs := store.FileState{Key: "2049:1234567", Path: evs[0].Source.Path, Dev: 2049, Ino: 1234567, Format: "claude-code", Watch: "claude"}
		clears := make([]time.Duration, 0, events/perClear)
		b.StartTimer()
		for n := 0; n < events; n += perBatch {
			for i := range evs {
				evs[i].ID = fmt.Sprintf("cc:rec:%018d", n+i)
			}
			fs.Offset += int64(perBatch * 1400)
			if _, err := s.Ingest(ctx, store.IngestBatch{File: fs, Events: evs}); err != nil {
				b.Fatal(err)
			}
			if (n+perBatch)%perClear != 0 {
				continue
			}
			start := time.Now()
			if err := s.ClearEpisode(ctx, sessionID, uint64(n+perBatch)); err != nil {
				b.Fatal(err)
			}
			clears = append(clears, time.Since(start))
		}
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		first = medianMs(clears[:window])
		last = medianMs(clears[len(clears)-window:])
		ratio = last / first
		b.StartTimer()
	}
	b.ReportMetric(first, "first-clear-ms")
	b.ReportMetric(last, "last-clear-ms")
	b.ReportMetric(ratio, "last/first")
}

// medianMs is the median of d in milliseconds.
func medianMs(d []time.Duration) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	return float64(d[len(d)/2].Microseconds()) / 1000
}
