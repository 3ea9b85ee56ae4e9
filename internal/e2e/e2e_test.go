// Package e2e drives the real medalliond and medallionctl binaries end to end:
// it builds both once, then runs the txtar scripts in testdata/script with
// github.com/rogpeppe/go-internal/testscript, each against its own daemon,
// data dir and socket.
package e2e

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/service"
)

// binDir holds the freshly built binaries; set by TestMain.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	quickRaceExit()
	moreParallel()
	dir, err := os.MkdirTemp("", "medallion-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir = dir
	return m.Run()
}

// quickRaceExit turns off the race runtime's one-second sleep at every
// successful exit (GORACE atexit_sleep_ms, default 1000) for the binaries
// the tests run: the scripts run a few hundred medallionctl commands, and
// that sleep was most of this package's time (131 s of go test -race, 32 s
// without). Races are still found and reported while a process runs; the
// sleep only gives other goroutines a last moment before exit. Testscript
// passes GORACE on to the scripts; an explicit setting is kept.
func quickRaceExit() {
	if v := os.Getenv("GORACE"); !strings.Contains(v, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(v+" atexit_sleep_ms=0"))
	}
}

// e2eParallel is how many tests and scripts run at once unless -parallel
// says otherwise. They spend most of their time waiting on the daemons
// they drive, so go test's default of one per core (2 on CI) leaves the
// machine idle.
const e2eParallel = 4

// moreParallel raises -test.parallel to e2eParallel when it was not given.
func moreParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if f := flag.Lookup("test.parallel"); f != nil && !set {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n < e2eParallel {
			_ = f.Value.Set(strconv.Itoa(e2eParallel))
		}
	}
}

// buildBinaries compiles both commands into dir, with the race detector when
// this test binary has it, so the end-to-end runs check the daemon too.
func buildBinaries(dir string) error {
	args := []string{"build", "-o", dir + string(os.PathSeparator)}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/medallionhq/medallion/cmd/medalliond", "github.com/medallionhq/medallion/cmd/medallionctl")
	cmd := exec.Command(goTool(), args...)
	if !raceEnabled {
		// As the Makefile builds them (the race detector needs cgo).
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build binaries: %w", err)
	}
	return nil
}

// goTool finds the go command: the one running this test (go test sets
// GOROOT in its environment for the tests it runs), else the PATH's.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestScripts(t *testing.T) {
	t.Parallel() // each test has its own daemons, data dirs and sockets
	// A hung daemon must fail the scripts in minutes, not eat the whole
	// go test timeout.
	deadline := time.Now().Add(4 * time.Minute)
	if d, ok := t.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	testscript.Run(t, testscript.Params{
		Deadline: deadline,
		Dir:      "testdata/script",
		Setup:    setupScript,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsonget": cmdJSONGet,
			"later":   cmdLater,
			"eq":      cmdEq,
			"cptree":  cmdCpTree, "waitctl": cmdWaitCtl, // ingestion scripts (ingest_cmds_test.go)
		},
		Condition:           condition,
		RequireExplicitExec: true,
	})
}

// condition answers the scripts' custom conditions:
//
//	[servicemanager]  medalliond can install itself here (systemd or launchd)
func condition(cond string) (bool, error) {
	switch cond {
	case "servicemanager":
		_, err := service.New(service.Options{Executable: "/usr/bin/medalliond"})
		if errors.Is(err, service.ErrNoServiceManager) {
			return false, nil
		}
		return err == nil, err
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// setupScript gives each script the binaries on PATH, a private HOME and XDG
// dirs inside $WORK, and a short socket path ($SOCK, also MEDALLION_SOCKET)
// because sun_path is limited to ~104 bytes and $WORK can be longer.
func setupScript(env *testscript.Env) error {
	sockDir, err := os.MkdirTemp("", "med")
	if err != nil {
		return err
	}
	env.Defer(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s", "medallion.sock")
	env.Setenv("PATH", binDir+string(os.PathListSeparator)+env.Getenv("PATH"))
	env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, "home", ".config"))
	env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, "home", ".local", "share"))
	env.Setenv("XDG_RUNTIME_DIR", sockDir)
	env.Setenv("SOCK", sock)
	env.Setenv("MEDALLION_SOCKET", sock)
	// A script that fails between "medalliond start" and "medalliond stop"
	// must not leave a detached daemon behind.
	dataDir := filepath.Join(env.WorkDir, "home", ".local", "share", "medallion")
	env.Defer(func() {
		if fileExists(filepath.Join(dataDir, "medalliond.lock")) {
			_ = exec.Command(filepath.Join(binDir, "medalliond"), "stop", "--data-dir", dataDir, "--socket", sock, "--wait", "10s").Run()
		}
	})
	return nil
}

// cmdJSONGet: jsonget FILE PATH VAR — sets $VAR to the value at the dotted
// PATH (e.g. medallion.meta.version) of the JSON in FILE ("stdout" for the
// last command's output).
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonget FILE PATH VAR")
	}
	var data string
	if args[0] == "stdout" {
		data = ts.ReadFile("stdout")
	} else {
		data = ts.ReadFile(args[0])
	}
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		ts.Fatalf("jsonget: %s is not JSON: %v", args[0], err)
	}
	for _, key := range strings.Split(args[1], ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			ts.Fatalf("jsonget: %s: %q is not inside an object", args[1], key)
		}
		if v, ok = obj[key]; !ok {
			ts.Fatalf("jsonget: %s: no key %q", args[1], key)
		}
	}
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	ts.Setenv(args[2], s)
}

// cmdLater: later A B — B is a strictly later RFC 3339 time than A.
func cmdLater(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: later TIME_A TIME_B")
	}
	a, errA := medallion.ParseTime(args[0])
	b, errB := medallion.ParseTime(args[1])
	if errA != nil || errB != nil {
		ts.Fatalf("later: bad times %q, %q", args[0], args[1])
	}
	if b.After(a) == neg {
		ts.Fatalf("later: %s after %s is %v", args[1], args[0], b.After(a))
	}
}

// cmdEq: eq A B — the two words are equal (after env expansion).
func cmdEq(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: eq A B")
	}
	if (args[0] == args[1]) == neg {
		ts.Fatalf("eq: %q vs %q", args[0], args[1])
	}
}

// waitForSocket polls the socket until the daemon answers, for benchmarks.
func waitForSocket(ctl, sock string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command(ctl, "--socket", sock, "status").Run() == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("daemon did not answer on %s", sock)
}
