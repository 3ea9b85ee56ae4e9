package resident_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/resident"
	"github.com/medallionhq/medallion/internal/resident/residenttest"
)

// TestPageOut: the touched pages of a file mapped from under dir leave
// the resident set, and what the map holds is unchanged.
func TestPageOut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i / 4096)
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
	for i := 0; i < len(m); i += 4096 {
		sum += int(m[i])
	}
	t.Logf("read %d pages (sum %d)", len(m)/4096, sum)
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
	for i := 0; i < len(m); i += 4096 {
		if m[i] != byte(i/4096) {
			t.Fatalf("byte %d reads %d after PageOut", i, m[i])
		}
	}
}
