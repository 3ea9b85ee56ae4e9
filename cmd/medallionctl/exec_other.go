//go:build !unix

package main

import (
	"os"
	"os/exec"
)

// execReplace runs path with this process's standard streams and exits
// with its status, where a process cannot be replaced.
func execReplace(path string, argv, env []string) error {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		os.Exit(ee.ExitCode())
	}
	return err
}
