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
// kernel recorded it at connect time (SO_PEERCRED).
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var uid int
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, cerr = PeerUID(int(fd)) }); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	return uid, cerr
}

// PeerUID is peerUID for a connected socket's descriptor, for a socket
// served outside net (the hook's, internal/server).
func PeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	return int(cred.Uid), nil
}
