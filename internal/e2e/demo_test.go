package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDemo runs `make demo`'s script against the binaries built for this
// test: the real daemon ingests our own Claude Code session as it is
// written, curates it at checkpoints, and the script prints what the next
// session would load. The output must hold the load preamble and the items a
// user expects from that session, and the script must leave no daemon and
// no temp dir behind.
func TestDemo(t *testing.T) {
	t.Parallel() // each test has its own daemons, data dirs and sockets
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH: the demo is a POSIX shell script")
	}
	script, err := filepath.Abs("../../testdata/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sh, script, binDir)
	// On timeout, TERM lets the script's trap stop its daemon; KILL only
	// after that had its chance.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	cmd.Env = append(os.Environ(), "MEDALLION_DEMO_DELAY=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	got := string(out)

	for _, want := range []string{
		// medallionctl load: the preamble, then the session's items.
		"This is the current canonical state of repo:muse",
		"Treat it as true unless the user says otherwise.",
		// the user's correction, in their words
		"never edit generated files; change the .proto and run make gen instead",
		// the todos still open
		"Document make gen in CONTRIBUTING.md",
		// the second part: a new rule, the go vet fix, a todo done
		"Always use table-driven tests in this repo.",
		"go vet ./internal/midi/",
		"$ medallionctl history ",
		"$ medallionctl diff ",
		"+ Always use table-driven tests in this repo.",
		"Add a regression test for a tempo change inside a bar  (resolved",
		// what the agent committed, confirmed by git
		"Committed: test(midi): regression test for a tempo change inside a bar. Table-driven TestExportTempoChangeInsideBar",
		// the versions the daemon made by itself are explained
		"the daemon also checkpointed",
		// what the agent receives: the hook's JSON
		"$ medallionctl hook claude-code\n{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"This is the current canonical state of repo:muse",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// Nothing in the save file contradicts the user's rule: the generated
	// file the user forbade editing is no fix, entry point or subsystem.
	if strings.Contains(got, "score.pb.go") {
		t.Error("the demo's save file names score.pb.go, the generated file the user's rule forbids editing")
	}
	if t.Failed() {
		t.Logf("demo output:\n%s", got)
	}

	// Nothing left behind: the temp dir (data, socket, transcripts) is gone,
	// and with it the daemon, which the script stops before removing it.
	m := regexp.MustCompile(`watching (\S+)/claude/projects`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("demo output does not name its temp dir:\n%s", got)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("demo left %s behind (stat: %v)", m[1], err)
	}
}
