//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// detach puts cmd in a session of its own, so that the agent ending the
// hook's process group (on a timeout, say) does not end it too.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
