//go:build unix

package tail

import (
	"fmt"
	"os"
	"syscall"
)

// fileID returns the device and inode of an open file.
func fileID(f *os.File) (dev, ino uint64, fi os.FileInfo, err error) {
	fi, err = f.Stat()
	if err != nil {
		return 0, 0, nil, err
	}
	dev, ino, err = statID(fi)
	return dev, ino, fi, err
}

// pathID returns the device, inode and size of the file at path.
func pathID(path string) (dev, ino uint64, size int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, 0, err
	}
	dev, ino, err = statID(fi)
	return dev, ino, fi.Size(), err
}

func statID(fi os.FileInfo) (dev, ino uint64, err error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("stat %s: no device and inode (%T)", fi.Name(), fi.Sys())
	}
	// The conversions matter on platforms where Dev is signed (darwin).
	return uint64(st.Dev), uint64(st.Ino), nil
}
