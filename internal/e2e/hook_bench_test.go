package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// helloWorld builds a Go hello-world the way buildBinaries builds ours,
// the floor a Go command cannot go below.
func helloWorld(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "hello")
	cmd := exec.Command(goTool(), "build", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build hello-world: %v\n%s", err, msg)
	}
	return out
}

// BenchmarkHookVsHello runs the SessionStart hook (daemon up, three
// medallions of the cwd's repo) and a Go hello-world in turn, both exec'd
// with the hook's input on stdin, and reports each one's median wall time
// and the medians of the pair-by-pair ratios hook/hello, wall and CPU
// (user + system as the kernel counts them). Issue 12's target is a wall
// ratio of at most 1.5; the machine's noise moves single pairs a lot, so
// run it with -benchtime 200x or more.
//
// kept is the hook as it runs for every session but the first in a folder
// since the scope last changed: it reads the daemon's kept answer file.
// asked is that first one: its file removed before each run, it asks the
// daemon (which keeps the answer again).
func BenchmarkHookVsHello(b *testing.B) {
	if raceEnabled {
		b.Skip("the race detector slows the binaries down")
	}
	hello := helloWorld(b)
	d := startDaemon(b)
	repo := seedLoad(b, d)
	in, _ := json.Marshal(map[string]string{"session_id": "bench", "transcript_path": "/tmp/t.jsonl",
		"cwd": repo, "hook_event_name": "SessionStart", "source": "startup"})
	run := func(name string, args ...string) (wall, cpu time.Duration, out []byte) {
		cmd := exec.Command(name, args...)
		cmd.Stdin = bytes.NewReader(in)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		wall = time.Since(start)
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), stdout.Bytes()
	}
	if _, _, out := run(d.ctl, "--socket", d.sock, "hook", "claude-code"); !bytes.Contains(out, []byte(`"additionalContext"`)) {
		b.Fatalf("the hook added no context: %s", out)
	}
	answers := d.sock + ".hook"
	forget := func(b *testing.B) {
		var entries []os.DirEntry
		// The daemon writes the file just after it answers.
		waitFor(b, 10*time.Second, "the daemon keeping the hook's answer", func() bool {
			entries, _ = os.ReadDir(answers)
			return len(entries) > 0
		})
		for _, e := range entries {
			if err := os.Remove(filepath.Join(answers, e.Name())); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, mode := range []string{"kept", "asked"} {
		b.Run(mode, func(b *testing.B) {
			var hookWall, helloWall []time.Duration
			var wallRatio, cpuRatio []float64
			for b.Loop() {
				if mode == "asked" {
					b.StopTimer()
					forget(b)
					b.StartTimer()
				}
				hw, hc, _ := run(d.ctl, "--socket", d.sock, "hook", "claude-code")
				ow, oc, _ := run(hello)
				hookWall, helloWall = append(hookWall, hw), append(helloWall, ow)
				wallRatio = append(wallRatio, float64(hw)/float64(ow))
				if oc > 0 {
					cpuRatio = append(cpuRatio, float64(hc)/float64(oc))
				}
			}
			b.ReportMetric(msMedian(hookWall), "hook-ms")
			b.ReportMetric(msMedian(helloWall), "hello-ms")
			b.ReportMetric(median(wallRatio), "wall-ratio")
			b.ReportMetric(median(cpuRatio), "cpu-ratio")
		})
	}
}

// median is the middle value of v (sorted in place), 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// msMedian is the median of d in milliseconds.
func msMedian(d []time.Duration) float64 {
	v := make([]float64, len(d))
	for i, x := range d {
		v[i] = float64(x.Microseconds()) / 1000
	}
	return median(v)
}
