package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/scope"
)

// BenchmarkPipeline ingests 32 MB of Claude-Code-shaped transcripts in four
// files into a fresh store in-process: the pipeline without the daemon
// around it, for profiling (-cpuprofile) what the end-to-end
// BenchmarkBackfill measures.
func BenchmarkPipeline(b *testing.B) {
	dir := b.TempDir()
	var total int64
	var paths []string
	for i := range 4 {
		g := fixture.NewClaude(fmt.Sprintf("bench%03d-0000-4000-8000-000000000000", i), "/home/dev/muse", uint64(i)+1)
		g.Big, g.BigSize = 3, 500<<10
		var data []byte
		for len(data) < 8<<20 {
			for _, l := range g.Turn() {
				data = append(data, l...)
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, path)
		total += int64(len(data))
	}
	b.SetBytes(total)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		st := openStore(b)
		p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}, Scope: scope.New(nil, scope.Options{})})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		run(b, p)
		for _, path := range paths {
			p.Notify("w", path)
		}
		waitFor(b, "the backfill", func() bool { return p.bytes.Load() == total })
		b.StopTimer()
		_ = st.Close()
		b.StartTimer()
	}
}
