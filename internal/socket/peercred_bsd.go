//go:build darwin || freebsd

package socket

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// errNoPeerCred means the OS cannot tell who is on the other end.
var errNoPeerCred = errors.New("peer credentials not supported on this OS")

// peerUID returns the effective uid of the process that connected c, as the
// kernel recorded it at connect time (LOCAL_PEERCRED, the call behind
// getpeereid(3)).
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Xucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return 0, fmt.Errorf("peer credentials: %w", cerr)
	}
	return int(cred.Uid), nil
}
