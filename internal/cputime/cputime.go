// Package cputime reads the CPU time the process has used, for benchmarks
// that report CPU per op beside wall time: on a shared machine the wall
// time moves with everyone else's load, the CPU time much less.
package cputime

import "time"

// Self is the CPU time, user and system, the process has used so far; ok
// is false where the system does not tell (then Self is 0).
func Self() (d time.Duration, ok bool) { return self() }
