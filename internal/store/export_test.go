package store

// GCPasses reports how many value-log collector passes have completed.
func GCPasses(b *Badger) int64 { return b.gcPasses.Load() }

// GCStopped reports whether the collector goroutine has exited.
func GCStopped(b *Badger) bool {
	select {
	case <-b.gcDone:
		return true
	default:
		return false
	}
}
