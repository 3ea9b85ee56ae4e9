package store

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Badger writes and reads its files (value log, tables, memtable logs)
// through memory maps, and every page it touched stays in the process's
// resident set until the kernel needs the memory: a backfill of 1.6 GB of
// transcripts left 430 MB of mapped store pages resident, which the OS
// (and a user reading top) counts as the daemon's memory (issue 12).
// trimMapped hands those pages back with madvise(MADV_PAGEOUT): clean ones
// leave memory, dirty ones leave the process's page tables and are written
// back by the kernel as usual, and a later access faults them in again.
// PAGEOUT, not DONTNEED: a mapping Badger unmaps between our reading
// /proc/self/maps and the madvise call could be replaced by Go heap, which
// DONTNEED would zero; PAGEOUT never changes what memory holds.

// trimMapped pages out the store's mapped files when the process's
// file-backed resident memory is above budget bytes (0: always). Errors
// are ignored: a kernel without MADV_PAGEOUT (before 5.4) keeps the pages
// resident, which costs memory and nothing else.
func (b *Badger) trimMapped(budget int64) {
	if budget > 0 && mappedResident() <= budget {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	prefix := []byte(b.dir + "/")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		line := sc.Bytes()
		i := bytes.IndexByte(line, '/')
		if i < 0 || !bytes.HasPrefix(line[i:], prefix) {
			continue
		}
		span, _, _ := bytes.Cut(line, []byte(" "))
		lo, hi, ok := bytes.Cut(span, []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_PAGEOUT)
	}
}

// mappedResident is the process's resident file-backed (and shared)
// memory in bytes, the third field of /proc/self/statm; 0 when unknown.
func mappedResident() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
