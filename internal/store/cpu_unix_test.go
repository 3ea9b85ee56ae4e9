//go:build unix

package store_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used. Per operation it shows
// what a query costs apart from waiting for a core, which on a shared
// machine can dominate the wall-clock figures.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
