package resident

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// PageOut pages out every mapping of a file under dir with
// madvise(MADV_PAGEOUT): clean pages leave memory, the page cache
// included, dirty ones leave the process's page tables and are written
// back by the kernel as usual, and a later access faults them in again.
// PAGEOUT, not DONTNEED: the owner of those mappings (Badger) may unmap
// one between our reading /proc/self/maps and the madvise call, and the
// range could by then hold Go heap, which DONTNEED would zero; PAGEOUT
// never changes what memory holds. Errors are ignored: a kernel without
// MADV_PAGEOUT (before 5.4) keeps the pages resident, which costs memory
// and nothing else.
func PageOut(dir string) {
	prefix := []byte(dir + "/")
	eachMapping(func(m mapping) {
		if bytes.HasPrefix(m.path, prefix) {
			madvise(m, unix.MADV_PAGEOUT)
		}
	})
}

// A Releaser takes the pages of every mapping of a file under a folder out
// of the process's resident set, like PageOut, but keeps those of the
// files its caller calls stable in the page cache: it drops them from the
// process's page tables with madvise(MADV_DONTNEED), so the next read
// faults them back from memory instead of the disk. The rest are paged
// out. It works in steps of bounded length: dropping a few hundred
// megabytes of resident pages takes the kernel tens of milliseconds, and
// the caller holds off its own work during each step (see Step). It
// remembers how far it got in each map.
type Releaser struct {
	prefix []byte
	done   map[mapKey]uint64 // how far DONTNEED got in a stable map
	paged  map[mapKey]bool   // the other maps, paged out once
}

// mapKey tells maps apart across steps: a map that moved, or another one
// at the same address, starts afresh.
type mapKey struct{ start, inode uint64 }

// releaseChunk is how much of a map one madvise call covers, so that a
// step can stop within its time.
const releaseChunk = 4 << 20

// NewReleaser hands back the maps of the files under dir.
func NewReleaser(dir string) *Releaser {
	return &Releaser{prefix: []byte(dir + "/"), done: make(map[mapKey]uint64), paged: make(map[mapKey]bool)}
}

// Step reads /proc/self/maps anew and goes on dropping the pages of the
// stable files' maps for about budget (0: until done), pages out the
// other maps under the folder it has not paged out yet, and reports
// whether every map is done.
//
// The caller must make sure that no map of a stable file is unmapped or
// moved until Step returns (the store holds off every call while a step
// runs): a range freed between our reading /proc/self/maps and the
// madvise call could by then hold Go heap, which DONTNEED would zero.
// DONTNEED keeps what a shared file map held, written pages included
// (they stay dirty in the page cache); a private map of a stable file
// would lose its written pages, so only shared ones are dropped.
func (r *Releaser) Step(stable func(path []byte) bool, budget time.Duration) (finished bool) {
	deadline := time.Now().Add(budget)
	finished = true
	moved := false // a step drops at least one chunk, whatever its budget
	eachMapping(func(m mapping) {
		if !bytes.HasPrefix(m.path, r.prefix) {
			return
		}
		k := mapKey{m.start, m.inode}
		if !stable(m.path) || len(m.perms) < 4 || m.perms[3] != 's' {
			if !r.paged[k] {
				madvise(m, unix.MADV_PAGEOUT)
				r.paged[k] = true
			}
			return
		}
		for from := max(m.start, r.done[k]); from < m.end; from = r.done[k] {
			if budget > 0 && moved && time.Now().After(deadline) {
				finished = false
				return
			}
			to := min(m.end, from+releaseChunk)
			madvise(mapping{start: from, end: to}, unix.MADV_DONTNEED)
			r.done[k], moved = to, true
		}
	})
	return finished
}

// DropExecutable takes the pages of the running binary's read-only
// mappings (its code and read-only data, about 18 MB of an idle daemon's
// resident set) out of the process's page tables with
// madvise(MADV_DONTNEED). The pages stay in the page cache, so the next
// use faults them back in without reading the disk. DONTNEED is safe
// here, unlike for the store's files: these mappings live as long as the
// process, and a read-only private mapping holds only the file's pages,
// so dropping them loses nothing. Writable mappings (the binary's data)
// are never touched.
func DropExecutable() {
	for _, m := range executableMappings() {
		madvise(m, unix.MADV_DONTNEED)
	}
}

// executableMappings lists the read-only mappings of the running binary
// (by its device and inode, which still match once the file on disk is
// replaced).
func executableMappings() []mapping {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &st); err != nil {
		return nil
	}
	written := cowedMappings()
	var out []mapping
	eachMapping(func(m mapping) {
		if written[m.start] {
			return // relocated by the loader (RELRO): dropping would undo it
		}
		if m.inode == st.Ino && m.dev == uint64(st.Dev) && len(m.perms) >= 2 && m.perms[1] != 'w' {
			m.perms, m.path = nil, nil // valid only during the callback
			out = append(out, m)
		}
	})
	return out
}

// FileBacked is the process's resident file-backed (and shared) memory in
// bytes, the third field of /proc/self/statm; 0 when unknown.
func FileBacked() int64 {
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

// mapping is one line of /proc/self/maps; its slices are valid only
// during the callback.
type mapping struct {
	start, end uint64
	perms      []byte
	dev        uint64
	inode      uint64
	path       []byte
}

// eachMapping calls fn with every mapping of the process.
func eachMapping(fn func(mapping)) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset major:minor inode [path]
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 5 {
			continue
		}
		lo, hi, ok := bytes.Cut(fields[0], []byte("-"))
		major, minor, ok2 := bytes.Cut(fields[3], []byte(":"))
		if !ok || !ok2 {
			continue
		}
		var m mapping
		var errs [5]error
		m.start, errs[0] = strconv.ParseUint(string(lo), 16, 64)
		m.end, errs[1] = strconv.ParseUint(string(hi), 16, 64)
		maj, errMaj := strconv.ParseUint(string(major), 16, 32)
		mnr, errMin := strconv.ParseUint(string(minor), 16, 32)
		errs[2], errs[3] = errMaj, errMin
		m.inode, errs[4] = strconv.ParseUint(string(fields[4]), 10, 64)
		if errs != [5]error{} || m.end <= m.start {
			continue
		}
		m.dev = unix.Mkdev(uint32(maj), uint32(mnr))
		m.perms = fields[1]
		if len(fields) >= 6 {
			m.path = afterFields(sc.Bytes(), 5)
		}
		fn(m)
	}
}

// afterFields is what follows the first n space-separated fields of line:
// a mapping's path, which may hold spaces itself.
func afterFields(line []byte, n int) []byte {
	for range n {
		line = bytes.TrimLeft(line, " ")
		i := bytes.IndexByte(line, ' ')
		if i < 0 {
			return nil
		}
		line = line[i:]
	}
	return bytes.TrimLeft(line, " ")
}

func madvise(m mapping, advice int) {
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), uintptr(advice))
}

// cowedMappings names, by start address, the mappings with pages the
// process wrote (Anonymous above 0 in smaps): private copies that
// MADV_DONTNEED would throw away.
func cowedMappings() map[uint64]bool {
	out := make(map[uint64]bool)
	_ = Smaps("/proc/self/smaps", func(header []string, key, value string) {
		if key == "Anonymous:" && value != "0" {
			lo, _, _ := strings.Cut(header[0], "-")
			start, _ := strconv.ParseUint(lo, 16, 64)
			out[start] = true
		}
	})
	return out
}
