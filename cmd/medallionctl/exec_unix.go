//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// execReplace runs path in place of this process, which keeps its pid,
// stdin and stdout: an MCP client talks to the program it started.
func execReplace(path string, argv, env []string) error {
	if err := syscall.Exec(path, argv, env); err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	return nil // not reached
}
