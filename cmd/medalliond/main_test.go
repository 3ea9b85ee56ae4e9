package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/service"
)

// syncBuffer is an output the test reads while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testEnv isolates the CLI: XDG dirs under a temp dir, no MEDALLION_*
// variables from the developer's shell, signals fed by the test.
type testEnv struct {
	*env
	root   string
	out    *syncBuffer
	errOut *syncBuffer
	vars   map[string]string
	sigs   chan chan<- os.Signal
	exits  chan int
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "data"))
	sockDir, err := os.MkdirTemp("", "med")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	t.Setenv("XDG_RUNTIME_DIR", sockDir)

	te := &testEnv{
		root:   root,
		out:    &syncBuffer{},
		errOut: &syncBuffer{},
		vars:   map[string]string{},
		sigs:   make(chan chan<- os.Signal, 1),
		exits:  make(chan int, 1),
	}
	te.env = &env{
		stdout: te.out,
		stderr: te.errOut,
		getenv: func(k string) string { return te.vars[k] },
		notify: func(c chan<- os.Signal) func() {
			te.sigs <- c
			return func() {}
		},
		exit: func(code int) { te.exits <- code },
	}
	return te
}

func (te *testEnv) writeConfig(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(te.root, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersionAndHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"version"}, []string{"medalliond ", "go1."}},
		{[]string{"--version"}, []string{"medalliond "}},
		{[]string{"--help"}, []string{"run", "service", "config", "version", "start", "stop", "status", "without a service"}},
		{[]string{"start", "--help"}, []string{"no service manager", "medalliond.log", "medalliond.pid", "medalliond status >/dev/null || medalliond start", "--wait", "Configuration precedence"}},
		{[]string{"stop", "--help"}, []string{"SIGTERM", "medalliond service stop"}},
		{[]string{"status", "--help"}, []string{"exits 0 when a daemon runs and 3"}},
		{nil, []string{"Usage:", "medalliond [command]"}},
		{[]string{"run", "--help"}, []string{"Configuration precedence", "MEDALLION_DATA_DIR", "--log-level", "Examples:", "medalliond run --config"}},
		{[]string{"config", "show", "--help"}, []string{"Configuration precedence", "--config"}},
		{[]string{"service", "--help"}, []string{"install", "uninstall", "start", "stop", "status", "--user", "medalliond service install --user"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			te := newTestEnv(t)
			if code := te.run(tt.args); code != 0 {
				t.Fatalf("exit %d, stderr: %s", code, te.errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(te.out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, te.out)
				}
			}
		})
	}
}

// TestUsageErrors: a command line that cannot run as written exits 2 and
// points at the command's help, as medallionctl does; a bad value (in a
// flag that parsed) is an error of the run, exit 1.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"frobnicate"}, 2, "unknown command \"frobnicate\"\nRun 'medalliond --help' for usage."},
		{[]string{"stat"}, 2, `unknown command "stat" (did you mean "start"?)`},
		{[]string{"run", "--colour"}, 2, "unknown flag: --colour\nRun 'medalliond run --help' for usage."},
		{[]string{"run", "extra"}, 2, "unknown command \"extra\" for \"medalliond run\"\nRun 'medalliond run --help' for usage."},
		{[]string{"-v"}, 2, "unknown shorthand flag: 'v' in -v"},
		{[]string{"run", "--log-level", "loud"}, 1, `--log-level: log_level: "loud" is not one of`},
		{[]string{"run", "--config", "/nonexistent/medallion.hcl"}, 1, "/nonexistent/medallion.hcl: no such file"},
		{[]string{"run", "--data-dir", "/dev/null/data"}, 1, "create data dir /dev/null/data (set data_dir in the config or --data-dir): mkdir /dev/null: not a directory"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			te := newTestEnv(t)
			if code := te.run(tt.args); code != tt.code {
				t.Fatalf("exit %d, want %d", code, tt.code)
			}
			if !strings.Contains(te.errOut.String(), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, te.errOut)
			}
		})
	}
}

func TestConfigErrorShowsDiagnostics(t *testing.T) {
	te := newTestEnv(t)
	path := te.writeConfig(t, "bad.hcl", "log_level = \"debug\"\ndata_dri = \"/x\"\nmemory_limit = \"lots\"\n")
	for _, args := range [][]string{{"run", "--config", path}, {"config", "show", "-c", path}} {
		te.errOut.b.Reset()
		if code := te.run(args); code != 1 {
			t.Fatalf("%v: exit %d, want 1", args, code)
		}
		for _, w := range []string{
			"medalliond: invalid config:\n",
			"bad.hcl:2,1-9: Unsupported argument",
			`Did you mean "data_dir"?`,
			"bad.hcl:3,16-22: Invalid memory_limit",
		} {
			if !strings.Contains(te.errOut.String(), w) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, w, te.errOut)
			}
		}
	}
}

func TestConfigShowPrecedence(t *testing.T) {
	file := "data_dir = \"from-file\"\nlog_level = \"debug\"\nlog_format = \"json\"\nmemory_limit = \"64MiB\"\n"
	tests := []struct {
		name  string
		args  []string
		vars  map[string]string
		check func(te *testEnv, c *config.Config) string
	}{
		{"defaults", nil, nil, func(te *testEnv, c *config.Config) string {
			if c.DataDir != filepath.Join(te.root, "data", "medallion") || c.LogLevel != "info" || c.MemoryLimit != config.DefaultMemoryLimit {
				return "want the XDG defaults"
			}
			return ""
		}},
		{"file", []string{"--config", "FILE"}, nil, func(te *testEnv, c *config.Config) string {
			if c.DataDir != filepath.Join(te.root, "from-file") || c.LogLevel != "debug" || c.LogFormat != "json" || c.MemoryLimit != 64<<20 {
				return "want the file's values, data_dir relative to the file"
			}
			return ""
		}},
		{"flags over file", []string{"--config", "FILE", "--log-level", "warn", "--data-dir", "/flag/data", "--socket", "/flag/s.sock"}, nil,
			func(te *testEnv, c *config.Config) string {
				if c.LogLevel != "warn" || c.DataDir != "/flag/data" || c.Socket != "/flag/s.sock" || c.LogFormat != "json" {
					return "want the flags over the file"
				}
				return ""
			}},
		{"flags over env over file", []string{"--config", "FILE", "--log-level", "warn", "--data-dir", "/flag/data"},
			map[string]string{"MEDALLION_LOG_LEVEL": "error", "MEDALLION_DATA_DIR": "/env/data", "MEDALLION_SOCKET": "/env/s.sock"},
			func(te *testEnv, c *config.Config) string {
				if c.LogLevel != "warn" || c.DataDir != "/flag/data" || c.Socket != "/env/s.sock" || c.LogFormat != "json" {
					return "want the flags over the environment, the environment over the file"
				}
				return ""
			}},
		{"default file", nil, nil, func(te *testEnv, c *config.Config) string {
			if c.LogLevel != "trace" {
				return "want the default config file read"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t)
			path := te.writeConfig(t, "medallion.hcl", file)
			if tt.name == "default file" {
				def := filepath.Join(te.root, "config", "medallion", "config.hcl")
				if err := os.MkdirAll(filepath.Dir(def), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(def, []byte(`log_level = "trace"`), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for k, v := range tt.vars {
				te.vars[k] = v
			}
			args := []string{"config", "show"}
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "FILE", path))
			}
			if code := te.run(args); code != 0 {
				t.Fatalf("exit %d: %s", code, te.errOut)
			}
			// The output is itself a config file: load it back.
			shown := te.writeConfig(t, "shown.hcl", te.out.String())
			cfg, err := config.Load(shown)
			if err != nil {
				t.Fatalf("config show output does not load: %v\n%s", err, te.out)
			}
			if msg := tt.check(te, cfg); msg != "" {
				t.Errorf("%s; got %+v\n%s", msg, *cfg, te.out)
			}
			if !strings.HasPrefix(te.out.String(), "# config file: ") {
				t.Errorf("output does not say which file was read:\n%s", te.out)
			}
		})
	}
}

// statusOK reports whether a daemon answers GET /v1/status on sock.
func statusOK(sock string) bool {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://medalliond/v1/status")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestRunStopsOnSignal also runs the daemon with the engineers' hidden
// recordings on: each is written whole when the daemon stops.
func TestRunStopsOnSignal(t *testing.T) {
	te := newTestEnv(t)
	sock := filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "m.sock")
	dataDir := filepath.Join(te.root, "d")
	cpu, tr := filepath.Join(te.root, "cpu.pprof"), filepath.Join(te.root, "run.trace")
	done := make(chan int, 1)
	go func() {
		done <- te.run([]string{"run", "--data-dir", dataDir, "--socket", sock, "--log-level", "debug",
			"--cpu-profile", cpu, "--trace", tr})
	}()

	var sigs chan<- os.Signal
	select {
	case sigs = <-te.sigs:
	case code := <-done:
		t.Fatalf("run exited %d before handling signals: %s", code, te.errOut)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !statusOK(sock) {
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not answer on %s: %s", sock, te.errOut)
		}
		time.Sleep(10 * time.Millisecond)
	}

	sigs <- os.Interrupt
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after SIGINT, want 0: %s", code, te.errOut)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after SIGINT")
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket still there after shutdown: %v", err)
	}
	for _, w := range []string{"medalliond started", "shutting down", "signal=interrupt", "medalliond stopped"} {
		if !strings.Contains(te.errOut.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, te.errOut)
		}
	}
	// A CPU profile is gzipped; an execution trace opens with its Go version.
	for path, head := range map[string]string{cpu: "\x1f\x8b", tr: "go 1."} {
		if b, err := os.ReadFile(path); err != nil || !bytes.HasPrefix(b, []byte(head)) {
			t.Errorf("%s: %d bytes starting %q, %v; want it to start %q", path, len(b), b[:min(len(b), 8)], err, head)
		}
	}
}

func TestRunDaemonError(t *testing.T) {
	te := newTestEnv(t)
	sock := filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "file")
	if err := os.WriteFile(sock, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := te.run([]string{"run", "--socket", sock}); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(te.errOut.String(), "medalliond: listen: "+sock+" exists and is not a socket") {
		t.Errorf("stderr: %s", te.errOut)
	}
}

func TestHandleSignals(t *testing.T) {
	tests := []struct {
		name       string
		signals    int
		wantCancel bool
		wantExit   bool
	}{
		{"none", 0, false, false},
		{"first cancels", 1, true, false},
		{"second exits", 2, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 2)
			done := make(chan struct{})
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			exits := make(chan int, 1)
			finished := make(chan struct{})
			var log syncBuffer
			logger := hclog.New(&hclog.LoggerOptions{Output: &log})
			go func() {
				defer close(finished)
				handleSignals(sigs, done, cancel, logger, func(code int) { exits <- code })
			}()
			for range tt.signals {
				sigs <- os.Interrupt
			}
			if tt.wantExit {
				if code := <-exits; code != 1 {
					t.Errorf("exit code %d, want 1", code)
				}
			}
			if tt.wantCancel {
				<-ctx.Done()
				if !errors.Is(context.Cause(ctx), errSignal) {
					t.Errorf("cause = %v, want errSignal", context.Cause(ctx))
				}
			}
			close(done)
			<-finished
			if !tt.wantCancel && ctx.Err() != nil {
				t.Error("cancelled without a signal")
			}
			if !tt.wantExit && len(exits) != 0 {
				t.Error("exited without a second signal")
			}
			if tt.wantExit && !strings.Contains(log.String(), "second signal") {
				t.Errorf("no log line for the forced exit:\n%s", log.String())
			}
		})
	}
}

func TestServiceInstallChecksConfig(t *testing.T) {
	te := newTestEnv(t)
	bad := te.writeConfig(t, "bad.hcl", "nope = 1\n")
	if code := te.run([]string{"service", "install", "--user", "--config", bad}); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(te.errOut.String(), "bad.hcl:1,1-5: Unsupported argument") {
		t.Errorf("stderr: %s", te.errOut)
	}
}

func TestServiceOptions(t *testing.T) {
	te := newTestEnv(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		config string
		want   string
	}{
		{"", ""},
		{"/etc/medallion/config.hcl", "/etc/medallion/config.hcl"},
		{"rel/c.hcl", filepath.Join(wd, "rel", "c.hcl")},
		{"~/c.hcl", filepath.Join(te.root, "home", "c.hcl")},
	}
	for _, tt := range tests {
		o, err := serviceOptions(true, tt.config)
		if err != nil {
			t.Fatalf("serviceOptions(%q): %v", tt.config, err)
		}
		if o.ConfigFile != tt.want || !filepath.IsAbs(o.Executable) || !o.User || o.Home != filepath.Join(te.root, "home") {
			t.Errorf("serviceOptions(%q) = %+v, want config %q", tt.config, o, tt.want)
		}
	}
}

// TestWithoutManagerHint: with no service manager to use, the error points
// at "medalliond start"; other errors pass unchanged.
func TestWithoutManagerHint(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w: systemd is not running here", service.ErrNoServiceManager), `run medalliond without a service manager: "medalliond start"`},
		{errors.New("install medalliond: Failed to connect to bus: No medium found"), "systemd has no user manager for this login"},
		{errors.New("install medalliond: Failed to connect to bus: No medium found"), `"medalliond start"`},
	}
	for _, tt := range tests {
		if got := withoutManagerHint(tt.err).Error(); !strings.Contains(got, tt.want) || !strings.HasPrefix(got, tt.err.Error()) {
			t.Errorf("withoutManagerHint(%q) = %q, want the error then %q", tt.err, got, tt.want)
		}
	}
	other := errors.New("permission denied")
	if got := withoutManagerHint(other); got != other {
		t.Errorf("withoutManagerHint(%v) = %v, want it unchanged", other, got)
	}
	if withoutManagerHint(nil) != nil {
		t.Error("withoutManagerHint(nil) is not nil")
	}
}
