package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// mountTmpfs mounts a tmpfs of size bytes under a temporary directory, or
// skips the test where mounting is not allowed (not root, no
// CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root: run this test as root to fill a real disk")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file that leaves about keep bytes free under dir.
func fill(t *testing.T, dir string, keep int64) string {
	t.Helper()
	free, err := FreeSpace(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "filler")
	if free > keep {
		if err := os.WriteFile(path, make([]byte, free-keep), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestDiskFullRealTmpfs fills a real 48 MiB tmpfs (8 MiB of it another
// file's) through the store. Before
// the guard, Badger's mmap'd value-log write died of SIGBUS here and killed
// the test binary; now writes stop at the reserve, everything acknowledged
// stays readable, a restart on the full disk is read-only, and once space
// is freed the store reopens read-write by itself.
func TestDiskFullRealTmpfs(t *testing.T) {
	mnt := mountTmpfs(t, 48<<20)
	dir := filepath.Join(mnt, "store")
	// Space another file holds, which the user frees at the end below:
	// freeing only what the filler took after the restart may leave less
	// than the reserve (the store's own files grew when it closed).
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 8<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Logger:        hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Warn, Output: t.Output()}),
		GCInterval:    -1,
		Reserve:       16 << 20,
		SpaceInterval: 10 * time.Millisecond,
	}
	ctx := context.Background()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Closed before the unmount (cleanups run last first); closing twice
	// is fine.
	t.Cleanup(func() { s.Close() })
	var stored int
	var refused error
	for i := 0; i < 200 && refused == nil; i++ {
		// 1 MiB of events per batch: the tmpfs cannot hold 200.
		batch := IngestBatch{File: file("f", int64(i+1)), Events: bigEvents(fmt.Sprintf("b%d", i), 16, 1, 8, 1<<20)}
		if _, err := s.Ingest(ctx, batch); err != nil {
			refused = err
			break
		}
		stored++
	}
	if !errors.Is(refused, ErrDiskFull) {
		t.Fatalf("after %d batches: %v, want ErrDiskFull", stored, refused)
	}
	free, _ := FreeSpace(dir)
	t.Logf("stored %d MiB batches, then: %v (statfs: %d MiB free)", stored, refused, free>>20)
	if stored < 5 {
		t.Fatalf("only %d batches stored before the guard stopped writes", stored)
	}
	checkBatches := func(s *Badger) {
		t.Helper()
		fs, err := s.FileState(ctx, "f")
		if err != nil || fs == nil || fs.Offset != int64(stored) {
			t.Fatalf("file state: %+v, %v; want offset %d", fs, err, stored)
		}
		si := mustSession(t, s, "sssss000")
		if si.Buffered != int64(16*stored) {
			t.Fatalf("buffered %d events, want %d", si.Buffered, 16*stored)
		}
		if evs := mustEpisode(t, s, "sssss000", 0, 0); len(evs) != 16*stored {
			t.Fatalf("read back %d events, want %d", len(evs), 16*stored)
		}
	}
	checkBatches(s)
	if err := s.Close(); err != nil {
		t.Fatalf("close on a full disk: %v", err)
	}

	// Closing flushed and trimmed Badger's files, which freed a little:
	// another writer takes it, and a restart on the full disk comes up
	// read-only.
	filler := fill(t, mnt, 8<<20)
	s, err = Open(dir, opts)
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if sp := s.Space(); !sp.ReadOnly {
		t.Fatalf("space after a restart on the full disk: %+v", sp)
	}
	checkBatches(s)

	for _, f := range []string{filler, ballast} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "a read-write reopen", func() bool { return s.Space().Writable() })
	if _, err := s.Ingest(ctx, IngestBatch{File: file("f", int64(stored+1)), Events: bigEvents("after", 16, 1, 8, 1<<20)}); err != nil {
		t.Fatalf("ingest once space is back: %v", err)
	}
	stored++
	checkBatches(s)
}
