//go:build unix

package client

import (
	"os"
	"syscall"
)

// dial connects to the daemon's socket with plain system calls and returns
// the connection as an *os.File: non-blocking and registered with the
// runtime's poller, so a read waits without holding a thread and
// SetDeadline bounds it, as on a net.Conn. net.Dialer does the same
// connect with more around it (for a context that can end, a goroutine to
// watch it), and the SessionStart hook, which runs before every agent
// session, paid for that: 0.05–0.13 of a Go hello-world's wall time.
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
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, &dialError{os.NewSyscallError("setnonblock", err)}
	}
	// A local stream socket connects at once or not at all (EAGAIN when
	// the daemon's backlog is full): there is nothing to wait for.
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return nil, &dialError{os.NewSyscallError("connect", err)}
	}
	return os.NewFile(uintptr(fd), path), nil
}
