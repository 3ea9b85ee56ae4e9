//go:build unix

// Package socket creates the Unix socket medalliond serves its local API on,
// so that the socket is the owner's alone and a second daemon cannot steal it.
//
// Listen puts the socket in a private directory (0700) with mode 0600,
// refuses to start when a live daemon already answers, replaces a stale
// socket file left by a crash, and never touches a path that is not a socket.
// Where the OS reports the peer's credentials (Linux SO_PEERCRED, macOS and
// FreeBSD LOCAL_PEERCRED) the listener also drops connections from other
// users, so a socket whose permissions were loosened by hand stays private.
package socket

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// ErrAlreadyRunning is wrapped by Listen's error when another medalliond
// holds the socket: it answers on it, or holds its lock while starting.
var ErrAlreadyRunning = errors.New("medalliond is already running")

// dialTimeout bounds the probe of an existing socket. A live daemon accepts
// at once (the kernel completes the connection from the listen backlog), so
// this only matters for a daemon so stuck that treating it as live is right.
const dialTimeout = 500 * time.Millisecond

// maxPathLen is the longest socket path bind accepts on this OS: sun_path
// minus its terminating NUL (107 bytes on Linux, 103 on macOS). Checking it
// ourselves turns bind's bare "invalid argument" into an error a user can act on.
var maxPathLen = len(unix.RawSockaddrUnix{}.Path) - 1

// Option configures Listen.
type Option func(*Listener)

// WithLogger makes the listener log refused connections: the first at Warn
// (someone else is knocking, the owner should know), later ones at Debug so
// a local user cannot flood the log.
func WithLogger(l hclog.Logger) Option {
	return func(ln *Listener) { ln.peers = NewPeers(l) }
}

// Listener is the net.Listener returned by Listen. Accept returns only
// connections from the daemon's own user or root; Close removes the socket
// file it created and releases the lock.
type Listener struct {
	ln   *net.UnixListener
	path string
	// file identifies the socket file we bound, so Close never removes a
	// socket that somebody else has put at the path since.
	file fs.FileInfo
	// lock is the flock'd path+".lock", held for the listener's life.
	lock  *os.File
	peers *Peers

	closeOnce sync.Once
	closeErr  error
}

var _ net.Listener = (*Listener)(nil)

// Listen listens on the Unix socket at path; see the package comment.
//
// A second medalliond on the same path gets an error wrapping
// ErrAlreadyRunning. Two daemons starting at the same instant are kept
// apart by an flock on path+".lock", taken before the stale-socket check:
// without it both could judge the socket stale and the later one would
// delete the socket the earlier one had just bound. Close removes the lock
// file while it still holds the lock, and lockFile only trusts a lock on
// the file that is at the path, so a clean stop leaves nothing behind.
//
// The socket is bound and then chmod'ed to 0600 rather than created under a
// umask of 0177: the umask is process-wide, so changing it would also apply
// to files and directories other goroutines create meanwhile (a directory
// made with 0700 under umask 0177 loses its x bits and becomes unusable).
// The moment between bind and chmod is harmless because the directory is
// 0700, and on Linux and macOS the peer-credential check refuses other users
// anyway.
func Listen(path string, opts ...Option) (net.Listener, error) {
	path = filepath.Clean(path)
	if len(path) > maxPathLen {
		return nil, fmt.Errorf("socket path %s is %d bytes, longer than the %d a Unix socket allows; choose a shorter path", path, len(path), maxPathLen)
	}
	l := &Listener{path: path, peers: NewPeers(nil)}
	for _, o := range opts {
		o(l)
	}
	if err := prepareDir(filepath.Dir(path), filepath.Base(path)); err != nil {
		return nil, err
	}

	lock, err := lockFile(path + ".lock")
	if err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if dialable(path) {
				return nil, fmt.Errorf("%w (socket %s answers)", ErrAlreadyRunning, path)
			}
			return nil, fmt.Errorf("%w (it holds %s.lock and is starting or stopping)", ErrAlreadyRunning, path)
		}
		return nil, err
	}
	l.lock = lock

	if err := removeStale(path); err != nil {
		lock.Close()
		return nil, err
	}

	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// We remove the file ourselves, after checking it is still ours.
	ln.SetUnlinkOnClose(false)
	l.ln = ln
	fi, err := os.Lstat(path)
	if err == nil {
		l.file = fi
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("secure socket %s: %w", path, err)
	}
	return l, nil
}

// prepareDir makes sure the socket's directory exists and is private.
//
// A missing directory is created 0700. An existing one must be ours: a
// directory owned by another user could be used to swap the socket under
// us. If it is group/world accessible it is tightened to 0700 only when it
// is dedicated to the socket (it holds nothing but the socket and its lock
// file): chmod'ing a shared directory such as $HOME, /run or / would break
// other programs. A shared directory that other users can write to (or with
// the sticky bit, like /tmp) is refused, since they could plant a socket at
// our path for clients to connect to while the daemon is down; a shared
// directory they can only read is accepted, the 0600 socket and the peer
// check being the protection there.
func prepareDir(dir, sockName string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create socket directory: %w", err)
		}
		// MkdirAll's mode goes through the umask; say exactly what we mean.
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("secure socket directory: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("socket directory %s belongs to uid %d, not to this user (uid %d); choose a directory of your own", dir, st.Uid, os.Geteuid())
	}
	mode := fi.Mode()
	if mode.Perm()&0o077 == 0 {
		return nil
	}
	shared := mode&os.ModeSticky != 0 || filepath.Clean(dir) == filepath.Clean(os.TempDir())
	if !shared {
		dedicated, err := onlySocketFiles(dir, sockName)
		if err != nil {
			return err
		}
		if dedicated {
			if err := os.Chmod(dir, 0o700); err != nil {
				return fmt.Errorf("secure socket directory: %w", err)
			}
			return nil
		}
	}
	if shared || mode.Perm()&0o022 != 0 {
		return fmt.Errorf("socket directory %s can be written by other users (mode %s); put the socket in a private subdirectory, e.g. %s",
			dir, mode.Perm(), filepath.Join(dir, fmt.Sprintf("medallion-%d", os.Geteuid()), sockName))
	}
	return nil
}

// onlySocketFiles reports whether dir holds nothing but the socket, its
// lock file and the daemon's folder of hook answers (internal/hookcache),
// or nothing at all.
func onlySocketFiles(dir, sockName string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("socket directory: %w", err)
	}
	for _, e := range entries {
		if e.Name() != sockName && e.Name() != sockName+".lock" && e.Name() != sockName+".hook" {
			return false, nil
		}
	}
	return true, nil
}

// lockFile opens (creating) and flocks path without blocking. flock belongs
// to the open file description, so a second Listen in the same process
// conflicts just like one in another process, and the kernel releases the
// lock of a daemon that died.
func lockFile(path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open socket lock: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Close unlinks the lock file before releasing it: a lock taken
		// on a file that has left the path (opened just before the
		// holder removed it) protects nothing, so open the path again.
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if now, err := os.Stat(path); err == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close()
	}
}

// removeStale deals with whatever is at path before we bind: nothing is
// fine, a socket nobody answers on is a leftover of a crash and is removed,
// a live socket means another daemon, and anything else is not ours to
// delete.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; refusing to replace it", path)
	}
	c, err := net.DialTimeout("unix", path, dialTimeout)
	if err == nil {
		c.Close()
		return fmt.Errorf("%w (socket %s answers)", ErrAlreadyRunning, path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENOENT) {
		// EACCES (someone else's socket), a timeout (a stuck daemon): not
		// provably stale, so leave it to the user.
		return fmt.Errorf("check existing socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	return nil
}

// dialable reports whether something accepts connections on path.
func dialable(path string) bool {
	c, err := net.DialTimeout("unix", path, dialTimeout)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Accept waits for the next connection from an allowed peer (Peers: the
// daemon's own user, or root). Other peers are closed and counted, never
// returned.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return nil, err
		}
		if l.allowed(c) {
			return c, nil
		}
	}
}

func (l *Listener) allowed(c *net.UnixConn) bool {
	if l.peers.Allow(peerUID(c)) {
		return true
	}
	c.Close()
	return false
}

// Rejected returns how many connections Accept has refused.
func (l *Listener) Rejected() uint64 { return l.peers.Rejected() }

// Addr returns the socket's address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Close stops listening, removes the socket file if it is still the one
// Listen created, and releases the lock. It is idempotent: only the first
// call does anything and later calls return its result.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		err := l.ln.Close()
		if fi, serr := os.Lstat(l.path); serr == nil && l.file != nil && os.SameFile(fi, l.file) {
			if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
				err = fmt.Errorf("remove socket: %w", rerr)
			}
		}
		// Release the lock last, so that a daemon starting now never sees
		// our socket file half removed; unlink it while holding it, so
		// that whoever locks next locks the file at the path.
		if rerr := os.Remove(l.path + ".lock"); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = fmt.Errorf("remove socket lock: %w", rerr)
		}
		l.lock.Close()
		l.closeErr = err
	})
	return l.closeErr
}
