package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	badger "github.com/dgraph-io/badger/v4"
)

// ErrNoManifest is wrapped by Open's error when the store directory holds
// tables or value logs but no MANIFEST.
var ErrNoManifest = errors.New("MANIFEST is missing")

// checkManifest refuses a directory holding tables or value logs without a
// MANIFEST. Badger would start an empty database there and delete the
// tables as garbage (issue 11): the MANIFEST is what lists them.
func checkManifest(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, badger.ManifestFilename)); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("check manifest: %w", err)
	}
	var tables, vlogs int
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("check manifest: %w", err)
	}
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".sst":
			tables++
		case ".vlog":
			vlogs++
		}
	}
	if tables+vlogs == 0 {
		return nil // a new store
	}
	return &noManifestError{dir: dir, tables: tables, vlogs: vlogs}
}

// noManifestError names the damage and the way back a user has.
type noManifestError struct {
	dir           string
	tables, vlogs int
}

func (e *noManifestError) Error() string {
	return fmt.Sprintf("the store under %s is damaged: %s is missing but %d table (.sst) and %d value log (.vlog) files are there; "+
		"refusing to open it, because Badger would start empty and delete them. "+recovery,
		e.dir, badger.ManifestFilename, e.tables, e.vlogs)
}

// Is makes errors.Is(err, ErrNoManifest) true.
func (e *noManifestError) Is(target error) bool { return target == ErrNoManifest }

// privateModes takes group and other permissions off the files in dir:
// Badger creates several of them 0644 (the daemon now runs with a 0077
// umask, but stores written before kept those modes), and a backup copied
// with "cp -a" keeps them too.
func privateModes(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("file modes: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if mode := fi.Mode().Perm(); mode&0o077 != 0 {
			if err := os.Chmod(filepath.Join(dir, e.Name()), mode&^0o077); err != nil {
				return fmt.Errorf("file modes: %w", err)
			}
		}
	}
	return nil
}
