//go:build !unix

package main

import (
	"strconv"

	"github.com/spf13/cobra"
)

// exitStatus is an error that only sets the exit code.
type exitStatus int

func (e exitStatus) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// backgroundCommands is empty: start and stop detach with Unix sessions
// and signals, and the daemon itself needs a Unix OS.
func (e *env) backgroundCommands() []*cobra.Command { return nil }
