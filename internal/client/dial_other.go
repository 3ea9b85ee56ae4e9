//go:build !unix

package client

import "net"

// dial connects to the daemon's socket. medalliond runs on Unix only
// (internal/socket), so this is only ever a dial that fails.
func dial(path string) (daemonConn, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, &dialError{err}
	}
	return c, nil
}
