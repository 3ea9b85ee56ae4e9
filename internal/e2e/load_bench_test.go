package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loadMedallion is a medallion of repo:x with some of everything, about
// the size Tier 0 curation produces for a busy session.
func loadMedallion(i int) string {
	var inv, fixes, dec, qs []string
	for j := 0; j < 8; j++ {
		inv = append(inv, fmt.Sprintf("%q", fmt.Sprintf("never edit generated file gen/%d.go by hand; run go generate ./... instead", j)))
		fixes = append(fixes, fmt.Sprintf("%q", fmt.Sprintf("when go test ./internal/p%d fails with missing go.sum entry: run go mod download first", j)))
		dec = append(dec, fmt.Sprintf(`{"id":"D-%03d","statement":"use badger for storage layer %d","rationale":"embedded, no server to run","confidence":0.8}`, j, j))
		qs = append(qs, fmt.Sprintf(`{"id":"Q-%03d","question":"finish the migration of module %d","blocked_on":[],"priority":"%s"}`, j, j, []string{"high", "medium", "low"}[j%3]))
	}
	return fmt.Sprintf(`{"meta":{"medallion_id":"x-state-%d","schema_version":"medallion.v1","model":"tier0","status":"active"},
"scope":{"graph_nodes":["repo:x"],"tags":["project_state"]},
"summary":{"high_level":"x is a service that stores save files; the storage layer is being migrated.","subsystems":[{"name":"internal/store","status":"in_progress","notes":"migrating"}]},
"decisions":[%s],"open_questions":[%s],
"affordances":{"recommended_entry_points":["cmd/x/main.go"],"avoid_repeating":[%s],"invariants":[%s]}}`,
		i, strings.Join(dec, ","), strings.Join(qs, ","), strings.Join(fixes, ","), strings.Join(inv, ","))
}

// seedLoad stores three medallions of repo:x through the CLI and returns
// a git working tree named x, which the daemon resolves to repo:x.
func seedLoad(b testing.TB, d *daemon) string {
	b.Helper()
	dir := b.TempDir()
	for i := 0; i < 3; i++ {
		f := filepath.Join(dir, fmt.Sprintf("m%d.json", i))
		if err := os.WriteFile(f, []byte(loadMedallion(i)), 0o600); err != nil {
			b.Fatal(err)
		}
		if out, err := exec.Command(d.ctl, "--socket", d.sock, "put", "-f", f).CombinedOutput(); err != nil {
			b.Fatalf("put: %v: %s", err, out)
		}
	}
	repo := filepath.Join(dir, "x")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		b.Fatal(err)
	}
	return repo
}

// BenchmarkCtlLoad measures the whole-process `medallionctl load --node
// repo:x` against a real daemon holding three medallions of the scope.
func BenchmarkCtlLoad(b *testing.B) {
	d := startDaemon(b)
	seedLoad(b, d)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out, err := exec.Command(d.ctl, "--socket", d.sock, "load", "--node", "repo:x").CombinedOutput()
		if err != nil {
			b.Fatalf("load: %v: %s", err, out)
		}
		lat = append(lat, time.Since(start))
		if i == 0 && !bytes.Contains(out, []byte("canonical state of repo:x")) {
			b.Fatalf("load printed no save file:\n%s", out)
		}
	}
	b.StopTimer()
	reportLatencies(b, lat)
}

// runHook runs `medallionctl hook claude-code` with the SessionStart input
// of a session in cwd and returns its stdout.
func runHook(b *testing.B, ctl, sock, cwd string, flags ...string) []byte {
	b.Helper()
	in, _ := json.Marshal(map[string]string{"session_id": "bench", "transcript_path": "/tmp/t.jsonl",
		"cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"})
	cmd := exec.Command(ctl, append([]string{"--socket", sock, "hook", "claude-code"}, flags...)...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		b.Fatalf("hook: %v; stderr %s", err, stderr.Bytes())
	}
	return out
}

// BenchmarkHookUp measures the SessionStart hook with the daemon up: read
// stdin, load the cwd's save file, print the hook JSON. with-context is 1
// when the daemon resolved the cwd and the hook added context.
func BenchmarkHookUp(b *testing.B) {
	d := startDaemon(b)
	repo := seedLoad(b, d)
	lat := make([]time.Duration, 0, b.N)
	withContext := 0.0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out := runHook(b, d.ctl, d.sock, repo)
		lat = append(lat, time.Since(start))
		if i == 0 && bytes.Contains(out, []byte(`"additionalContext"`)) {
			withContext = 1
		}
	}
	b.StopTimer()
	reportLatencies(b, lat)
	b.ReportMetric(withContext, "with-context")
}

// BenchmarkHookDown measures the hook with no daemon on the socket: it must
// print nothing and exit 0 well within Claude Code's patience.
func BenchmarkHookDown(b *testing.B) {
	dir, err := os.MkdirTemp("", "med")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "none.sock")
	ctl := filepath.Join(binDir, "medallionctl")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		// --no-start: the hook would start medalliond for the next
		// sessions (on the user's own data directory), and every run
		// after the first would then find it up.
		if out := runHook(b, ctl, sock, dir, "--no-start"); len(out) != 0 {
			b.Fatalf("hook printed %q with the daemon down", out)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatencies(b, lat)
}
