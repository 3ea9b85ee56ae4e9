// Package atomicfile writes a file that appears whole or not at all.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data: a temporary file in path's folder
// (".NAME.*", so that a reader of the folder can tell it apart), then
// renamed over path. The temporary file gets os.CreateTemp's mode (0600)
// and is not synced: a crash may lose the new file, never leave a torn
// one under path. The temporary file is removed on failure.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}
