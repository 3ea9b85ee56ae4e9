//go:build !unix

package daemon

import "errors"

type dirLock struct{}

// lockDataDir fails: the daemon's single-instance guarantee rests on flock,
// and its socket on Unix file modes (see package socket).
func lockDataDir(dir string) (*dirLock, error) {
	return nil, errors.New("medalliond needs a Unix OS (Linux, macOS, BSD); data dir " + dir + " not locked")
}

func (*dirLock) release() error { return nil }

// LockHolder fails for the same reason as lockDataDir.
func LockHolder(dir string) (int, error) {
	return 0, errors.New("medalliond needs a Unix OS (Linux, macOS, BSD)")
}
