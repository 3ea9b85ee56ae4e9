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
//
// With MEDALLION_HEAP_PROFILE set to a folder, the daemon also writes its
// in-use heap profile there at each SIGUSR1 (--heap-profile; heapProfile
// asks for one). With MEDALLION_TRACE, its whole run's execution trace
// (--trace; read it with go tool trace).
func daemonProfileArgs(tb testing.TB) []string {
	tb.Helper()
	var args []string
	if dir := os.Getenv("MEDALLION_HEAP_PROFILE"); dir != "" {
		args = append(args, "--heap-profile", profilePath(tb, dir, "-heap.pprof"))
	}
	if dir := os.Getenv("MEDALLION_CPU_PROFILE"); dir != "" {
		args = append(args, "--cpu-profile", profilePath(tb, dir, ".pprof"))
	}
	if dir := os.Getenv("MEDALLION_TRACE"); dir != "" {
		args = append(args, "--trace", profilePath(tb, dir, ".trace"))
	}
	return args
}

// profilePath creates a file in dir named for the test, ending in suffix,
// and returns its absolute path.
func profilePath(tb testing.TB, dir, suffix string) string {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r == ' ' {
			return '_'
		}
		return r
	}, tb.Name())
	f, err := os.CreateTemp(dir, name+"-*"+suffix)
	if err != nil {
		tb.Fatal(err)
	}
	f.Close()
	path, err := filepath.Abs(f.Name())
	if err != nil {
		tb.Fatal(err)
	}
	return path
}
