//go:build !linux

package server

import "errors"

// ServeHook is Linux's alone (hooksocket_linux.go): elsewhere the hook
// asks on the API's socket.
func (s *Server) ServeHook(string) error {
	return errors.ErrUnsupported
}

// hookListener has nothing to close where ServeHook serves nothing.
type hookListener struct{}

func (*hookListener) close() {}
