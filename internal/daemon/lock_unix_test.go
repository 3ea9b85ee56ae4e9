//go:build unix

package daemon

import (
	"os"
	"path/filepath"
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
