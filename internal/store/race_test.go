//go:build race

package store

// raceBuild: the tests run under the race detector.
const raceBuild = true
