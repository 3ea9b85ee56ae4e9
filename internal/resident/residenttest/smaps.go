// Package residenttest measures, for tests, how much of the process's
// mapped memory is resident.
package residenttest

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// KB sums the resident kB of the mappings pick selects, from
// /proc/self/smaps; pick sees a mapping's header fields (anonymous
// mappings have no sixth field, the path). It skips the test where there
// is no smaps.
func KB(t testing.TB, pick func(fields []string) bool) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("needs /proc/self/smaps")
	}
	defer f.Close()
	var kb int64
	var ours bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			ours = pick(fields)
		case len(fields) >= 2 && fields[0] == "Rss:" && ours:
			n, _ := strconv.ParseInt(fields[1], 10, 64)
			kb += n
		}
	}
	return kb
}

// Under selects the mappings of files under dir.
func Under(dir string) func(fields []string) bool {
	return func(fields []string) bool { return len(fields) >= 6 && strings.HasPrefix(fields[5], dir+"/") }
}
