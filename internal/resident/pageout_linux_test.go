package resident_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/medallionhq/medallion/internal/resident"
	"github.com/medallionhq/medallion/internal/resident/residenttest"
)

// page is the kernel's page size: 4 KiB on amd64, but 16 KiB or 64 KiB on
// some arm64 kernels (Asahi; RHEL's kernel-64k), where counting 4 KiB
// pages would ask the page cache for more pages than a map has.
var page = os.Getpagesize()

// TestPageOut: the touched pages of a file mapped from under dir leave
// the resident set, and what the map holds is unchanged.
func TestPageOut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i / page)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, len(data), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	var sum int
	for i := 0; i < len(m); i += page {
		sum += int(m[i])
	}
	t.Logf("read %d pages (sum %d)", len(m)/page, sum)
	ours := func(fields []string) bool { return len(fields) >= 6 && fields[5] == path }
	before := residenttest.KB(t, ours)
	if before < 2<<10 {
		t.Fatalf("only %d kB of the map resident after reading 4 MiB", before)
	}
	// The kernel skips pages still in a CPU's batch on their way to its
	// lists: a few tries, as the daemon trims again when next quiet.
	after := before
	for try := 0; try < 20 && after > before/4; try++ {
		resident.PageOut(dir)
		time.Sleep(20 * time.Millisecond)
		after = residenttest.KB(t, ours)
	}
	t.Logf("map resident: %d kB → %d kB", before, after)
	if after > before/4 {
		t.Errorf("map resident after PageOut: %d kB of %d kB", after, before)
	}
	for i := 0; i < len(m); i += page {
		if m[i] != byte(i/page) {
			t.Fatalf("byte %d reads %d after PageOut", i, m[i])
		}
	}
}

// TestRelease: the pages of a stable file's shared map leave the resident
// set but stay in the page cache, and what was written through the map is
// kept; a file that is not stable is paged out as by PageOut.
func TestRelease(t *testing.T) {
	dir := t.TempDir()
	const size = 4 << 20
	stable, other := writtenMap(t, filepath.Join(dir, "t.sst"), size), writtenMap(t, filepath.Join(dir, "t.mem"), size)
	named := func(name string) func([]string) bool {
		path := filepath.Join(dir, name)
		return func(fields []string) bool { return len(fields) >= 6 && fields[5] == path }
	}
	stableBefore, otherBefore := residenttest.KB(t, named("t.sst")), residenttest.KB(t, named("t.mem"))
	if stableBefore < 2<<10 || otherBefore < 2<<10 {
		t.Fatalf("only %d and %d kB of the maps resident after writing 4 MiB each", stableBefore, otherBefore)
	}
	isStable := func(path []byte) bool { return filepath.Ext(string(path)) == ".sst" }
	stableAfter, otherAfter := stableBefore, otherBefore
	for try := 0; try < 20 && (stableAfter > 0 || otherAfter > otherBefore/4); try++ {
		resident.NewReleaser(dir).Step(isStable, 0) // all of it
		time.Sleep(20 * time.Millisecond)
		stableAfter, otherAfter = residenttest.KB(t, named("t.sst")), residenttest.KB(t, named("t.mem"))
	}
	t.Logf("stable map resident: %d kB → %d kB; the other: %d kB → %d kB", stableBefore, stableAfter, otherBefore, otherAfter)
	if stableAfter != 0 {
		t.Errorf("stable map resident after Release: %d kB of %d kB", stableAfter, stableBefore)
	}
	if otherAfter > otherBefore/4 {
		t.Errorf("other map resident after Release: %d kB of %d kB", otherAfter, otherBefore)
	}
	// The synced half of each file: in the page cache for the stable file
	// (DONTNEED), out of it for the other (PAGEOUT).
	if n := cachedPages(t, stable[:size/2]); n < size/2/page*3/4 {
		t.Errorf("%d of the stable file's %d synced pages in the page cache after Release", n, size/2/page)
	}
	if n := cachedPages(t, other[:size/2]); n > size/2/page/4 {
		t.Errorf("%d of the other file's %d synced pages still in the page cache after Release", n, size/2/page)
	}
	for _, m := range [][]byte{stable, other} {
		for i := 0; i < size; i += page {
			if m[i] != byte(i/page)|1 {
				t.Fatalf("byte %d reads %d after Release", i, m[i])
			}
		}
	}
}

// cachedPages counts the pages of m in the page cache (mincore).
func cachedPages(t *testing.T, m []byte) int {
	t.Helper()
	v := make([]byte, (len(m)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&v[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, c := range v {
		n += int(c & 1)
	}
	return n
}

// TestReleaserSteps: a Releaser with a budget too short for more than one
// chunk a step still gets through a map in steps, and only then reports
// it done; the map's pages leave the resident set and what it held stays.
func TestReleaserSteps(t *testing.T) {
	dir := t.TempDir()
	const size = 4 * resident.ReleaseChunkForTest
	m := writtenMap(t, filepath.Join(dir, "t.sst"), size)
	ours := func(fields []string) bool { return len(fields) >= 6 && fields[5] == filepath.Join(dir, "t.sst") }
	before := residenttest.KB(t, ours)
	r := resident.NewReleaser(dir)
	stable := func([]byte) bool { return true }
	steps := 1
	for ; !r.Step(stable, time.Nanosecond); steps++ {
		if steps > 100 {
			t.Fatal("no end after 100 steps")
		}
	}
	after := residenttest.KB(t, ours)
	t.Logf("%d steps; resident %d kB → %d kB", steps, before, after)
	if steps < 4 {
		t.Errorf("a map of four chunks released in %d steps of a nanosecond", steps)
	}
	if after != 0 {
		t.Errorf("%d kB of %d resident after the last step", after, before)
	}
	for i := 0; i < size; i += page {
		if m[i] != byte(i/page)|1 {
			t.Fatalf("byte %d reads %d after the steps", i, m[i])
		}
	}
}

// writtenMap makes a file of size bytes at path, maps it shared, writes a
// byte of every page through the map, as Badger writes its files, and
// syncs the first half: PAGEOUT drops such clean pages from the page cache
// at once (pages written with write(2) it may leave there). The map is
// undone when the test ends.
func writtenMap(t *testing.T, path string, size int) []byte {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(m) })
	for i := 0; i < size; i += page {
		m[i] = byte(i/page) | 1
	}
	if _, _, errno := unix.Syscall(unix.SYS_MSYNC, uintptr(unsafe.Pointer(&m[0])), uintptr(size/2), unix.MS_SYNC); errno != 0 {
		t.Fatal(errno)
	}
	return m
}
