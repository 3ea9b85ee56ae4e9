//go:build !unix

package main

import (
	"errors"
	"io"
)

// openLogFile: a daemon's stdout and stderr cannot be moved to a file
// here; a Windows service logs to the event log or its wrapper's file.
func openLogFile(string, int64) (io.Writer, error) {
	return nil, errors.New("--log-file is not supported on this system")
}
