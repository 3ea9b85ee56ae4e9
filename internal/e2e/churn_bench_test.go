package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
)

// BenchmarkFootprintChurn: the daemon as it lives for weeks beside an
// agent. Sessions come and go: each round starts churnPerRound new
// sessions across 20 projects, writes them in two parts (the second one a
// live append), lets them go idle and be checkpointed, and deletes the
// files of sessions older than churnKeepRounds rounds, as agents clean up
// old transcripts. Whatever the daemon keeps per file, per session or per
// checkpoint in memory, threads or file descriptors must not grow with the
// number of sessions it has seen: the benchmark logs the Go heap live after
// the latest collection (GODEBUG=gctrace=1 in the daemon's log), the
// resident memory, the open descriptors and threads after each tenth of
// the rounds, and reports them after the idle period (MEDALLION_PERF_IDLE)
// that follows the last round, descriptors and threads against the first
// round's.
//
//	MEDALLION_PERF=1 go test -run '^$' -bench FootprintChurn -benchtime 1x -timeout 60m -v ./internal/e2e
//
// MEDALLION_PERF_CHURN_ROUNDS sets the rounds (default 40: 2,000 sessions).
func BenchmarkFootprintChurn(b *testing.B) {
	idle := perfOnly(b)
	rounds := 40
	if s := os.Getenv("MEDALLION_PERF_CHURN_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			b.Fatalf("MEDALLION_PERF_CHURN_ROUNDS=%q: want a number of rounds from 2", s)
		}
		rounds = n
	}
	const (
		churnPerRound   = 50
		churnKeepRounds = 4
		churnProjects   = 20
	)
	b.Setenv("GODEBUG", "gctrace=1")
	for range b.N {
		root := b.TempDir()
		d := newIngestd(b, root, "checkpoint {\n  every_events = 10\n  idle = \"1s\"\n}\n")
		d.start()
		var (
			written  int64
			paths    [][]string // each round's files
			first    churnSample
			sessions int
		)
		every := max(rounds/10, 1)
		for r := range rounds {
			var round []string
			parts := make([][]byte, churnPerRound)
			for i := range churnPerRound {
				n := r*churnPerRound + i
				id := fmt.Sprintf("ch%06d-0000-4000-8000-%012d", n, n)
				dir := filepath.Join(root, fmt.Sprintf("-home-dev-proj%d", n%churnProjects))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				g := fixture.NewClaude(id, fmt.Sprintf("/home/dev/proj%d", n%churnProjects), uint64(n)+1)
				var head, tail bytes.Buffer
				for t := range 4 {
					buf := &head
					if t >= 2 {
						buf = &tail
					}
					for _, l := range g.Turn() {
						buf.Write(l)
					}
				}
				path := filepath.Join(dir, id+".jsonl")
				appendTo(b, path, head.Bytes())
				parts[i] = tail.Bytes()
				written += int64(head.Len() + tail.Len())
				round = append(round, path)
			}
			// The second half arrives while the daemon tails the files.
			for i, path := range round {
				appendTo(b, path, parts[i])
			}
			paths = append(paths, round)
			sessions += churnPerRound
			if old := len(paths) - 1 - churnKeepRounds; old >= 0 {
				for _, p := range paths[old] {
					if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
						b.Fatal(err)
					}
				}
				paths[old] = nil
			}
			waitFor(b, 10*time.Minute, "the round to be read", func() bool {
				st := d.status()
				return st.Bytes >= written && st.BacklogBytes == 0
			})
			waitFor(b, 10*time.Minute, "the round's checkpoints", func() bool {
				return d.status().BufferedEvents == 0
			})
			if r%every != every-1 && r != 0 {
				continue
			}
			s := takeChurnSample(b, d, sessions)
			b.Logf("%s", s)
			if r == 0 {
				first = s
			}
		}
		// What stays once the daemon has been idle long enough to hand
		// its memory back: the figure to compare across numbers of rounds.
		time.Sleep(idle)
		s := takeChurnSample(b, d, sessions)
		b.Logf("idle %s: %s", idle, s)
		b.Logf("open files: %s", openFiles(d.pid(), d.dataDir()))
		b.ReportMetric(s.heapMB, "idle-live-heap-MB")
		b.ReportMetric(s.rssMB, "idle-rss-MB")
		b.ReportMetric(float64(s.fds-first.fds), "idle-fd-growth")
		b.ReportMetric(float64(s.threads-first.threads), "idle-thread-growth")
		b.ReportMetric(float64(s.files), "tracked-files")
		d.heapProfile("idle")
		d.stop()
	}
}

// churnSample is what BenchmarkFootprintChurn logs after a round.
type churnSample struct {
	sessions        int
	heapMB, rssMB   float64
	fds, threads    int
	files           int
	checkpoints     int64
	statusSessions  int
	watchedDirs     int
	bufferedEvents  int64
	collectionsSeen int
}

func (s churnSample) String() string {
	return fmt.Sprintf("after %5d sessions: live heap %4.1f MB (%d collections), RSS %5.1f MB, %d fds, %d threads; status: %d files tracked, %d watched dirs, %d sessions, %d checkpoints, %d buffered events",
		s.sessions, s.heapMB, s.collectionsSeen, s.rssMB, s.fds, s.threads, s.files, s.watchedDirs, s.statusSessions, s.checkpoints, s.bufferedEvents)
}

// takeChurnSample reads the daemon's figures once it has been quiet for
// a few seconds: enough for a collection to have run since the round.
func takeChurnSample(b *testing.B, d *ingestd, sessions int) churnSample {
	b.Helper()
	time.Sleep(3 * time.Second)
	st := d.status()
	s := churnSample{sessions: sessions, files: st.Files, watchedDirs: st.WatchedDirs,
		statusSessions: st.Sessions, checkpoints: st.Checkpoints, bufferedEvents: st.BufferedEvents}
	s.heapMB, s.collectionsSeen = liveHeapMB(b, d.log)
	s.rssMB, _, _ = procMemory(d.pid())
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", d.pid())); err == nil {
		s.fds = len(ents)
	}
	s.threads = procThreads(d.pid())
	return s
}

// gcLive matches the heap sizes of a gctrace line: at the start of the
// collection, at its end, and the live heap it marked.
var gcLive = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)

// liveHeapMB returns the live heap of the latest collection in the
// daemon's log, and how many collections the log holds.
func liveHeapMB(b *testing.B, log string) (float64, int) {
	b.Helper()
	f, err := os.Open(log)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	live, n := -1.0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m := gcLive.FindSubmatch(sc.Bytes()); m != nil && bytes.HasPrefix(sc.Bytes(), []byte("gc ")) {
			v, _ := strconv.ParseFloat(string(m[3]), 64)
			live, n = v, n+1
		}
	}
	if live < 0 {
		b.Fatal("no gctrace line in the daemon's log: GODEBUG=gctrace=1 did not reach it")
	}
	return live, n
}

// procThreads returns the Threads line of /proc/PID/status, -1 when it
// cannot be read.
func procThreads(pid int) int {
	st, err := procStatus(pid)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(st["Threads"])
	if err != nil {
		return -1
	}
	return n
}

// openFiles sums up what pid has open: files under dataDir by extension,
// and the rest by kind (socket, pipe, anon_inode:…, path).
func openFiles(pid int, dataDir string) string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	counts := map[string]int{}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		kind := target
		switch {
		case strings.HasPrefix(target, dataDir+"/"):
			kind = "store " + filepath.Ext(target)
		case strings.Contains(target, ":["):
			kind, _, _ = strings.Cut(target, ":[")
		}
		counts[kind]++
	}
	keys := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}
