//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// dirLock is the daemon's hold on its data dir.
type dirLock struct{ f *os.File }

// lockDataDir takes an exclusive, non-blocking flock on dir/medalliond.lock
// and writes our pid into it. It comes before the socket and the store so a
// second daemon on the same data dir gets one clear message naming the dir
// and the running daemon's pid, rather than a store lock error. The kernel
// drops the lock when a crashed daemon's descriptors close, so a stale lock
// file never blocks a restart.
func lockDataDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	// Held but no pid in the file: a LockHolder probe (held for an
	// instant) or a daemon between its flock and its pid. Ask again
	// briefly rather than fail a start that races "medalliond status".
	for i := 0; errors.Is(err, unix.EWOULDBLOCK) && readPID(f) == 0 && i < 50; i++ {
		time.Sleep(10 * time.Millisecond)
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w with data dir %s%s", ErrAlreadyRunning, dir, holderPID(f))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := writePID(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("write pid to %s: %w", path, err)
	}
	return &dirLock{f: f}, nil
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// holderPID reads the pid the lock holder wrote, as " (pid N)", or "" when
// it is not there yet (the holder is between flock and write).
func holderPID(f *os.File) string {
	if pid := readPID(f); pid > 0 {
		return fmt.Sprintf(" (pid %d)", pid)
	}
	return ""
}

// release truncates the pid away and drops the lock. The file itself stays:
// unlinking a lock file races with the next daemon opening it.
func (l *dirLock) release() error {
	_ = l.f.Truncate(0)
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("release data dir lock: %w", err)
	}
	return nil
}

// LockHolder reports the pid of the daemon that holds dir's lock, or 0 when
// no daemon does. It probes with a shared, non-blocking flock, which fails
// exactly while a daemon holds its exclusive one; the probe is released at
// once. The pid comes from the lock file, which only a lock holder writes,
// so a stale file left by a crash is never mistaken for a live daemon.
func LockHolder(dir string) (int, error) {
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open lock file: %w", err)
	}
	defer f.Close()
	// Held with no pid in the file: a daemon between its flock and its
	// pid, or one that is releasing (truncate, then unlock). Look again
	// for a moment until either the pid or the lock's end shows.
	for range 50 {
		err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
			return 0, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return 0, fmt.Errorf("probe %s: %w", path, err)
		}
		if pid := readPID(f); pid > 0 {
			return pid, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0, fmt.Errorf("%s is locked but holds no pid", path)
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
