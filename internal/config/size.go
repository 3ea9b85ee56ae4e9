package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits maps the accepted (case-insensitive) suffixes to their factor:
// SI units are powers of 1000, IEC units powers of 1024, as on disk labels.
var sizeUnits = map[string]float64{
	"":    1,
	"b":   1,
	"kb":  1e3,
	"mb":  1e6,
	"gb":  1e9,
	"tb":  1e12,
	"kib": 1 << 10,
	"mib": 1 << 20,
	"gib": 1 << 30,
	"tib": 1 << 40,
}

// ParseSize parses a byte size such as "96MiB", "100MB", "1.5GiB" or
// "1048576".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	factor, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("%q is not a size: use a number with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. \"96MiB\")", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: %w", s, err)
	}
	bytes := f * factor
	if bytes >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(bytes), nil
}

// parseMemoryLimit parses memory_limit: a size, or "0"/"off" for no limit.
func parseMemoryLimit(s string) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "off") {
		return 0, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("%w, or \"off\"", err)
	}
	if n != 0 && n < MinMemoryLimit {
		return 0, fmt.Errorf("%q is too small: use at least %s, or \"off\"", s, FormatSize(MinMemoryLimit))
	}
	return n, nil
}

// FormatSize renders n bytes in the largest IEC unit that divides it
// exactly ("96MiB"), "off" for 0, so ParseSize reads it back unchanged.
func FormatSize(n int64) string {
	if n == 0 {
		return "off"
	}
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return strconv.FormatInt(n, 10)
}
