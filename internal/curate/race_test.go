//go:build race

package curate

// raceBuild: the race detector slows the differential tests over many
// texts tenfold; they check single-goroutine functions, so a race build
// runs a sample of them.
const raceBuild = true
