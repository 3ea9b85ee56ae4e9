package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/config"
)

// syncBuffer is a log sink the test can read while the daemon writes.
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

// testConfig returns a config with a data dir under t.TempDir() and a
// socket in a short os.MkdirTemp dir, since sun_path is ~104 bytes.
func testConfig(t *testing.T) *config.Config {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "med")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	// A private HOME: the default watches must not ingest the real
	// user's transcripts.
	t.Setenv("HOME", filepath.Join(t.TempDir(), "home"))
	cfg := config.Default()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Socket = filepath.Join(sockDir, "s", "medallion.sock")
	return cfg
}

// running is a daemon started by start.
type running struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when Run has returned err
	err    error
	log    *syncBuffer
}

// stop cancels the daemon and returns Run's result.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		return r.err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
		return nil
	}
}

// start runs a daemon with cfg and waits until its socket answers.
func start(t *testing.T, cfg *config.Config, opts ...Option) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan struct{}), log: &syncBuffer{}}
	logger := hclog.New(&hclog.LoggerOptions{Name: "medalliond", Output: r.log, Level: hclog.Debug})
	go func() {
		defer close(r.done)
		r.err = Run(ctx, cfg, logger, opts...)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := status(cfg.Socket); err == nil {
			return r
		}
		select {
		case <-r.done:
			t.Fatalf("Run returned before answering: %v\n%s", r.err, r.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not answer on %s\n%s", cfg.Socket, r.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// status asks the daemon on sock for GET /v1/status with a plain HTTP client.
func status(sock string) (*api.Status, error) {
	c := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			},
		},
	}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://medalliond/v1/status")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status: HTTP %d", resp.StatusCode)
	}
	var st api.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, err
	}
	return &st, nil
}

func TestRunServesAndShutsDownCleanly(t *testing.T) {
	cfg := testConfig(t)
	cfg.MemoryLimit = 200 << 20
	before := debug.SetMemoryLimit(-1)

	r := start(t, cfg)

	st, err := status(cfg.Socket)
	if err != nil {
		t.Fatalf("GET /v1/status: %v", err)
	}
	if st.Socket != cfg.Socket || st.DataDir != cfg.DataDir || st.PID != os.Getpid() {
		t.Errorf("status = %+v, want socket %s, data dir %s, pid %d", st, cfg.Socket, cfg.DataDir, os.Getpid())
	}
	if got := debug.SetMemoryLimit(-1); got != cfg.MemoryLimit {
		t.Errorf("memory limit while running = %d, want %d", got, cfg.MemoryLimit)
	}
	fi, err := os.Stat(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode = %v, want 0700", fi.Mode().Perm())
	}
	pid, err := os.ReadFile(filepath.Join(cfg.DataDir, LockFileName))
	if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q (%v), want our pid %d", pid, err, os.Getpid())
	}
	logs := r.log.String()
	for _, want := range []string{"medalliond started", "pid=" + strconv.Itoa(os.Getpid()), "socket=" + cfg.Socket, "data_dir=" + cfg.DataDir, "version="} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}

	if err := r.stop(t); err != nil {
		t.Fatalf("Run after cancel = %v, want nil\n%s", err, r.log)
	}
	if _, err := os.Lstat(cfg.Socket); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket %s still there after shutdown: %v", cfg.Socket, err)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit after Run = %d, want the previous %d", got, before)
	}

	// The locks are released: the same data dir and socket start again,
	// with the store's content still there.
	r = start(t, cfg)
	if err := r.stop(t); err != nil {
		t.Fatalf("second run: %v", err)
	}
}

func TestRunRefusesSecondDaemon(t *testing.T) {
	cfg := testConfig(t)
	start(t, cfg)

	sameDir := *cfg
	sockDir, err := os.MkdirTemp("", "med")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sameDir.Socket = filepath.Join(sockDir, "other.sock")

	sameSocket := *cfg
	sameSocket.DataDir = filepath.Join(t.TempDir(), "other")

	tests := []struct {
		name string
		cfg  *config.Config
		want []string
	}{
		{"same data dir", &sameDir, []string{
			"medalliond is already running with data dir " + cfg.DataDir,
			fmt.Sprintf("(pid %d)", os.Getpid()),
		}},
		{"same socket", &sameSocket, []string{
			"medalliond is already running on socket " + cfg.Socket,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.cfg, nil)
			if !errors.Is(err, ErrAlreadyRunning) {
				t.Fatalf("Run = %v, want ErrAlreadyRunning", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := os.Lstat(sameDir.Socket); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("refused daemon left a socket at %s", sameDir.Socket)
	}
	// The first daemon is unharmed.
	if _, err := status(cfg.Socket); err != nil {
		t.Errorf("first daemon stopped answering: %v", err)
	}
}

func TestRunRefusesNonSocketFile(t *testing.T) {
	cfg := testConfig(t)
	if err := os.MkdirAll(filepath.Dir(cfg.Socket), 0o700); err != nil {
		t.Fatal(err)
	}
	content := []byte("not a socket\n")
	if err := os.WriteFile(cfg.Socket, content, 0o600); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Run = %v, want a not-a-socket error", err)
	}
	got, rerr := os.ReadFile(cfg.Socket)
	if rerr != nil || !bytes.Equal(got, content) {
		t.Errorf("file at the socket path changed: %q, %v", got, rerr)
	}
	// The data dir lock was released on the way out.
	if err := os.Remove(cfg.Socket); err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestRunReportsUnusableDataDir(t *testing.T) {
	cfg := testConfig(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = filepath.Join(file, "data")
	err := Run(context.Background(), cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "create data dir") {
		t.Fatalf("Run = %v, want a create data dir error", err)
	}
}
