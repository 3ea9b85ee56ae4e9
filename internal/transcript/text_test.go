package transcript

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestScrubBase64Windows checks scrubBase64's skipping scan against a
// pattern over texts made of runs just under, at and over minBase64Run,
// at the start, the end and amid prose.
func TestScrubBase64Windows(t *testing.T) {
	run := regexp.MustCompile(`[A-Za-z0-9+/=_-]{512,}`)
	want := func(s string) string {
		return run.ReplaceAllStringFunc(s, func(m string) string { return "[binary data: " + byteSize(len(m)) + "]" })
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ABCxyz019+/=-_"
	for n := range 300 {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			switch r.IntN(3) {
			case 0:
				b.WriteString(strings.Repeat("some prose, ", r.IntN(60)))
			case 1:
				b.WriteString([]string{" ", "\n", "é", "{", ""}[r.IntN(5)])
			default:
				k := minBase64Run - 3 + r.IntN(7)
				if r.IntN(4) == 0 {
					k = r.IntN(3 * minBase64Run)
				}
				for range k {
					b.WriteByte(alphabet[r.IntN(len(alphabet))])
				}
			}
		}
		s := b.String()
		if got, w := scrubBase64(s), want(s); got != w {
			t.Fatalf("case %d (%d bytes): scrubBase64 differs from the pattern:\n got %.200q\nwant %.200q", n, len(s), got, w)
		}
	}
}
