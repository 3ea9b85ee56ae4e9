//go:build unix

package daemon

import "syscall"

// privateFiles makes every file the process creates from now on 0600 and
// every directory 0700, and returns what restores the previous mask.
// Badger creates its .vlog, .mem, DISCARD and LOCK files 0644 and offers
// no mode option; the 0700 data dir protected them only until the first
// "cp -a" backup. The mask is process-wide, which suits a daemon whose
// every file is private.
func privateFiles() (restore func()) {
	prev := syscall.Umask(0o077)
	return func() { syscall.Umask(prev) }
}
