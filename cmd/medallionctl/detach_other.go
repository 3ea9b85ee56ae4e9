//go:build !unix

package main

import "os/exec"

// detach does nothing where there are no Unix sessions (nor a medalliond).
func detach(*exec.Cmd) {}
