package agents

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// install returns the path of command bin from the npm package pkg
// ("name@version"), installing it into cache first unless an earlier run
// did. Each package gets its own prefix directory, filled in a temp
// directory and renamed into place, so an interrupted install is never
// taken for a finished one. Without npm, or with the registry unreachable,
// the test is skipped and says why.
func install(t *testing.T, cache, pkg, bin string) string {
	t.Helper()
	dir := filepath.Join(cache, strings.ReplaceAll(pkg, "/", "+"))
	exe := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(exe); err == nil {
		return exe
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("not tested: npm is not installed, so %s cannot be installed", pkg)
	}
	if err := registryReachable(npm); err != nil {
		t.Skipf("not tested: the npm registry is unreachable (%v), so %s cannot be installed", err, pkg)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(cache, ".installing-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	if out, err := npmRun(npm, 10*time.Minute, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error", pkg); err != nil {
		t.Fatalf("npm install %s: %v\n%s", pkg, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(exe); statErr != nil {
			t.Fatal(err)
		}
		// Another run installed it meanwhile: use theirs.
	}
	t.Logf("installed %s into %s in %s", pkg, dir, time.Since(start).Round(time.Second))
	return exe
}

// registryReachable pings the registry once per run: when it is down,
// every package would wait for the same timeout.
func registryReachable(npm string) error {
	pingOnce.Do(func() {
		if out, err := npmRun(npm, 20*time.Second, "ping", "--fetch-retries=0"); err != nil {
			pingErr = fmt.Errorf("npm ping: %v: %s", err, strings.TrimSpace(out))
		}
	})
	return pingErr
}

var (
	pingOnce sync.Once
	pingErr  error
)

func npmRun(npm string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return tail(string(out)), err
}
