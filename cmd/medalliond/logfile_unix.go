//go:build unix

package main

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// logFile is the daemon's log when it goes to a file (run --log-file):
// start's medalliond.log in the data dir, the launchd job's log. A daemon
// left running for months would grow it without end, and start moves it
// aside only when the daemon starts again; so the daemon moves it to
// FILE.1 itself once this run has written maxLogBytes to it, and goes on in
// a new FILE, as start does: at most two files of about maxLogBytes.
//
// The file becomes the process's stdout and stderr (dup2), not only the
// logger's output: what the Go runtime writes there (a panic, a fatal
// error) lands in the current file too.
type logFile struct {
	mu   sync.Mutex
	path string
	max  int64
	// size is how much this process wrote to the current file, plus its
	// size when opened.
	size int64
}

// openLogFile opens path for appending (created owner-only, never through
// a link) and makes it the process's stdout and stderr.
func openLogFile(path string, max int64) (*logFile, error) {
	l := &logFile{path: path, max: max}
	size, err := l.redirect()
	if err != nil {
		return nil, err
	}
	l.size = size
	return l, nil
}

// redirect opens l.path and puts it on file descriptors 1 and 2, and
// returns its size.
func (l *logFile) redirect() (int64, error) {
	f, size, err := appendLog(l.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	for _, fd := range []int{1, 2} {
		if err := unix.Dup2(int(f.Fd()), fd); err != nil {
			return 0, fmt.Errorf("log to %s: %w", l.path, os.NewSyscallError("dup2", err))
		}
	}
	return size, nil
}

// moveAside moves the log at path to path.1, replacing the one before:
// one old log is kept.
func moveAside(path string) error { return os.Rename(path, path+".1") }

// appendLog opens the log at path for appending, created owner-only and
// never through a link, and returns its size: for start, which hands it
// to the daemon it starts, and for the daemon itself (run --log-file).
func appendLog(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("open log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("open log: %w", err)
	}
	return f, st.Size(), nil
}

// Write writes p to stderr, the current file, and moves the file aside
// once it has passed its size.
func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := os.Stderr.Write(p)
	l.size += int64(n)
	if l.size > l.max {
		l.rotate()
	}
	return n, err
}

// rotate moves the file to FILE.1 (replacing the one before) and goes on
// in a new FILE. When that fails (a folder made read-only, a full disk),
// the daemon goes on writing where it did and says why there; it tries
// again once it has written another maxLogBytes.
func (l *logFile) rotate() {
	l.size = 0
	if err := moveAside(l.path); err != nil {
		fmt.Fprintf(os.Stderr, "medalliond: could not move the log aside (tried again after %d MB more): %v\n", l.max>>20, err)
		return
	}
	size, err := l.redirect()
	if err != nil {
		// The lines go on to FILE.1, which is still open.
		fmt.Fprintf(os.Stderr, "medalliond: moved the log to %s.1 but could not start a new one (tried again after %d MB more): %v\n", l.path, l.max>>20, err)
		return
	}
	l.size = size
}
