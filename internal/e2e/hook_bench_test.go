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
//
// installed runs copies of both binaries written with write(2), as
// install(1), go install from the build cache or a package manager write
// them; just-linked runs the files the Go linker wrote (through mmap, then
// renamed into place), which stay slower to start while their pages are
// cached that way: 9-11 % for the same medallionctl in interleaved pairs,
// 7 % for the hello-world (Linux 6.18, ext4). A binary read back from disk
// after a reboot is in the first case.
//
// MEDALLION_HOOK_IDLE=300ms runs each process after that long idle.
func BenchmarkHookVsHello(b *testing.B) {
	if raceEnabled {
		b.Skip("the race detector slows the binaries down")
	}
	// MEDALLION_HOOK_IDLE (a duration) sleeps that long before each run of
	// either: the hook as it runs in real use, after the daemon (and the
	// machine) idled, rather than every 2 ms.
	var idle time.Duration
	if v := os.Getenv("MEDALLION_HOOK_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("MEDALLION_HOOK_IDLE: %v", err)
		}
		idle = d
	}
	pause := func(b *testing.B) {
		if idle > 0 {
			b.StopTimer()
			time.Sleep(idle)
			b.StartTimer()
		}
	}
	linkedHello := helloWorld(b)
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
		var names []string
		// The daemon writes the file just after it answers.
		waitFor(b, 10*time.Second, "the daemon keeping the hook's answer", func() bool {
			names = answerFiles(answers)
			return len(names) > 0
		})
		for _, name := range names {
			if err := os.Remove(filepath.Join(answers, name)); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, files := range []string{"installed", "just-linked"} {
		ctl, hello := d.ctl, linkedHello
		if files == "installed" {
			ctl, hello = installCopy(b, d.ctl), installCopy(b, linkedHello)
		}
		for _, mode := range []string{"kept", "asked"} {
			b.Run(files+"/"+mode, func(b *testing.B) {
				var hookWall, helloWall []time.Duration
				var wallRatio, cpuRatio []float64
				for b.Loop() {
					if mode == "asked" {
						b.StopTimer()
						forget(b)
						b.StartTimer()
					}
					pause(b)
					hw, hc, _ := run(ctl, "--socket", d.sock, "hook", "claude-code")
					pause(b)
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
}

// installCopy copies the executable at path into a new file with
// write(2), as install(1) does, and returns the copy's path.
func installCopy(b *testing.B, path string) string {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	dst := filepath.Join(b.TempDir(), filepath.Base(path))
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return dst
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
