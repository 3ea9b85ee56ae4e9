package resident_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkFaultBack is what a read costs through a map whose pages were
// handed back while the page cache kept them (the store's release), the
// price a query pays for each page it reads after one: a page touched
// alone (a scope query reads a few blocks and values scattered over
// hundreds of megabytes), the same with the map's page tables kept (all
// but the first page of every 2 MiB handed back: MADV_DONTNEED frees a
// page table it empties on kernels built with CONFIG_PT_RECLAIM), pages
// touched in order (a compaction, an export), and the same page read
// with pread instead, which Badger does not offer (it reads its tables
// and value logs only through maps). The figures are the machine's. On
// the VM of 27 Nov, a PVM guest where a fault's time goes to the
// page-table writes it makes (perf record), a page faulted alone cost
// 24–30 µs (22–26 µs in two later runs, and 17–23 µs with the tables
// kept) against 1.4–1.6 µs a page in order (one fault maps 16 of them);
// there the 1M scope query's slowest queries after a release fault 11–14
// pages each (slow-faults/op).
//
//	go test -run '^$' -bench FaultBack -count 3 ./internal/resident
func BenchmarkFaultBack(b *testing.B) {
	const size = 64 << 20
	const stride = 1 << 20 // past the kernel's fault-around (64 KiB) and readahead
	path := filepath.Join(b.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i) | 1
	}
	for off := 0; off < size; off += len(chunk) {
		if _, err := f.WriteAt(chunk, int64(off)); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = syscall.Munmap(m) }()
	touch := func(step int) {
		for i := 0; i < size; i += step {
			sink += m[i]
		}
	}
	touch(page) // every page in the page cache and mapped
	// Each sub-benchmark drops the map's pages (they stay in the page
	// cache) and reads them back, one op per page read.
	run := func(name string, step int, read func(step int)) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if err := syscall.Madvise(m, syscall.MADV_DONTNEED); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				read(step)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(size/step)), "ns/page")
		})
	}
	run("alone", stride, touch)
	b.Run("alone-tables-kept", func(b *testing.B) {
		const table = 2 << 20 // what one page table maps
		for b.Loop() {
			b.StopTimer()
			for i := 0; i < size; i += table {
				// The first page stays mapped since the first touch.
				if err := syscall.Madvise(m[i+page:i+table], syscall.MADV_DONTNEED); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			for i := stride / 2; i < size; i += stride { // not the kept pages
				sink += m[i]
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(size/stride)), "ns/page")
	})
	run("in-order", page, touch)
	buf := make([]byte, page)
	run("pread", stride, func(step int) {
		for i := 0; i < size; i += step {
			if _, err := f.ReadAt(buf, int64(i)); err != nil {
				b.Fatal(err)
			}
			sink += buf[0]
		}
	})
}

// sink keeps the compiler from dropping BenchmarkFaultBack's reads.
var sink byte
