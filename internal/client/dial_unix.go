//go:build unix

package client

import (
	"os"
	"syscall"
)

// dial connects to the daemon's socket with plain system calls. The
// SessionStart hook runs before every agent session, and the runtime's
// poller cost it more than the request: net.Dialer starts a goroutine to
// watch a context that can end, and every event on a polled socket (ready
// to write, a deadline set, the answer) wakes the thread waiting in epoll,
// which then wakes the one waiting for the answer. A blocking socket has
// the kernel wake the reader itself; the context's end shuts it down
// (socketConn.interrupt). The hook against a Go hello-world, CPU time,
// medians of pairs: net.Dialer 1.73–1.76×, a polled *os.File 1.73–1.75×,
// the blocking socket 1.69–1.70×; its system calls are those of the
// request and nothing else (strace).
func dial(path string) (daemonConn, error) {
	// As net does: no fork may inherit the socket between its creation
	// and close-on-exec.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, &dialError{os.NewSyscallError("socket", err)}
	}
	if err := connectBlocking(fd, path); err != nil {
		syscall.Close(fd)
		return nil, &dialError{err}
	}
	return socketConn{os.NewFile(uintptr(fd), path)}, nil
}

// connectBlocking connects fd to the socket at path without waiting, as
// net does (at once, or EAGAIN when the daemon's backlog is full), then
// puts it in blocking mode.
func connectBlocking(fd int, path string) error {
	if err := syscall.SetNonblock(fd, true); err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		return os.NewSyscallError("connect", err)
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	return nil
}

// socketConn is a connected socket in blocking mode: os.File reads and
// writes it with plain system calls, outside the poller.
type socketConn struct{ *os.File }

// interrupt shuts the socket down, which returns a read or write blocked
// on it. Control holds the descriptor open meanwhile, so a concurrent
// Close cannot hand its number to another file first.
func (c socketConn) interrupt() {
	if rc, err := c.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
	}
}
