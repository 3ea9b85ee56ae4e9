package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
)

// corpusCopies is how many copies of the shared corpus's sessions
// BenchmarkCorpusBackfill reads: about 185 MB, near BenchmarkBackfill's
// 200 MB of generated sessions.
const corpusCopies = 4

// sharedCorpusWatches are the shared corpus's folders in the formats the
// daemon reads, each watched as its own folder; Gemini CLI's sessions are
// whole-file JSON (.json, and .jsonl from newer versions), beside a
// logs.json that is no transcript.
var sharedCorpusWatches = []struct{ name, format, include, exclude string }{
	{"claude-code", "claude-code", `["**/*.jsonl"]`, `[]`},
	{"codex", "codex", `["**/*.jsonl"]`, `[]`},
	{"gemini", "gemini", `["**/*.jsonl", "**/*.json"]`, `["**/*logs.json"]`},
}

// BenchmarkCorpusBackfill starts the real daemon on a fresh data dir over
// corpusCopies copies of the shared corpus's real Claude Code, Codex and
// Gemini CLI sessions (every id rewritten per copy), with the default
// checkpoint triggers, and waits until every byte is read and the
// checkpoints have settled. It reports the throughput of the reading and
// the daemon's CPU time over the whole backfill. It skips when the corpus
// is absent (../shared/corpus beside the repository).
func BenchmarkCorpusBackfill(b *testing.B) {
	root := b.TempDir()
	var total int64
	var files int
	var extra string
	for _, w := range sharedCorpusWatches {
		srcs, _ := filepath.Glob(filepath.Join(sharedCorpus, w.name, "*"))
		if len(srcs) == 0 {
			b.Skipf("no %s sessions in %s", w.name, sharedCorpus)
		}
		n, f := copyTranscripts(b, srcs, filepath.Join(root, w.name), corpusCopies)
		total, files = total+n, files+f
		extra += fmt.Sprintf("watch %q {\n  path    = %q\n  format  = %q\n  include = %s\n  exclude = %s\n}\n",
			w.name, filepath.Join(root, w.name), w.format, w.include, w.exclude)
	}
	// newIngestd watches its root with format auto: here an empty folder
	// beside the three.
	for range b.N {
		d := newIngestd(b, filepath.Join(root, "none"), "checkpoint {\n  every_events = 10\n  idle = \"10m\"\n}\n"+extra)
		start := time.Now()
		d.start()
		// Done when nothing has moved for 5 s: the bytes read, the events,
		// the checkpoints.
		var last string
		read, settled := start, start
		var st *api.IngestStatus
		waitFor(b, 10*time.Minute, "the backfill to settle", func() bool {
			time.Sleep(200 * time.Millisecond)
			prev := st
			st = d.status()
			if prev == nil || st.Bytes != prev.Bytes {
				read = time.Now()
			}
			if now := fmt.Sprint(st.Bytes, st.Events, st.Checkpoints, st.BufferedEvents); now != last {
				last, settled = now, time.Now()
			}
			return time.Since(settled) >= 5*time.Second
		})
		cpu := float64(cpuTicks(b, d.pid())) / 100 // USER_HZ
		d.stop()
		readFor := read.Sub(start)
		b.Logf("%d MiB in %d files: read in %s (%.1f MB/s), settled after %s, %.1f CPU-s; %d events, %d checkpoints; backlog %d B; skipped %v",
			total>>20, files, readFor.Round(time.Millisecond), float64(st.Bytes)/readFor.Seconds()/1e6,
			settled.Sub(start).Round(time.Millisecond), cpu, st.Events, st.Checkpoints, st.BacklogBytes, st.Skipped)
		b.ReportMetric(float64(st.Bytes)/readFor.Seconds()/1e6, "backfill-MB/s")
		b.ReportMetric(cpu, "cpu-s")
	}
}
