package curate

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/cputime"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// backfillEpisodes parses generated Claude Code sessions (tool results of
// 0.5–20 KB of numbered source lines, as Read returns them) with the
// Claude Code parser's default options, as the daemon does, and cuts them
// into the episodes of the daemon's default checkpoints. It returns them
// with the bytes of event text they hold.
func backfillEpisodes(tb testing.TB, sessions, turns int) (eps []checkpoint.Episode, text int64) {
	tb.Helper()
	scope := []string{"repo:muse"}
	for s := range sessions {
		g := fixture.NewClaude(fmt.Sprintf("bf%06d-0000-4000-8000-000000000000", s), "/home/dev/muse", uint64(s)+1)
		p := transcript.NewClaudeCode(transcript.Options{})
		var events []transcript.Event
		var off int64
		for range turns {
			for _, l := range g.Turn() {
				events = append(events, p.ParseLine(l[:len(l)-1], transcript.Position{File: "s.jsonl", Path: "/x/s.jsonl", Offset: off})...)
				off += int64(len(l))
			}
		}
		checkpoints(events, func(sid, _ string, buf []episode.BufferedEvent) {
			if len(buf) == 0 {
				return
			}
			for _, e := range buf {
				text += int64(len(e.Event.Text))
			}
			eps = append(eps, checkpoint.Episode{SessionID: sid, Scope: scope, Agent: string(transcript.FormatClaudeCode), Events: buf, Context: episode.Derive(buf)})
		})
	}
	if len(eps) == 0 {
		tb.Fatal("no episodes generated")
	}
	return eps, text
}

// corpusEpisodes cuts the shared corpus's Claude Code and Codex sessions
// into the episodes of the daemon's default checkpoints, with the bytes of
// event text they hold; it skips b without the corpus.
func corpusEpisodes(b *testing.B) (eps []checkpoint.Episode, text int64) {
	for format, paths := range corpusFiles(b) {
		for _, path := range paths {
			scope := []string{"repo:" + filepath.Base(path)}
			checkpoints(parseFile(b, format, path), func(sid, _ string, buf []episode.BufferedEvent) {
				if len(buf) == 0 {
					return
				}
				for _, e := range buf {
					text += int64(len(e.Event.Text))
				}
				eps = append(eps, checkpoint.Episode{SessionID: sid, Scope: scope, Agent: string(format), Events: buf, Context: episode.Derive(buf)})
			})
		}
	}
	return eps, text
}

// BenchmarkBackfill measures Tier 0 over a backfill, in MB/s of event
// text: of generated Claude Code sessions, and of the shared corpus's
// sessions when it is there. Each runs Extract alone, and Extract then
// Apply onto each session's medallion (the curator's work without the
// store). Profile it with -cpuprofile to see where Tier 0 spends its time
// per byte of tool output. The machine it runs on is often shared: the
// process's CPU time per op (cpu-ns/op) is steadier than the wall time.
func BenchmarkBackfill(b *testing.B) {
	b.Run("generated", func(b *testing.B) {
		eps, text := backfillEpisodes(b, 4, 150)
		benchmarkTier0(b, eps, text)
	})
	b.Run("corpus", func(b *testing.B) {
		eps, text := corpusEpisodes(b)
		benchmarkTier0(b, eps, text)
	})
}

// benchmarkTier0 runs Extract, and Extract then Apply, over eps, which
// hold text bytes of event text.
func benchmarkTier0(b *testing.B, eps []checkpoint.Episode, text int64) {
	b.Run("extract", func(b *testing.B) {
		b.SetBytes(text)
		defer reportCPU(b)()
		for b.Loop() {
			for _, ep := range eps {
				Extract(ep)
			}
		}
	})
	b.Run("curate", func(b *testing.B) {
		b.SetBytes(text)
		defer reportCPU(b)()
		for b.Loop() {
			meds := map[string]*medallion.Medallion{}
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for _, ep := range eps {
				it := Extract(ep)
				if it.Empty() {
					continue
				}
				now = now.Add(time.Minute)
				m := Apply(meds[ep.SessionID], ep.Scope, it, now)
				m.Meta.Version++
				meds[ep.SessionID] = m
			}
		}
	})
}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per op.
func reportCPU(b *testing.B) func() {
	start, _ := cputime.Self()
	return func() {
		end, _ := cputime.Self()
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}
