package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentStarts: the hooks of sessions that start together each run
// "medalliond start"; exactly one daemon results, and every other start
// says it is already running.
func TestConcurrentStarts(t *testing.T) {
	t.Parallel() // each test has its own daemons, data dirs and sockets
	root := t.TempDir()
	sockDir, err := os.MkdirTemp("", "med")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	dataDir := filepath.Join(root, "data")
	args := []string{"--data-dir", dataDir, "--socket", filepath.Join(sockDir, "m.sock")}
	daemon := filepath.Join(binDir, "medalliond")
	env := append(os.Environ(), "HOME="+root, "XDG_CONFIG_HOME="+filepath.Join(root, "config"))
	t.Cleanup(func() { _ = exec.Command(daemon, append([]string{"stop"}, args...)...).Run() })

	const n = 6
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			cmd := exec.Command(daemon, append([]string{"start"}, args...)...)
			cmd.Env = env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			errs[i] = cmd.Run()
			outs[i] = out.String()
		})
	}
	wg.Wait()
	started := 0
	for i := range n {
		switch {
		case errs[i] == nil && strings.Contains(outs[i], "started medalliond in the background"):
			started++
		case errs[i] != nil && strings.Contains(outs[i], "medalliond is already running "):
		default:
			t.Errorf("start %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	if started != 1 {
		t.Errorf("%d starts succeeded, want 1", started)
	}
	status := exec.Command(daemon, append([]string{"status"}, args...)...)
	status.Env = env
	out, err := status.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `started by "medalliond start"`) || !strings.Contains(string(out), ": answering") {
		t.Errorf("status: %v\n%s", err, out)
	}
	stop := exec.Command(daemon, append([]string{"stop"}, args...)...)
	stop.Env = env
	if out, err := stop.CombinedOutput(); err != nil || !strings.Contains(string(out), "stopped medalliond") {
		t.Errorf("stop: %v\n%s", err, out)
	}
}
