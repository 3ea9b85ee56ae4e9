//go:build !unix

package store_test

import (
	"testing"
	"time"
)

// cpuTime has no getrusage to read here: the benchmarks that report
// CPU time skip.
func cpuTime(b *testing.B) time.Duration {
	b.Skip("the CPU time of this process needs getrusage")
	return 0
}

// pageFaults: no getrusage here either.
func pageFaults(b *testing.B) (minor, major int64) {
	b.Skip("page faults of this process need getrusage")
	return 0, 0
}
