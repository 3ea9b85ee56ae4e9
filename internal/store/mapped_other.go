//go:build !linux

package store

// trimMapped does nothing here: handing mapped pages back relies on
// Linux's /proc/self/maps and MADV_PAGEOUT (see mapped_linux.go).
func (b *Badger) trimMapped(int64) {}
