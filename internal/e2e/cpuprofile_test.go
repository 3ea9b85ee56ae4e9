package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// daemonProfileArgs: with MEDALLION_CPU_PROFILE set to a folder, every
// daemon a test or benchmark starts writes its whole run's CPU profile
// there when it stops (medalliond run --cpu-profile), one file per run
// named for the test. `make profile` gathers bin/medalliond.pprof this way
// from the benchmarks' workloads. A daemon killed with SIGKILL leaves
// an empty file.
func daemonProfileArgs(tb testing.TB) []string {
	tb.Helper()
	dir := os.Getenv("MEDALLION_CPU_PROFILE")
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r == ' ' {
			return '_'
		}
		return r
	}, tb.Name())
	f, err := os.CreateTemp(dir, name+"-*.pprof")
	if err != nil {
		tb.Fatal(err)
	}
	f.Close()
	path, err := filepath.Abs(f.Name())
	if err != nil {
		tb.Fatal(err)
	}
	return []string{"--cpu-profile", path}
}
