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

// pageFaults counts the page faults this process took: minor ones, which
// map a page the page cache holds (a query after the store handed its pages
// back takes one for every page it reads, fewer where the kernel maps
// neighbours with it), and major ones, which read the disk (the page cache
// no longer held the page: memory pressure, or a reclaimer such as DAMON).
// Unlike time, the minor count does not depend on what else the machine
// runs.
func pageFaults(b *testing.B) (minor, major int64) {
	ru := rusage(b)
	return ru.Minflt, ru.Majflt
}

func rusage(b *testing.B) *syscall.Rusage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return &ru
}
