package hookcache

import (
	"bytes"
	"strconv"
	"syscall"
)

// processStart is when process pid started, in clock ticks since boot
// (field 22 of /proc/PID/stat), and whether it could be read.
func processStart(pid int) (string, bool) {
	fd, err := openRaw("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY)
	if err != nil {
		return "", false
	}
	// The line is about 300 bytes: 52 numbers and a name of at most 64.
	b, err := readAll(fd, 4096)
	syscall.Close(fd)
	if err != nil || len(b) > 4096 {
		return "", false
	}
	// The command name (field 2) is in parentheses and may hold spaces or
	// parentheses itself: the fields after it follow its last ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 { // state is field 3, starttime field 22
		return "", false
	}
	return string(f[19]), true
}
