//go:build unix

package e2e

import (
	"os"
	"strings"
	"syscall"
	"time"
)

// heapProfile has the daemon write its heap profile (SIGUSR1) when it was
// started with MEDALLION_HEAP_PROFILE, waits for it and logs where it is.
func (d *ingestd) heapProfile(when string) {
	d.tb.Helper()
	if d.heapFile == "" {
		return
	}
	before, _ := os.Stat(d.heapFile)
	if err := syscall.Kill(d.pid(), syscall.SIGUSR1); err != nil {
		d.tb.Fatal(err)
	}
	waitFor(d.tb, 30*time.Second, "the heap profile", func() bool {
		now, err := os.Stat(d.heapFile)
		return err == nil && now.Size() > 0 && (before == nil || !os.SameFile(before, now))
	})
	kept := strings.TrimSuffix(d.heapFile, ".pprof") + "-" + when + ".pprof"
	if err := os.Rename(d.heapFile, kept); err != nil {
		d.tb.Fatal(err)
	}
	d.tb.Logf("heap profile %s: %s", when, kept)
}
