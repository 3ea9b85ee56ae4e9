// Package residenttest measures, for tests, how much of the process's
// mapped memory is resident.
package residenttest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/resident"
)

// KB sums the resident kB of the mappings pick selects, from
// /proc/self/smaps; pick sees a mapping's header fields (anonymous
// mappings have no sixth field, the path). It skips the test where there
// is no smaps.
func KB(t testing.TB, pick func(fields []string) bool) int64 {
	t.Helper()
	var kb int64
	err := resident.Smaps("/proc/self/smaps", func(header []string, key, value string) {
		if key == "Rss:" && pick(header) {
			n, _ := strconv.ParseInt(value, 10, 64)
			kb += n
		}
	})
	if err != nil {
		t.Skip("needs /proc/self/smaps")
	}
	return kb
}

// Under selects the mappings of files under dir.
func Under(dir string) func(fields []string) bool {
	return func(fields []string) bool { return len(fields) >= 6 && strings.HasPrefix(fields[5], dir+"/") }
}
