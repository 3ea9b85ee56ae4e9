//go:build !unix

package main

import "errors"

// watchHeapProfile: there is no SIGUSR1 to ask for the profile here.
func watchHeapProfile(string) (func(), error) {
	return nil, errors.New("--heap-profile is not supported on this system")
}
