package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/medallionhq/medallion/internal/socket"
)

// hookConnTimeout bounds reading a request from, and, apart, writing an
// answer to, one connection of the hook's socket, each in all (fdConn):
// it is served one at a time, and a client that stalls must not hold the
// next hook up for long: under the hook's own wait for its answer (700 ms,
// medallionctl), so that hooks queued behind a stalled client are still
// answered. The hook sends its request in one write and reads a save
// file of a few KB. A variable for tests.
var hookConnTimeout = 500 * time.Millisecond

// hookListener is the hook's socket (hooksocket.go): a blocking socket
// that one goroutine, locked to its thread, accepts on and answers.
type hookListener struct {
	fd      int
	path    string
	peers   *socket.Peers
	timeout time.Duration // hookConnTimeout when it listened
	closing atomic.Bool
	done    chan struct{}
	once    sync.Once
}

// ServeHook answers the SessionStart hook's request (GET /v1/hook) on a
// socket of its own at path, owner-only, until Shutdown. The folder of
// path must be the daemon's own (hookcache.Dir); whatever is at path is
// replaced. A hook that finds nothing there asks on the API's socket.
//
// It serves once: a second call, or one after Shutdown, is an error (a
// listener nobody closes would leave its thread blocked in accept).
func (s *Server) ServeHook(path string) error {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	switch {
	case s.hookShut:
		return errors.New("hook socket: the server is shut down")
	case s.hook != nil:
		return fmt.Errorf("hook socket: already served at %s", s.hook.path)
	}
	l, err := listenHook(path, socket.NewPeers(s.log.Named("hook-socket")))
	if err != nil {
		return err
	}
	s.hook = l
	go s.acceptHook(l)
	s.log.Debug("serving the hook's requests", "address", path)
	return nil
}

// listenHook binds a blocking socket at path, mode 0600.
func listenHook(path string, peers *socket.Peers) (*hookListener, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("hook socket: %w", os.NewSyscallError("socket", err))
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		syscall.Close(fd)
		return nil, fmt.Errorf("hook socket: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("hook socket %s: %w", path, os.NewSyscallError("bind", err))
	}
	if err := os.Chmod(path, 0o600); err != nil {
		syscall.Close(fd)
		_ = os.Remove(path)
		return nil, fmt.Errorf("hook socket: %w", err)
	}
	if err := syscall.Listen(fd, 128); err != nil {
		syscall.Close(fd)
		_ = os.Remove(path)
		return nil, fmt.Errorf("hook socket %s: %w", path, os.NewSyscallError("listen", err))
	}
	return &hookListener{fd: fd, path: path, peers: peers, timeout: hookConnTimeout, done: make(chan struct{})}, nil
}

// acceptHook answers the hook's connections one at a time until the
// listener closes. Its thread blocks in accept(2) outside the runtime's
// poller, so the kernel wakes it, not the poller's thread; it is never
// given back to the scheduler (the goroutine exits locked, which ends
// the thread).
func (s *Server) acceptHook(l *hookListener) {
	runtime.LockOSThread()
	defer close(l.done)
	for {
		fd, _, err := syscall.Accept4(l.fd, syscall.SOCK_CLOEXEC)
		if l.closing.Load() {
			if err == nil {
				syscall.Close(fd)
			}
			return
		}
		switch {
		case err == nil:
		case errors.Is(err, syscall.EINTR), errors.Is(err, syscall.ECONNABORTED):
			continue
		default:
			// Out of descriptors or memory: the hook asks on the API's
			// socket meanwhile (its dial here still succeeds from the
			// backlog, and times out; see the client's fallback).
			s.log.Warn("hook socket: accept failed; retrying in a second", "error", os.NewSyscallError("accept4", err))
			time.Sleep(time.Second)
			continue
		}
		s.hookConn(l, fd)
	}
}

// hookConn answers one connection from a peer the API's socket would let
// in too (socket.Peers: the daemon's own user, or root) and closes it.
func (s *Server) hookConn(l *hookListener, fd int) {
	defer syscall.Close(fd)
	if !l.peers.Allow(socket.PeerUID(fd)) {
		return
	}
	if err := s.serveHookConn(context.Background(), newFDConn(fd, l.timeout)); err != nil {
		s.log.Debug("hook socket: connection dropped", "error", err)
	}
}

// close stops accepting, waits for the connection being answered, and
// removes the socket file.
func (l *hookListener) close() {
	l.once.Do(func() {
		l.closing.Store(true)
		// Shutting a listening socket down returns the accept(2) blocked
		// on it (EINVAL).
		_ = syscall.Shutdown(l.fd, syscall.SHUT_RDWR)
		<-l.done
		syscall.Close(l.fd)
		_ = os.Remove(l.path)
	})
}

// fdConn reads and writes a connected socket in blocking mode: the
// request, in all, within timeout of the connection's start, and the
// answer within timeout of its first write (the answer rendered between
// them is not the client's doing). Each system call is given what is left
// of that time as the socket's timeout (SO_RCVTIMEO, SO_SNDTIMEO), so a
// client that sends or reads a byte at a time cannot hold the one serving
// thread past it.
type fdConn struct {
	fd              int
	timeout         time.Duration
	readBy, writeBy time.Time // writeBy zero until the first write
}

func newFDConn(fd int, timeout time.Duration) *fdConn {
	return &fdConn{fd: fd, timeout: timeout, readBy: time.Now().Add(timeout)}
}

// bound sets the socket's timeout opt (SO_RCVTIMEO or SO_SNDTIMEO) to
// what is left until by, or says that nothing is.
func (c *fdConn) bound(opt int, by time.Time) error {
	left := time.Until(by)
	// A zero timeval means no timeout at all: less than a microsecond
	// left is none left.
	if left < time.Microsecond {
		return os.ErrDeadlineExceeded
	}
	tv := syscall.NsecToTimeval(left.Nanoseconds())
	return os.NewSyscallError("setsockopt", syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv))
}

func (c *fdConn) Read(p []byte) (int, error) {
	for {
		if err := c.bound(syscall.SO_RCVTIMEO, c.readBy); err != nil {
			return 0, err
		}
		n, err := syscall.Read(c.fd, p)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, os.NewSyscallError("read", err)
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *fdConn) Write(p []byte) (int, error) {
	if c.writeBy.IsZero() {
		c.writeBy = time.Now().Add(c.timeout)
	}
	written := 0
	for written < len(p) {
		if err := c.bound(syscall.SO_SNDTIMEO, c.writeBy); err != nil {
			return written, err
		}
		n, err := syscall.Write(c.fd, p[written:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return written, os.NewSyscallError("write", err)
		}
		written += n
	}
	return written, nil
}
