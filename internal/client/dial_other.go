//go:build !unix

package client

import (
	"net"
	"time"
)

// dial connects to the daemon's socket. medalliond runs on Unix only
// (internal/socket), so this is only ever a dial that fails.
func dial(path string) (daemonConn, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, &dialError{err}
	}
	return netConn{c}, nil
}

// netConn is a net.Conn that a deadline in the past interrupts.
type netConn struct{ net.Conn }

func (c netConn) interrupt() { _ = c.SetDeadline(time.Unix(1, 0)) }
