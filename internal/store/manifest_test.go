package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMissingManifestRefused(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir)
	if err := os.Remove(filepath.Join(dir, "MANIFEST")); err != nil {
		t.Fatal(err)
	}
	before := dataFiles(t, dir)
	if len(before) == 0 {
		t.Fatal("no data files to protect")
	}
	_, err := Open(dir, Options{GCInterval: -1})
	if !errors.Is(err, ErrNoManifest) {
		t.Fatalf("open without MANIFEST: %v", err)
	}
	for _, want := range []string{"is damaged", "MANIFEST is missing", "refusing to open", "medalliond repair"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	if after := dataFiles(t, dir); !slices.Equal(after, before) {
		t.Errorf("data files changed: %v, then %v", before, after)
	}
	// The lock was released: once the user has put the data back (here,
	// moved it aside), the directory opens.
	if err := os.Rename(dir, dir+".damaged"); err != nil {
		t.Fatal(err)
	}
	openSpace(t, dir, Options{GCInterval: -1})
}

// dataFiles lists the .sst and .vlog files of dir with their sizes.
func dataFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext == ".sst" || ext == ".vlog" {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s:%d", e.Name(), fi.Size()))
		}
	}
	return out
}

// TestOpenMakesFilesPrivate: files a store written before kept 0644 (as
// Badger creates them) lose their group and other bits at Open. (Files
// Badger creates from then on are the daemon's umask's business: see
// daemon.TestDataDirIsPrivate.)
func TestOpenMakesFilesPrivate(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chmod(filepath.Join(dir, e.Name()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	openSpace(t, dir, Options{GCInterval: -1, Reserve: -1})
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // Badger removed it at Open
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v after Open", e.Name(), fi.Mode().Perm())
		}
	}
}
