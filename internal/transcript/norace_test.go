//go:build !race

package transcript

// raceBuild: the tests run under the race detector.
const raceBuild = false
