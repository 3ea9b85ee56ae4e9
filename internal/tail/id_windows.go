//go:build windows

package tail

import (
	"fmt"
	"os"
	"syscall"
)

// fileID returns the volume serial number and file index of an open file,
// Windows' equivalent of device and inode.
func fileID(f *os.File) (dev, ino uint64, fi os.FileInfo, err error) {
	fi, err = f.Stat()
	if err != nil {
		return 0, 0, nil, err
	}
	var d syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &d); err != nil {
		return 0, 0, nil, fmt.Errorf("file information %s: %w", f.Name(), err)
	}
	return uint64(d.VolumeSerialNumber), uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow), fi, nil
}

// pathID opens path to read its identity: Windows has no stat that
// returns the file index.
func pathID(path string) (dev, ino uint64, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	dev, ino, fi, err := fileID(f)
	if err != nil {
		return 0, 0, 0, err
	}
	return dev, ino, fi.Size(), nil
}
