package resident

import (
	"bufio"
	"os"
	"strings"
)

// Smaps walks a /proc/PID/smaps file: fn is called for each "Key: value"
// line of a mapping ("Rss:", "Anonymous:" …), with the fields of that
// mapping's header (start-end perms offset dev inode [path]; anonymous
// mappings have no path) and the line's value (in kB for sizes). It is
// the one reader of smaps for the daemon's idle release and for the tests
// and benchmarks that say what is resident.
func Smaps(path string, fn func(header []string, key, value string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var header []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0:
		case strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			header = fields
		case header != nil && len(fields) >= 2:
			fn(header, fields[0], fields[1])
		}
	}
	return sc.Err()
}
