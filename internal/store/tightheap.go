package store

import (
	"runtime/debug"
	"sync"
)

// tightGCPercent is the Go collector's goal (GOGC) while a value-log
// collector pass runs. Badger reads every entry of a value log it rewrites
// into a buffer of its own (safeRead.Entry), live or not: a reclaim
// streams about what the logs hold through the heap as garbage (394 MB
// for a store of 420 MiB of cleared events, with 23 MB live), and the
// default goal of 100 let the heap in use grow to 62-65 MB. At 25 it
// stays at 44-49 MB, in the same time (BenchmarkReclaim, two runs of
// three each against the build before).
const tightGCPercent = 25

var tight struct {
	sync.Mutex
	n    int // passes running
	prev int // the goal before the first of them
}

// tightHeap lowers the collector's goal to tightGCPercent (never raising a
// lower one) until the function it returns is called; passes of several
// stores may overlap, and the last one to end restores the goal.
func tightHeap() (restore func()) {
	tight.Lock()
	defer tight.Unlock()
	if tight.n == 0 {
		tight.prev = debug.SetGCPercent(tightGCPercent)
		if tight.prev >= 0 && tight.prev < tightGCPercent {
			debug.SetGCPercent(tight.prev)
		}
	}
	tight.n++
	return func() {
		tight.Lock()
		defer tight.Unlock()
		if tight.n--; tight.n == 0 {
			debug.SetGCPercent(tight.prev)
		}
	}
}
