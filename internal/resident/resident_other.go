//go:build !linux

package resident

import "time"

// On other systems nothing is handed back: the calls below rely on
// Linux's /proc/self/maps and madvise advice (see resident_linux.go).

// PageOut does nothing here.
func PageOut(dir string) {}

// Releaser does nothing here.
type Releaser struct{}

// NewReleaser hands back nothing here.
func NewReleaser(string) *Releaser { return &Releaser{} }

// Step has nothing to do here.
func (*Releaser) Step(func([]byte) bool, time.Duration) bool { return true }

// DropExecutable does nothing here.
func DropExecutable() {}

// FileBacked is unknown here: 0.
func FileBacked() int64 { return 0 }
