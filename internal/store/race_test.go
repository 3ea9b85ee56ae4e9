//go:build race

package store_test

// raceBuild: the tests run under the race detector.
const raceBuild = true
