package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// daemon is a real medalliond started for a benchmark.
type daemon struct {
	cmd  *exec.Cmd
	sock string
	ctl  string
}

func startDaemon(tb testing.TB) *daemon { return startDaemonWith(tb) }

// startDaemonWith is startDaemon with more arguments to "medalliond run".
func startDaemonWith(tb testing.TB, args ...string) *daemon {
	tb.Helper()
	dir, err := os.MkdirTemp("", "med")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	d := &daemon{sock: filepath.Join(dir, "s", "m.sock"), ctl: filepath.Join(binDir, "medallionctl")}
	d.cmd = exec.Command(filepath.Join(binDir, "medalliond"),
		append(append([]string{"run", "--data-dir", filepath.Join(dir, "data"), "--socket", d.sock, "--log-level", "warn"}, args...), daemonProfileArgs(tb)...)...)
	d.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	d.run(tb)
	return d
}

// run starts d.cmd and waits for the daemon to answer.
func (d *daemon) run(tb testing.TB) {
	tb.Helper()
	d.cmd.Stderr = os.Stderr
	if err := d.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(d.stop)
	if err := waitForSocket(d.ctl, d.sock); err != nil {
		tb.Fatal(err)
	}
}

// restartDaemon starts a daemon as d was started, on its socket and data
// dir, once d has stopped.
func restartDaemon(tb testing.TB, d *daemon) *daemon {
	tb.Helper()
	d2 := &daemon{sock: d.sock, ctl: d.ctl, cmd: exec.Command(d.cmd.Path, d.cmd.Args[1:]...)}
	d2.cmd.Env = d.cmd.Env
	d2.run(tb)
	return d2
}

// stop interrupts the daemon and waits for it; it is idempotent.
func (d *daemon) stop() {
	if d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(os.Interrupt)
	_ = d.cmd.Wait()
}

// reportLatencies adds median and p99 metrics; the README quotes medians.
func reportLatencies(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkCtlStatus measures the whole-process round trip of
// `medallionctl status`: exec, dial, request, render, exit.
func BenchmarkCtlStatus(b *testing.B) {
	d := startDaemon(b)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out, err := exec.Command(d.ctl, "--socket", d.sock, "status").CombinedOutput()
		if err != nil {
			b.Fatalf("status: %v: %s", err, out)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatencies(b, lat)
}

// BenchmarkDaemonIdleRSS starts the daemon, lets it settle for two seconds and
// reports its resident set size (and peak) from /proc.
func BenchmarkDaemonIdleRSS(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc")
	}
	var rss, hwm float64
	for i := 0; i < b.N; i++ {
		d := startDaemon(b)
		time.Sleep(2 * time.Second) // idle on purpose: this measures the settled daemon
		r, h, err := procMemory(d.cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		rss, hwm = r, h
		d.stop() // one daemon at a time: each holds an inotify instance
	}
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric(hwm, "peak-rss-MB")
}

// procMemory reads VmRSS and VmHWM (in MB) of pid.
func procMemory(pid int) (rss, hwm float64, err error) {
	st, err := procStatus(pid)
	if err != nil {
		return 0, 0, err
	}
	rss, _ = strconv.ParseFloat(st["VmRSS"], 64)
	hwm, _ = strconv.ParseFloat(st["VmHWM"], 64)
	return rss / 1024, hwm / 1024, nil
}

// procStatus reads /proc/PID/status: each line's name (without its colon)
// and the first word of its value ("VmRSS": "20480", its kB unit dropped).
func procStatus(pid int) (map[string]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for line := range strings.Lines(string(data)) {
		name, value, ok := strings.Cut(line, ":")
		if fields := strings.Fields(value); ok && len(fields) > 0 {
			out[name] = fields[0]
		}
	}
	return out, nil
}
