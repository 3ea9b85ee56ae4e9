//go:build unix

package hookcache

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"

	"github.com/medallionhq/medallion/internal/atomicfile"
	"github.com/medallionhq/medallion/internal/scope"
)

// Read returns the kept save file for cwd (clean, absolute) at budget from
// dir, and whether there was a valid one: a file this user alone can read
// and write, in a folder of the same kind, and an answer still valid (see
// the package comment): the file for cwd's scope (a daemon without scope
// rules, the common case, is looked for first), else the one for cwd. An
// empty text with ok says the scope has no medallion. Anything else reads
// as no file: the hook then asks the daemon.
func Read(dir, cwd string, budget int) (text string, ok bool) {
	if !ownedPrivate(dir, true) {
		return "", false
	}
	nodes := scope.Derive(cwd)
	if a, ok := readFile(path(dir, ScopeName(nodes, budget))); ok && a.CWD == "" && a.answers(budget, nodes) {
		return a.Text, true
	}
	if a, ok := readFile(path(dir, Name(cwd, budget))); ok && a.CWD == cwd && a.answers(budget, nodes) {
		return a.Text, true
	}
	return "", false
}

// readFile reads and decodes the answer file p, if it is one this user
// alone can read and write.
func readFile(p string) (Answer, bool) {
	b, ok := readPrivate(p)
	if !ok {
		return Answer{}, false
	}
	a, err := decode(b)
	return a, err == nil
}

// readPrivate returns the contents of file p, if it is one this user
// alone can read and write, of at most maxFile bytes. It is not part of
// readFile so that its stack frame (a stat buffer among others) is gone
// before decode runs: the hook's deepest calls then stay within the 4 KiB
// its goroutine's stack has grown to by then, where they went over it and
// made the runtime copy the stack to a new one (issue 12).
func readPrivate(p string) ([]byte, bool) {
	fd, err := openRaw(p, syscall.O_RDONLY|syscall.O_NOFOLLOW)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || !private(&st, syscall.S_IFREG) || st.Size > maxFile {
		return nil, false
	}
	b, err := readAll(fd, st.Size)
	if err != nil || int64(len(b)) != st.Size {
		return nil, false // the file changed size as it was read
	}
	return b, true
}

// openRaw opens p with plain system calls, never through os.File: the hook
// reads its answer and /proc with them so that its process does not set
// up the runtime's poller (an epoll instance, an event fd and a thread
// waiting on them) for files it cannot poll (issue 12, the hook's start).
func openRaw(p string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(p, flags|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// readAll reads fd to its end, up to max bytes and one more: a result
// longer than max says there was more.
func readAll(fd int, max int64) ([]byte, error) {
	b := make([]byte, 0, max+1)
	for int64(len(b)) <= max {
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, err
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
	return b, nil
}

// ownedPrivate reports whether p (not followed if a link) is a folder
// (dir) or a regular file owned by this user and closed to others.
func ownedPrivate(p string, dir bool) bool {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return false
	}
	kind := uint32(syscall.S_IFREG)
	if dir {
		kind = syscall.S_IFDIR
	}
	return private(&st, kind)
}

// private: of kind, this user's, no permission for group or others.
func private(st *syscall.Stat_t, kind uint32) bool {
	return uint32(st.Mode)&syscall.S_IFMT == kind && int(st.Uid) == os.Getuid() && st.Mode&0o077 == 0
}

// running reports whether the daemon that wrote a file, process pid
// started at start, still runs: a process of this user's with that pid
// (one we may not signal is not our daemon) that started then (a pid is
// reused once its process is gone; start is "" where that cannot be told).
func running(pid int, start string) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	now, _ := processStart(pid)
	return now == start
}

// Writer keeps a daemon's answers in its folder. Its methods are not safe
// for concurrent use: the server's load cache calls them under its lock.
type Writer struct {
	dir     string
	pid     int
	start   string
	byScope bool
}

// Open makes dir (owner-only) for the daemon of this process, after its
// socket is listening (so no other daemon uses the folder), and empties
// it: the answers of a daemon before this one were not dropped on its
// writes since. byScope keeps one file per scope, for a daemon that
// resolves every folder to the nodes the file system gives it (no scope
// rules); else one per cwd.
func Open(dir string, byScope bool) (*Writer, error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("hook answers: %w", err)
	}
	if !ownedPrivate(dir, true) {
		// Not ours, or open to others: nothing is kept, and the hook
		// refuses such a folder too.
		if err := os.Chmod(dir, 0o700); err != nil || !ownedPrivate(dir, true) {
			return nil, fmt.Errorf("hook answers: %s is not a folder of this user's alone", dir)
		}
	}
	start, ok := processStart(os.Getpid())
	if !ok {
		return nil, errors.New("hook answers: this process's start time cannot be read")
	}
	w := &Writer{dir: dir, pid: os.Getpid(), start: start, byScope: byScope}
	if err := w.clear(); err != nil {
		return nil, err
	}
	return w, nil
}

// clear removes every file in the folder.
func (w *Writer) clear() error {
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("hook answers: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if err := os.Remove(path(w.dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("hook answers: %w", err)
	}
	return nil
}

// NameFor is the name of the file Put writes for the hook's load of cwd
// at budget, which the daemon resolved to nodes.
func (w *Writer) NameFor(cwd string, budget int, nodes []string) string {
	if w.byScope {
		return ScopeName(nodes, budget)
	}
	return Name(cwd, budget)
}

// Put writes the answer for a.CWD at a.Budget, or for a.CWD's whole scope
// (byScope, see Open: the file then names no cwd), and returns its file
// name (NameFor). Pid is this process's. The file appears whole or not at
// all.
func (w *Writer) Put(a Answer) (string, error) {
	name := w.NameFor(a.CWD, a.Budget, a.Nodes)
	a.Pid, a.Start = w.pid, w.start
	a.Nodes = slices.Clone(a.Nodes)
	if w.byScope {
		a.CWD = ""
	}
	if err := atomicfile.Write(path(w.dir, name), a.encode()); err != nil {
		return "", fmt.Errorf("hook answer: %w", err)
	}
	return name, nil
}

// Has reports whether the answer file name (from Put) is there: someone
// may have removed it.
func (w *Writer) Has(name string) bool {
	_, err := os.Lstat(path(w.dir, name))
	return err == nil
}

// Remove drops the answer file name (from Put). A file left behind would
// serve a stale save file: one that cannot be removed (a folder made
// read-only) is emptied, which no hook reads, and when that fails too its
// caller hears of it (the server then keeps no more files and closes the
// Writer).
func (w *Writer) Remove(name string) error {
	p := path(w.dir, name)
	err := os.Remove(p)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if os.Truncate(p, 0) == nil {
		return nil
	}
	return fmt.Errorf("hook answer: %w", err)
}

// Close removes the folder and its files: with the daemon gone, no answer
// is kept. A folder it cannot empty is opened to others, which only its
// owner can do and every hook then refuses (Read), so that no file left in
// it is read; the next daemon closes and empties it again (Open).
func (w *Writer) Close() error {
	if err := w.clear(); err != nil {
		_ = os.Chmod(w.dir, 0o701)
		return err
	}
	if err := os.Remove(w.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("hook answers: %w", err)
	}
	return nil
}
