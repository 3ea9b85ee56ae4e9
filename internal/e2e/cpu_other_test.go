//go:build !unix

package e2e

import (
	"testing"
	"time"
)

// processCPU has no getrusage to read here: the benchmarks that report
// CPU time skip.
func processCPU(b *testing.B) time.Duration {
	b.Skip("the CPU time of this process needs getrusage")
	return 0
}

// heapProfile: no SIGUSR1 to ask the daemon for its heap profile here.
func (d *ingestd) heapProfile(string) {}
