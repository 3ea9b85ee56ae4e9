//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/medallionhq/medallion/internal/atomicfile"
)

// watchHeapProfile writes the daemon's in-use heap profile to path, after
// a collection, each time the process gets SIGUSR1, until stop is called:
// what the Go heap holds at a moment of a real workload (idle after a
// backfill, say), without stopping the daemon.
func watchHeapProfile(path string) (stop func(), err error) {
	// Fail now, not at the first signal, on a path that cannot be written.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("heap profile: %w", err)
	}
	f.Close()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-sig:
				if err := writeHeapProfile(path); err != nil {
					fmt.Fprintln(os.Stderr, "medalliond:", err)
				}
			}
		}
	}()
	return func() { signal.Stop(sig); close(done) }, nil
}

func writeHeapProfile(path string) error {
	runtime.GC() // the profile's in-use figures are the last collection's
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	// Whole or not at all: a reader waiting for it never reads half.
	if err := atomicfile.Write(path, buf.Bytes()); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}
