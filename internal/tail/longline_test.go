package tail

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestOverLongLineNotHeld: a line over MaxLine is skipped while streaming
// past it; nothing of it is held (issue 11: two 60 MiB lines took the
// daemon from 18 to 75 MB).
func TestOverLongLineNotHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("x", 1<<20)
	for range 40 {
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteString("\nnext\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	Read(path, nil, Options{}, func(Line) error { return nil }) // warm the reader pool

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var lines []string
	res, err := Read(path, nil, Options{MaxLine: 16 << 20, MaxBatchBytes: 64 << 20}, func(l Line) error {
		lines = append(lines, string(l.Data))
		return nil
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lines, []string{"next"}) || res.Skipped[SkipLineTooLong] != 1 {
		t.Fatalf("lines %q, skipped %v", lines, res.Skipped)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Errorf("skipping a 40 MiB line allocated %d KiB", alloc>>10)
	}
}
