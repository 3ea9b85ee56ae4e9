//go:build !unix

package hookcache

import "errors"

// Without Unix permissions to check, no answer is kept or read: the hook
// always asks the daemon.

// Read finds no kept answer on this system.
func Read(dir, cwd string, budget int) (string, bool) { return "", false }

// running cannot be told here; no file is ever read.
func running(int, string) bool { return false }

// Writer keeps nothing on this system.
type Writer struct{}

// Open refuses: see Read.
func Open(string, bool) (*Writer, error) {
	return nil, errors.New("hook answers are kept on Unix systems only")
}

// NameFor names no file.
func (*Writer) NameFor(string, int, []string) string { return "" }

// Put keeps nothing.
func (*Writer) Put(Answer) (string, error) {
	return "", errors.New("hook answers are kept on Unix systems only")
}

// Has finds nothing.
func (*Writer) Has(string) bool { return false }

// Remove has nothing to remove.
func (*Writer) Remove(string) error { return nil }

// Close has nothing to close.
func (*Writer) Close() error { return nil }
