//go:build jsonscancheck

package jsonscan

import "fmt"

// checkAdvance panics when the length a nested walk reported for the value
// at b[i] is not the one SkipValue finds: Advance trusts it, and a wrong
// one would shift the rest of the container. The transcript tests and
// fuzz targets run with -tags jsonscancheck to hold the readers to it.
func checkAdvance(b []byte, i, n int) {
	if end, err := SkipValue(b, i); err != nil || end != i+n {
		panic(fmt.Sprintf("jsonscan: Advance(%d) at %d, but SkipValue gives %d, %v", n, i, end-i, err))
	}
}
