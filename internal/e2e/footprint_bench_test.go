package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/resident"
)

// Issue 12's footprint targets, measured on the real daemon. They take
// minutes, so they run only with MEDALLION_PERF=1:
//
//	MEDALLION_PERF=1 go test -run '^$' -bench Footprint -benchtime 1x -timeout 60m ./internal/e2e
//
// MEDALLION_PERF_IDLE sets the idle measurement (default 60s).
// MEDALLION_PERF_CORPUS=N makes BenchmarkFootprintBackfill read N copies of
// the shared corpus's real Claude Code sessions (every id rewritten per
// copy) instead of generated ones; 41 copies are about 1.6 GB.
const (
	footprintFiles = 2000
	footprintBytes = 1 << 30
)

func perfOnly(b *testing.B) time.Duration {
	b.Helper()
	if os.Getenv("MEDALLION_PERF") == "" {
		b.Skip("a long perf run: set MEDALLION_PERF=1")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("needs /proc")
	}
	idle := 60 * time.Second
	if s := os.Getenv("MEDALLION_PERF_IDLE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("MEDALLION_PERF_IDLE: %v", err)
		}
		idle = d
	}
	return idle
}

// BenchmarkFootprintIdleEmpty: the daemon's CPU over the idle period with
// nothing to watch (target ≤ 0.1 %), and its resident memory.
func BenchmarkFootprintIdleEmpty(b *testing.B) {
	idle := perfOnly(b)
	for range b.N {
		d := newIngestd(b, b.TempDir(), "")
		d.start()
		time.Sleep(5 * time.Second) // past start-up's own work
		cpu := cpuPercent(b, d.pid(), idle)
		rss, _, err := procMemory(d.pid())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(cpu, "idle-cpu-%")
		b.ReportMetric(rss, "idle-rss-MB")
		d.stop()
	}
}

// BenchmarkFootprintBackfill: 1 GiB of Claude Code transcripts in 2,000
// files, last written two days ago (a first start over an existing
// history), backfilled by the real daemon with the default checkpoint
// triggers and memory limit. It reports the peak resident memory during the
// backfill (VmHWM, mapped files included; target ≤ 150 MB), the resident
// memory once the checkpoints have settled and after the idle period
// (target ≤ 40 MB), the CPU used over that period and over the first one
// after it with no one-off work left (idle-cpu-%, settled-idle-cpu-%:
// settledIdle; target ≤ 0.1 %), the memory after a restart over the same
// 2,000 files, and the backfill throughput against a plain map[string]any
// decode of the same lines in one goroutine (target ≥ 2×).
func BenchmarkFootprintBackfill(b *testing.B) {
	idle := perfOnly(b)
	root := b.TempDir()
	total, files := writeFootprint(b, root)
	if n := os.Getenv("MEDALLION_PERF_CORPUS"); n != "" {
		copies, err := strconv.Atoi(n)
		if err != nil || copies < 1 {
			b.Fatalf("MEDALLION_PERF_CORPUS=%q: want a number of copies", n)
		}
		total, files = writeCorpusCopies(b, root, copies)
	}
	dec := decodeRate(b, root)
	decode := dec.wall
	b.ReportMetric(decode/1e6, "map-decode-MB/s")
	for range b.N {
		// The default triggers (newIngestd turns them off unless told).
		d := newIngestd(b, root, "checkpoint {\n  every_events = 10\n  idle = \"10m\"\n}\n")
		start := time.Now()
		d.start()
		peakParts := peakWatch(d.pid(), d.dataDir())
		waitFor(b, 30*time.Minute, "the backfill", func() bool {
			st := d.status()
			return st.Bytes >= total && st.BacklogBytes == 0
		})
		elapsed := time.Since(start)
		readCPU := float64(cpuTicks(b, d.pid())) / 100 // USER_HZ
		_, hwm, _ := procMemory(d.pid())
		// Checkpoints still running after the last byte was read are part
		// of the backfill: wait until they stop moving.
		var last string
		stable := 0
		waitFor(b, 30*time.Minute, "the checkpoints to settle", func() bool {
			st := d.status()
			now := fmt.Sprint(st.Checkpoints, st.BufferedEvents)
			if now == last {
				stable++
			} else {
				stable = 0
			}
			last = now
			time.Sleep(time.Second)
			return stable >= 5
		})
		settled := time.Since(start)
		b.Logf("at the highest RSS sampled: %s", peakParts())
		time.Sleep(5 * time.Second)
		settledRSS, _, _ := procMemory(d.pid())
		b.Logf("settled: %s", rssParts(d.pid(), d.dataDir()))
		settledStore := d.storeMB()
		idleStart := time.Now()
		cpu := idleWatch(b, d.pid(), d.dataDir(), idle)
		idleRSS, hwm2, _ := procMemory(d.pid())
		cpuAfter, periods := settledIdle(b, d, idle)
		logIdleWork(b, d, idleStart)
		b.Logf("peak RSS (VmHWM): %.0f MB when the last byte was read, %.0f MB after the idle period", hwm, hwm2)
		hwm = max(hwm, hwm2)
		b.Logf("idle: %s", rssParts(d.pid(), d.dataDir()))
		idleStore := d.storeMB()
		d.heapProfile("idle")

		d.stop()

		d.start() // the same files, all read: what a restart holds
		time.Sleep(10 * time.Second)
		restartRSS, _, _ := procMemory(d.pid())
		b.Logf("10 s after a restart: %s", rssParts(d.pid(), d.dataDir()))
		idleWatch(b, d.pid(), d.dataDir(), idle)
		restartIdleRSS, _, _ := procMemory(d.pid())

		b.Logf("idle after a restart: %s", rssParts(d.pid(), d.dataDir()))
		restartStore := d.storeMB()
		d.stop()

		rate := float64(total) / elapsed.Seconds()
		cpuRate := float64(total) / readCPU
		b.Logf("%d MiB in %d files: read in %s (%.1f MB/s, %.2f× a map[string]any decode at %.1f MB/s; %.1f CPU-s, %.2f× the decode's bytes per CPU-second), checkpoints settled at %s",
			total>>20, files, elapsed.Round(time.Millisecond), rate/1e6, rate/decode, decode/1e6,
			readCPU, cpuRate/dec.cpu, settled.Round(time.Second))
		b.Logf("RSS: peak %.0f MB, settled %.0f MB, idle %.0f MB, 10 s after a restart %.0f MB, then idle %.0f MB; idle CPU %.3f %% over %s, %.3f %% over the first %s after it that held no export nor reclaim (idle period %d)",
			hwm, settledRSS, idleRSS, restartRSS, restartIdleRSS, cpu, idle, cpuAfter, idle, periods)
		b.Logf("store on disk: %.0f MB settled, %.0f MB after the idle period, %.0f MB after a restart's", settledStore, idleStore, restartStore)
		b.ReportMetric(rate/1e6, "backfill-MB/s")
		b.ReportMetric(rate/decode, "vs-map-decode")
		b.ReportMetric(cpuRate/dec.cpu, "cpu-vs-map-decode")
		b.ReportMetric(hwm, "peak-rss-MB")
		b.ReportMetric(idleRSS, "idle-rss-MB")
		b.ReportMetric(restartRSS, "restart-rss-MB")
		b.ReportMetric(restartIdleRSS, "restart-idle-rss-MB")
		b.ReportMetric(cpu, "idle-cpu-%")
		b.ReportMetric(cpuAfter, "settled-idle-cpu-%")
		b.ReportMetric(float64(periods), "idle-periods")
		b.ReportMetric(idleStore, "idle-store-MB")
	}
}

// storeMB is the store's size on disk as status reports it, in MB. Status
// is a store call (it ends the store's idleness), so it is asked only
// between the idle periods.
func (d *ingestd) storeMB() float64 {
	d.tb.Helper()
	return float64(d.daemonStatus().StoreBytes) / 1e6
}

// writeFootprint writes footprintBytes of sessions in footprintFiles files
// (each its own session, spread over 20 projects) dated two days back, and
// returns the bytes and files written; with MEDALLION_PERF_CORPUS set it
// writes nothing (writeCorpusCopies does).
func writeFootprint(b *testing.B, root string) (total int64, files int) {
	b.Helper()
	if os.Getenv("MEDALLION_PERF_CORPUS") != "" {
		return 0, 0
	}
	per := int64(footprintBytes / footprintFiles)
	old := time.Now().Add(-48 * time.Hour)
	for i := range footprintFiles {
		id := fmt.Sprintf("fp%06d-0000-4000-8000-%012d", i, i)
		dir := filepath.Join(root, fmt.Sprintf("-home-dev-proj%d", i%20))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		g := fixture.NewClaude(id, fmt.Sprintf("/home/dev/proj%d", i%20), uint64(i)+1)
		g.Big, g.BigSize = 3, 500<<10
		for int64(buf.Len()) < per {
			for _, l := range g.Turn() {
				buf.Write(l)
			}
		}
		writeOld(b, filepath.Join(dir, id+".jsonl"), buf.Bytes(), old)
		total += int64(buf.Len())
	}
	return total, footprintFiles
}

// sharedCorpus holds real transcripts of several agents, when this
// repository sits next to it; sharedClaudeCorpus its Claude Code sessions.
var (
	sharedCorpus       = filepath.Join("..", "..", "..", "shared", "corpus")
	sharedClaudeCorpus = filepath.Join(sharedCorpus, "claude-code")
)

// uuidPattern matches the ids a Claude Code transcript carries (session,
// message, tool call parents).
var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// writeCorpusCopies writes copies of the shared corpus's Claude Code
// sessions under root (copyTranscripts); it skips the benchmark when the
// corpus is absent.
func writeCorpusCopies(b *testing.B, root string, copies int) (total int64, files int) {
	b.Helper()
	srcs, _ := filepath.Glob(filepath.Join(sharedClaudeCorpus, "*.jsonl"))
	if len(srcs) == 0 {
		b.Skipf("no Claude Code sessions in %s", sharedClaudeCorpus)
	}
	return copyTranscripts(b, srcs, root, copies)
}

// copyTranscripts writes copies of the transcripts srcs under root, one
// folder per copy, every id rewritten per copy (its first byte) so that no
// two copies share a session or an event, dated two days back.
func copyTranscripts(b *testing.B, srcs []string, root string, copies int) (total int64, files int) {
	b.Helper()
	old := time.Now().Add(-48 * time.Hour)
	for _, src := range srcs {
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		for k := range copies {
			prefix := []byte(fmt.Sprintf("%02x", k%256))
			copied := uuidPattern.ReplaceAllFunc(data, func(id []byte) []byte {
				return append(append([]byte{}, prefix...), id[2:]...)
			})
			dir := filepath.Join(root, fmt.Sprintf("-home-dev-copy%03d", k))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			writeOld(b, filepath.Join(dir, fmt.Sprintf("%03d-%s", k, fieldName(src, data))), copied, old)
			total += int64(len(copied))
			files++
		}
	}
	return total, files
}

// fieldName is the name a corpus file has where its agent writes it: the
// corpus names every session .jsonl, but Gemini CLI up to 0.38 wrote a
// session as one JSON document, rewritten whole, named .json (0.39 and
// later append .jsonl). Under a .jsonl name the daemon reads such a file
// as lines, each of them a skip.
func fieldName(src string, data []byte) string {
	name := filepath.Base(src)
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if strings.HasSuffix(name, ".jsonl") && !json.Valid(first) && json.Valid(data) {
		return strings.TrimSuffix(name, "l")
	}
	return name
}

// writeOld writes a file last modified at mtime.
func writeOld(b *testing.B, path string, data []byte, mtime time.Time) {
	b.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		b.Fatal(err)
	}
}

// decoding is how fast one goroutine decodes every line under root into a
// map[string]any: the floor issue 12 compares the backfill with. wall is
// in bytes per second of elapsed time, cpu per second of this process's
// CPU time (the garbage collector's included), which a busy machine
// disturbs far less.
type decoding struct{ wall, cpu float64 }

func decodeRate(b *testing.B, root string) decoding {
	b.Helper()
	var n int64
	var spent time.Duration
	cpu0 := processCPU(b)
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		start := time.Now()
		for line := range bytes.Lines(data) {
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		spent += time.Since(start)
		n += int64(len(data))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return decoding{wall: float64(n) / spent.Seconds(), cpu: float64(n) / (processCPU(b) - cpu0).Seconds()}
}

// cpuPercent is the CPU (user + system) pid uses over d, in percent of
// one core, from /proc/PID/stat.
func cpuPercent(b *testing.B, pid int, d time.Duration) float64 {
	b.Helper()
	t0 := cpuTicks(b, pid)
	start := time.Now()
	time.Sleep(d)
	t1 := cpuTicks(b, pid)
	const hz = 100 // USER_HZ on Linux
	return float64(t1-t0) / hz / time.Since(start).Seconds() * 100
}

// runNanos is the time pid's threads ran on a CPU in nanoseconds, as
// each thread's schedstat counts it (finer than the stat file's ticks;
// threads that ended are not counted), or 0.
func runNanos(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += n
		}
	}
	return sum
}

func cpuTicks(b *testing.B, pid int) int64 {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	fields := strings.Fields(line[strings.LastIndexByte(line, ')')+1:])
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}

// rssParts breaks pid's resident memory down by what it maps, from
// /proc/PID/smaps: the daemon's binary, the store's files under dataDir
// (tables, value logs, memtable logs), anonymous memory (the Go heap and
// stacks, Badger's memtable arena and block cache) and the rest. It says
// where an idle daemon's megabytes are, which VmRSS alone does not.
func rssParts(pid int, dataDir string) string {
	var binary, store, anon, other float64
	err := resident.Smaps(fmt.Sprintf("/proc/%d/smaps", pid), func(header []string, key, value string) {
		if key != "Rss:" {
			return
		}
		path := ""
		if len(header) >= 6 {
			path = header[5]
		}
		part := &other
		switch {
		case path == "" || path == "[heap]" || path == "[stack]":
			part = &anon
		case strings.HasPrefix(path, dataDir+"/"):
			part = &store
		case filepath.Base(path) == "medalliond":
			part = &binary
		}
		kb, _ := strconv.ParseFloat(value, 64)
		*part += kb / 1024
	})
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("binary %.1f MB, store files %.1f MB, anonymous %.1f MB, other %.1f MB", binary, store, anon, other)
}

// idleWatch is cpuPercent that also samples pid's RSS every second, and
// logs each change of more than 2 MB with the time into the idle period:
// a rise while nothing happens is something still working. A rise of more
// than 20 MB is logged with what it is made of (rssParts of dataDir).
func idleWatch(b *testing.B, pid int, dataDir string, d time.Duration) (cpu float64) {
	b.Helper()
	t0 := cpuTicks(b, pid)
	start := time.Now()
	last, _, _ := procMemory(pid)
	lastRun := runNanos(pid)
	for time.Since(start) < d {
		time.Sleep(time.Second)
		rss, _, err := procMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		// A second with 2 ms or more on a CPU is work, not idling: say
		// when, to be matched with the daemon's log.
		if run := runNanos(pid); run-lastRun >= 2e6 {
			b.Logf("idle CPU %.1f ms in the second to %s", float64(run-lastRun)/1e6, time.Since(start).Round(time.Second))
			lastRun = run
		} else if run > lastRun {
			lastRun = run
		}
		if rss > last+2 || rss < last-2 {
			parts := ""
			if rss > last+20 {
				parts = ": " + rssParts(pid, dataDir)
			}
			b.Logf("idle RSS %.0f → %.0f MB at %s%s", last, rss, time.Since(start).Round(time.Second), parts)
			last = rss
		}
	}
	t1 := cpuTicks(b, pid)
	const hz = 100 // USER_HZ on Linux
	return float64(t1-t0) / hz / time.Since(start).Seconds() * 100
}

// settledIdle watches idle periods after the first one until a period
// holds none of the one-off work a backfill leaves for when it ends (the
// first automatic export, the first reclaim of the cleared events' space:
// each logs a line when it ends) and comes after the first export, and
// returns that period's CPU (target ≤ 0.1 %: the daemon sleeps once there
// is nothing left to do) and which period it was (2 is the one right after
// the first). An idle check runs every 30 s and reclaims only after a
// check that saw no call, so the reclaim comes up to a minute after the
// export. It gives up after five periods and returns the last.
func settledIdle(b *testing.B, d *ingestd, idle time.Duration) (cpu float64, period int) {
	b.Helper()
	for period = 2; ; period++ {
		before := oneOffWork(b, d)
		cpu = idleWatch(b, d.pid(), d.dataDir(), idle)
		after := oneOffWork(b, d)
		if (after == before && before.exports > 0) || period == 6 {
			return cpu, period
		}
	}
}

// The messages the daemon logs when its one-off jobs end: an automatic
// export (internal/daemon) and a reclaim of cleared events' space
// (internal/store).
const (
	exportedLine  = "exported medallions"
	reclaimedLine = "reclaimed the space"
)

// idleWork counts the one-off jobs a daemon's log says it finished.
type idleWork struct{ exports, reclaims int }

func oneOffWork(b *testing.B, d *ingestd) idleWork {
	b.Helper()
	data, err := os.ReadFile(d.log)
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	return idleWork{strings.Count(s, exportedLine), strings.Count(s, reclaimedLine)}
}

// logIdleWork logs when the daemon's automatic exports and its reclaims of
// deleted events' space ran, relative to since: the first export, a minute
// after start, reads every stored version, the first reclaim after a
// backfill rewrites the store, and when they fall in the idle period they
// show there.
func logIdleWork(b *testing.B, d *ingestd, since time.Time) {
	b.Helper()
	data, err := os.ReadFile(d.log)
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		var what, figures string
		switch {
		case strings.Contains(line, exportedLine):
			_, figures, _ = strings.Cut(line, "versions=")
			what, figures = "automatic export", "versions="+figures
		case strings.Contains(line, reclaimedLine):
			_, figures, _ = strings.Cut(line, "before_mib=")
			what, figures = "reclaim", "before_mib="+figures
		default:
			continue
		}
		stamp, _, _ := strings.Cut(line, " ")
		if at, err := time.Parse(time.RFC3339Nano, stamp); err == nil {
			b.Logf("%s %s into the idle period: %s", what, at.Sub(since).Round(time.Second), strings.TrimSpace(figures))
		}
	}
}

// peakWatch samples pid's RSS every 200 ms until the returned function is
// called, which returns the breakdown (rssParts) at the highest sample: what
// the peak was made of.
func peakWatch(pid int, dataDir string) func() string {
	stop := make(chan struct{})
	done := make(chan string)
	go func() {
		var most float64
		var parts string
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				done <- fmt.Sprintf("%.0f MB: %s", most, parts)
				return
			case <-t.C:
			}
			if rss, _, err := procMemory(pid); err == nil && rss > most {
				most, parts = rss, rssParts(pid, dataDir)
			}
		}
	}()
	return func() string {
		close(stop)
		return <-done
	}
}
