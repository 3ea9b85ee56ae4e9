package transcript

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// base64Run is what scrubBase64 replaces, as a pattern.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/=_-]{512,}`)

// scrubbedByPattern is what scrubBase64 must return for s.
func scrubbedByPattern(s string) string {
	return base64Run.ReplaceAllStringFunc(s, func(m string) string { return "[binary data: " + byteSize(len(m)) + "]" })
}

// TestScrubBase64Windows checks scrubBase64's skipping scan against a
// pattern over texts made of runs just under, at and over minBase64Run,
// at the start, the end and amid prose.
func TestScrubBase64Windows(t *testing.T) {
	want := scrubbedByPattern
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

// TestScrubBase64Edges: runs one under, at and one over minBase64Run and
// twice it, alone, at the text's start and end, and two of them one byte
// apart: where the skipping scan's windows begin and end.
func TestScrubBase64Edges(t *testing.T) {
	for _, k := range []int{minBase64Run - 1, minBase64Run, minBase64Run + 1, 2*minBase64Run - 1, 2 * minBase64Run, 2*minBase64Run + 1} {
		r := strings.Repeat("A", k)
		for _, s := range []string{r, r + " tail", "head " + r, "é" + r + "\n", r + "." + r, "x" + r + "é" + r[1:] + "x", r + "{" + r[:k/2]} {
			if got, want := scrubBase64(s), scrubbedByPattern(s); got != want {
				t.Errorf("run of %d: scrubBase64 = %.120q…, want %.120q…", k, got, want)
			}
		}
	}
	if got, want := scrubBase64(strings.Repeat("A", minBase64Run)), "[binary data: "+byteSize(minBase64Run)+"]"; got != want {
		t.Errorf("a run of exactly minBase64Run: %q, want %q", got, want)
	}
}
