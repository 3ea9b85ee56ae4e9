package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/medallionhq/medallion/internal/store"
)

// BenchmarkEpisodeTotals measures, over 2,000 sessions of 20 events each
// (issue 12: the daemon's status at 2,000 sessions ≤ 2 ms), what status
// asks the store (EpisodeTotals) and what opening the store costs, which
// now sums the session records once.
func BenchmarkEpisodeTotals(b *testing.B) {
	const sessions, perSession = 2000, 20
	dir := b.TempDir()
	s, err := store.Open(dir, store.Options{GCInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range sessions {
		sid := fmt.Sprintf("%08x-3c1d-4b7a-9f1e-2a6d8c4e9b10", i)
		evs := benchBatch(rng, sid, perSession)
		for j := range evs {
			evs[j].ID = fmt.Sprintf("cc:%d:%d", i, j)
		}
		fs := store.FileState{Key: fmt.Sprintf("2049:%d", i), Path: evs[0].Source.Path, Format: "claude-code", Watch: "claude"}
		if _, err := s.Ingest(ctx, store.IngestBatch{File: fs, Events: evs,
			Scopes: map[string][]string{sid: {"repo:muse", "path:internal/store"}}}); err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			if err := s.ClearEpisode(ctx, sid, perSession/2); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}

	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			s, err := store.Open(dir, store.Options{GCInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("status", func(b *testing.B) {
		s, err := store.Open(dir, store.Options{GCInterval: -1})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for b.Loop() {
			n, buffered, _, err := s.EpisodeTotals(ctx)
			if err != nil || n != sessions || buffered != sessions/2*perSession/2+sessions/2*perSession {
				b.Fatalf("%d sessions, %d buffered, %v", n, buffered, err)
			}
		}
	})
}
