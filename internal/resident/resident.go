// Package resident hands pages a process has mapped back to the OS. Linux
// counts every page of a mapped file that the process touched in its
// resident set until the kernel needs the memory, whether or not it is
// used again: Badger's tables and value logs, and the daemon's own code.
// An idle daemon's resident memory should be what it holds, not what it
// once read (issue 12).
package resident
