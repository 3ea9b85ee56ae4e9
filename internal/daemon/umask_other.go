//go:build !unix

package daemon

// privateFiles has no umask to set outside Unix.
func privateFiles() (restore func()) { return func() {} }
