//go:build unix

package store

import (
	"fmt"
	"os"
	"syscall"
)

// FreeSpace reports the bytes an unprivileged process may still write to
// the filesystem holding dir (statfs's f_bavail): the root-only reserve of
// ext4 does not count, since the daemon does not run as root.
func FreeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// allocated is the disk space a file really takes: Badger's memtable logs
// are sparse (16 MiB long, mostly holes), so their size says little.
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
