//go:build race

package transcript

// raceBuild: the tests run under the race detector, which slows the
// single-goroutine property tests tenfold and finds nothing in them.
const raceBuild = true
