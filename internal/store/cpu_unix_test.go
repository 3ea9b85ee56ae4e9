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
	ru := rusage(b)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pageFaults counts the page faults this process took without reading the
// disk: a query after the store handed its pages back takes one for every
// page it reads (fewer where the kernel maps neighbours with it). Unlike
// time, the count does not depend on what else the machine runs.
func pageFaults(b *testing.B) int64 { return rusage(b).Minflt }

func rusage(b *testing.B) *syscall.Rusage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return &ru
}
