//go:build unix

package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLockHolder: no lock file and a released lock mean no daemon, even
// when a crash left a pid in the file; a held lock gives the holder's pid.
func TestLockHolder(t *testing.T) {
	dir := t.TempDir()
	if pid, err := LockHolder(dir); pid != 0 || err != nil {
		t.Fatalf("no lock file: pid %d, err %v", pid, err)
	}
	l, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pid, err := LockHolder(dir); pid != os.Getpid() || err != nil {
		t.Errorf("held: pid %d, err %v, want %d", pid, err, os.Getpid())
	}
	if err := l.release(); err != nil {
		t.Fatal(err)
	}
	if pid, err := LockHolder(dir); pid != 0 || err != nil {
		t.Errorf("released: pid %d, err %v", pid, err)
	}
	// A daemon killed with -9 leaves its pid in the file but no lock.
	if err := os.WriteFile(filepath.Join(dir, LockFileName), []byte("999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if pid, err := LockHolder(dir); pid != 0 || err != nil {
		t.Errorf("stale pid: pid %d, err %v", pid, err)
	}
	// The probe took nothing: a daemon can still lock the dir.
	l, err = lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after probes: %v", err)
	}
	l.release()
}

// TestPIDFile: with WithPIDFile the daemon's pid is in the file while the
// socket answers, and the file is gone once Run returns.
func TestPIDFile(t *testing.T) {
	cfg := testConfig(t)
	pidFile := filepath.Join(t.TempDir(), "medalliond.pid")
	r := start(t, cfg, WithPIDFile(pidFile))
	if b, err := os.ReadFile(pidFile); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("pid file while running: %q, %v", b, err)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pidFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pid file after Run: %v, want it removed", err)
	}
}
