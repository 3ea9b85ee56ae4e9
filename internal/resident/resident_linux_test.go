package resident

import (
	"crypto/sha256"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// written is changed by TestDropExecutable: the binary's data mapping
// must keep it.
var written = []int{1, 2, 3}

// presentPages counts the pages of the running binary's read-only
// mappings that are in the process's page tables, from
// /proc/self/pagemap (bit 63 of each page's entry). Unlike reading smaps
// it runs little code between the two counts, so it barely faults the
// binary back in while it measures. The file has an entry for each page
// of the kernel's size, which is not 4 KiB on every arm64 kernel.
func presentPages(t *testing.T, pagemap *os.File, ranges [][2]uint64, buf []byte) (n int) {
	t.Helper()
	page := uint64(os.Getpagesize())
	for _, r := range ranges {
		pages := (r[1] - r[0]) / page
		b := buf[:pages*8]
		if _, err := pagemap.ReadAt(b, int64(r[0]/page*8)); err != nil {
			t.Fatal(err)
		}
		for i := uint64(0); i < pages; i++ {
			if b[i*8+7]&0x80 != 0 {
				n++
			}
		}
	}
	return n
}

// TestDropExecutable: DropExecutable picks the test binary's code and
// read-only data, which then leave the process's page tables, and never
// its writable data, which keeps what was written to it.
func TestDropExecutable(t *testing.T) {
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skip("needs /proc/self/pagemap")
	}
	defer pagemap.Close()
	ms := executableMappings()
	var ranges [][2]uint64
	var most uint64
	code := uint64(reflect.ValueOf(TestDropExecutable).Pointer())
	hasCode := false
	for _, m := range ms {
		ranges = append(ranges, [2]uint64{m.start, m.end})
		most = max(most, (m.end-m.start)/uint64(os.Getpagesize())*8)
		hasCode = hasCode || m.start <= code && code < m.end
	}
	if !hasCode {
		t.Fatalf("the binary's read-only mappings %x do not hold its code at %x", ranges, code)
	}
	buf := make([]byte, most)
	written[1] = 42
	before := presentPages(t, pagemap, ranges, buf)
	for _, m := range ms {
		madvise(m, unix.MADV_DONTNEED)
	}
	after := presentPages(t, pagemap, ranges, buf)
	t.Logf("binary's read-only pages present: %d → %d", before, after)
	// Each page the running code touches again (here and on the
	// runtime's own threads) faults back in with its neighbours, 64 KiB
	// at a time: about 1 MB of this small binary comes back at once. At
	// least 256 KiB of it present before, whatever the page size.
	if before*os.Getpagesize() < 256<<10 || after > before*2/3 {
		t.Errorf("binary's read-only pages present: %d before dropping them, %d after", before, after)
	}
	DropExecutable()
	if written[1] != 42 {
		t.Errorf("the binary's data changed: %v", written)
	}
}

// TestDropExecutableWhileRunning: the daemon drops its code's pages from
// two goroutines at once (the store's idle check and the exporter) while
// requests run; code and read-only data fault back in unchanged, and what
// the running code wrote stays.
func TestDropExecutableWhileRunning(t *testing.T) {
	want := sha256.Sum256([]byte(strings.Repeat("medallion", 1000)))
	stop := make(chan struct{})
	var workers, droppers sync.WaitGroup
	var bad atomic.Int32
	for range 3 {
		workers.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				m := map[string]int{}
				m[fmt.Sprint(n)] = n
				if sha256.Sum256([]byte(strings.Repeat("medallion", 1000))) != want || m[strconv.Itoa(n)] != n {
					bad.Add(1)
				}
			}
		})
	}
	for range 2 {
		droppers.Go(func() {
			for range 20 {
				DropExecutable()
			}
		})
	}
	droppers.Wait()
	close(stop)
	workers.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d computations gave another result while the code was dropped", bad.Load())
	}
}

// TestFileBacked: a process running Go code has file-backed pages (its
// binary) resident.
func TestFileBacked(t *testing.T) {
	if n := FileBacked(); n <= 0 {
		t.Errorf("FileBacked() = %d", n)
	}
}
