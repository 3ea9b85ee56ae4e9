package store

import "fmt"

// GCPasses reports how many value-log collector passes have completed.
func GCPasses(b *Badger) int64 { return b.gcPasses.Load() }

// GCStopped reports whether the collector goroutine has exited.
func GCStopped(b *Badger) bool {
	select {
	case <-b.gcDone:
		return true
	default:
		return false
	}
}

// Levels describes the LSM levels, a string that changes while Badger
// compacts, and whether any level is due for compaction.
func Levels(b *Badger) (desc string, due bool) {
	for _, l := range b.db.Levels() {
		desc += fmt.Sprintf("L%d: %d tables, %d bytes; ", l.Level, l.NumTables, l.Size)
		if l.Score >= 1 {
			due = true
		}
	}
	return desc, due
}

// ListSizes returns the planner's index list sizes by "n/<node>" and
// "t/<tag>".
func ListSizes(b *Badger) map[string]int64 {
	out := make(map[string]int64)
	for k, v := range b.counters.sizes.snapshot() {
		out[k[:len(k)-1]] = v // drop the separator
	}
	return out
}

// RaceBuild: the tests run under the race detector.
const RaceBuild = raceBuild
