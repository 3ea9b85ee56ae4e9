package store

import "time"

// Test seams every OS's tests use (the store_test package's too).

// SetValueLogFileSize makes stores opened from now on start a new value-log
// file every n bytes (at least 1 MiB), until restore is called.
func SetValueLogFileSize(n int64) (restore func()) {
	prev := valueLogFileSize
	valueLogFileSize = n
	return func() { valueLogFileSize = prev }
}

// SetMappedCheck sets the idle check's period for stores opened from now
// on, until restore is called.
func SetMappedCheck(d time.Duration) (restore func()) {
	prev := mappedCheck
	mappedCheck = d
	return func() { mappedCheck = prev }
}
