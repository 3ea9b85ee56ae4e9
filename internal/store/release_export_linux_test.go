package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/medallionhq/medallion/internal/resident"
)

// ReleaseChecked does what release does, holding the lock hold longer,
// and checks the premise that makes its MADV_DONTNEED safe: no map that
// stableMappings names is unmapped or moved while the lock is held. It
// reads the store's shared stable maps from /proc/self/maps after taking
// the lock, releases, waits hold, reads them again, and returns the maps
// of the first reading that the second no longer shows. ran is false when
// a call was in flight (or the store closed) and nothing was done. churned
// reports whether the store's other maps changed meanwhile (Badger's flush
// at work): what the test overlapped.
func ReleaseChecked(b *Badger, hold time.Duration) (gone []string, stable int, churned, ran bool) {
	if !b.mu.TryLock() {
		return nil, 0, false, false
	}
	defer b.mu.Unlock()
	if b.closed {
		return nil, 0, false, false
	}
	isStable := b.stableMappings()
	every := func([]byte) bool { return true }
	before, all := sharedMaps(b.mappedDir, isStable), sharedMaps(b.mappedDir, every)
	resident.NewReleaser(b.mappedDir).Step(isStable, 0) // all of it
	time.Sleep(hold)
	after := make(map[string]bool)
	for _, m := range sharedMaps(b.mappedDir, isStable) {
		after[m] = true
	}
	for _, m := range before {
		if !after[m] {
			gone = append(gone, m)
		}
	}
	return gone, len(before), !slices.Equal(all, sharedMaps(b.mappedDir, every)), true
}

// sharedMaps lists, as "start-end path", the shared maps of the files
// under dir that stable names.
func sharedMaps(dir string, stable func(path []byte) bool) []string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var out []string
	prefix := []byte(dir + "/")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 6 || len(fields[1]) < 4 || fields[1][3] != 's' {
			continue
		}
		path := bytes.Join(fields[5:], []byte(" "))
		if bytes.HasPrefix(path, prefix) && stable(path) {
			out = append(out, fmt.Sprintf("%s %s", fields[0], path))
		}
	}
	if err := sc.Err(); err != nil {
		panic(err)
	}
	return out
}

// Reclaim does a reclaim's work (reclaim.go) whether due or not: the
// flush and compaction, then, with collect, the value-log collector. It
// reports whether it ran (no call was in flight).
func Reclaim(b *Badger, collect bool) bool {
	if !b.flushAndCompact() {
		return false
	}
	if collect {
		b.collectGarbage()
	}
	return true
}

// SetReclaim sets how much the value logs must grow before a reclaim and
// the tables' size past which none runs, until restore is called.
func SetReclaim(after, maxTables int64) (restore func()) {
	prevAfter, prevTables := reclaimAfter, reclaimMaxTables
	reclaimAfter, reclaimMaxTables = after, maxTables
	return func() { reclaimAfter, reclaimMaxTables = prevAfter, prevTables }
}
