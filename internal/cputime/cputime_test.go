package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestSelfGrows: CPU spent between two readings shows in the second.
func TestSelfGrows(t *testing.T) {
	before, ok := Self()
	if !ok {
		if runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1" {
			t.Fatalf("no CPU time on %s", runtime.GOOS)
		}
		t.Skipf("no CPU time on %s", runtime.GOOS)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	after, _ := Self()
	if after <= before {
		t.Fatalf("CPU time %v then %v after 50 ms of spinning (%d)", before, after, x)
	}
}
