//go:build !race

package curate

const raceBuild = false
