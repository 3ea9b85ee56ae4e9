//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogRotationAndTail: start appends to the log, moves one past
// maxLogBytes aside, and on failure shows only this run's last lines.
func TestLogRotationAndTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogFileName)
	if err := os.WriteFile(path, []byte(strings.Repeat("x", maxLogBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	f, offset, err := openLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if offset != 0 {
		t.Errorf("offset in a rotated log %d, want 0", offset)
	}
	if st, err := os.Stat(path + ".1"); err != nil || st.Size() != maxLogBytes+1 {
		t.Errorf("old log not kept as .1: %v", err)
	}
	for i := range 30 {
		f.WriteString("line " + strings.Repeat("y", i%3) + "\n")
	}
	f.Close()

	f, offset, err = openLog(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("first of this run\nsecond of this run\n")
	f.Close()
	if got := logTail(path, offset); got != "  first of this run\n  second of this run" {
		t.Errorf("tail of this run = %q", got)
	}
	if got := logTail(path, 0); strings.Count(got, "\n") != logTailLines-1 || !strings.HasSuffix(got, "second of this run") {
		t.Errorf("tail = %q, want the last %d lines", got, logTailLines)
	}
	if got := logTail(path, offset+int64(len("first of this run\nsecond of this run\n"))); got != "  (empty)" {
		t.Errorf("tail of nothing = %q", got)
	}
}

func TestPIDFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), PIDFileName)
	if readPIDFile(path) != 0 {
		t.Error("a missing pid file reads as a pid")
	}
	if err := os.WriteFile(path, []byte("4242\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readPIDFile(path); got != 4242 {
		t.Errorf("pid %d, want 4242", got)
	}
	os.WriteFile(path, []byte("garbage"), 0o600)
	if readPIDFile(path) != 0 {
		t.Error("garbage reads as a pid")
	}
}
