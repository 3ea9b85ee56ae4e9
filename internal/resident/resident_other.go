//go:build !linux

package resident

// On other systems nothing is handed back: the calls below rely on
// Linux's /proc/self/maps and madvise advice (see resident_linux.go).

// PageOut does nothing here.
func PageOut(dir string) {}

// Release does nothing here.
func Release(dir string, stable func(path []byte) bool) {}

// DropExecutable does nothing here.
func DropExecutable() {}

// FileBacked is unknown here: 0.
func FileBacked() int64 { return 0 }
