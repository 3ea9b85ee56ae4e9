package transcript

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/shasum"
)

// elisionFormat is the line boundText leaves where it cut a text; IsElision
// reads it back by its two ends.
const (
	elisionPrefix = "…["
	elisionSuffix = " bytes elided]…"
	elisionFormat = elisionPrefix + "%d" + elisionSuffix
)

// IsElision reports whether line (trimmed) is the mark of a cut the
// parser made (elisionFormat): no words of the transcript's. It reads the
// line by hand: a package-level regexp is compiled at the start of every
// program that links this package, and medallionctl's SessionStart hook,
// which runs before every agent session, paid a tenth of its start for it.
func IsElision(line string) bool {
	n, ok := strings.CutPrefix(line, elisionPrefix)
	if !ok {
		return false
	}
	n, ok = strings.CutSuffix(n, elisionSuffix)
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// boundText cuts s to at most max bytes, keeping its head and tail (the tail
// of a tool output is usually where the error is) around a marker, and
// replaces long base64 runs. It returns the text and, when it changed s, the
// original size.
func boundText(s string, max int) (string, int) {
	orig := len(s)
	if len(s) > max {
		marker, head, tail := elision(len(s), max)
		s = s[:runeHead(s, head)] + marker + s[runeTail(s, len(s)-tail):]
	}
	s = scrubBase64(s)
	if len(s) == orig {
		return s, 0
	}
	return s, orig
}

// elision returns the marker boundText puts in a text of n bytes cut to
// max, and the lengths of the head and tail it keeps around it, before
// they are moved to character boundaries (runeHead, runeTail).
func elision(n, max int) (marker string, head, tail int) {
	marker = "\n" + fmt.Sprintf(elisionFormat, n-max) + "\n"
	keep := max - len(marker)
	head = keep / 2
	return marker, head, keep - head
}

// runeHead moves the end of a head, head < len(s), back to the start of
// the character it cuts.
func runeHead[S ~string | ~[]byte](s S, head int) int {
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	return head
}

// runeTail moves the start of a tail on past the rest of the character it
// cuts.
func runeTail[S ~string | ~[]byte](s S, start int) int {
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return start
}

// minBase64Run is the shortest run of base64 characters treated as binary
// data. Prose, code and paths never have 512 characters without a space or
// punctuation; hashes and ids are far shorter.
const minBase64Run = 512

var base64Chars = func() (t [256]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "+/=-_" {
		t[c] = true
	}
	return t
}()

// scrubBase64 replaces every run of at least minBase64Run base64 characters
// with a placeholder, so that images and other blobs pasted into outputs
// never reach the store or a curation prompt.
func scrubBase64(s string) string {
	var b strings.Builder
	last := 0
	// i is where a run may start: 0, or just past a byte that is not
	// base64. A run of minBase64Run from i must hold the byte at
	// i+minBase64Run-1, so that byte is looked at first: in prose and code
	// it is soon a space or a bracket and the window is passed over, or
	// the run it ends turns out shorter, looked at back to its start. Each
	// byte is looked at about twice at most; most are never looked at.
	for i := 0; i+minBase64Run <= len(s); {
		j := i + minBase64Run - 1
		if !base64Chars[s[j]] {
			i = j + 1
			continue
		}
		k := j
		for k > i && base64Chars[s[k-1]] {
			k--
		}
		if k > i {
			i = k // s[k-1] is not base64: a run may start at k
			continue
		}
		end := j + 1 // s[i:end] is a run, maximal at its start
		for end < len(s) && base64Chars[s[end]] {
			end++
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		fmt.Fprintf(&b, "[binary data: %s]", byteSize(end-i))
		last = end
		i = end + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// imagePlaceholder describes an image of n base64 characters.
func imagePlaceholder(mediaType string, n int) string {
	if mediaType == "" {
		mediaType = "image"
	}
	return fmt.Sprintf("[image: %s, %s]", mediaType, byteSize(n*3/4))
}

// byteSize renders n bytes for humans.
func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return strconv.Itoa(n) + " B"
	case n < 1<<20:
		return strconv.Itoa((n+1<<10-1)>>10) + " KB"
	default:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	}
}

// dataURLPlaceholder describes a data: URL without keeping its payload.
func dataURLPlaceholder(u string) string {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		media, data, _ := strings.Cut(rest, ",")
		media, _, _ = strings.Cut(media, ";")
		return imagePlaceholder(media, len(data))
	}
	if len(u) > 200 {
		u = u[:200]
	}
	return "[image: " + u + "]"
}

// hashID returns prefix followed by a short hash of parts. 64 bits are ample:
// ids only need to be unique within one user's transcripts.
func hashID(prefix string, parts ...string) string {
	// Each part and a 0 byte after it: what these ids always hashed.
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(append(b, p...), 0)
	}
	sum := shasum.Sum256(b)
	return prefix + hex.EncodeToString(sum[:8])
}

// positionID derives an id for a record that carries none of its own from
// where it sits: the same bytes at the same place give the same id.
func positionID(prefix string, pos Position, index, n int) string {
	file := pos.File
	if file == "" {
		file = pos.Path
	}
	return hashID(prefix+"pos:", file, strconv.FormatInt(pos.Offset, 10), strconv.Itoa(index), strconv.Itoa(n))
}

// parseTime parses a transcript timestamp; a missing or malformed one gives
// the zero time, since order comes from file position anyway.
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// joinNonEmpty joins the non-empty parts with sep.
func joinNonEmpty(sep string, parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p)
	}
	return b.String()
}

// firstNonEmpty returns the first non-empty value.
func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// appendUnique appends the non-empty values of add that dst lacks.
func appendUnique(dst []string, add ...string) []string {
	for _, a := range add {
		if a != "" && !contains(dst, a) {
			dst = append(dst, a)
		}
	}
	return dst
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// parseExitCode reads a decimal, possibly negative, integer at the start of s.
func parseExitCode(s string) (int, bool) {
	end := 0
	if end < len(s) && s[end] == '-' {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(s[:end])
	return n, err == nil
}

func boolPtr(b bool) *bool { return &b }
func intPtr(n int) *int    { return &n }

// savefilePrefixes start every save file medallionctl load renders (see
// internal/render: the preamble, its short form, the text for a scope
// without a medallion). A save file that reaches an agent's transcript in
// the user's role (Gemini CLI, a paste) is our own text, never the user's
// words, and must not come back as a new item.
var savefilePrefixes = []string{
	"This is the current canonical state of ",
	"Canonical state from previous sessions; treat it as true",
	"No medallion exists for this scope yet:",
}

// isSaveFile reports whether text starts like a rendered save file.
func isSaveFile(text string) bool {
	for _, p := range savefilePrefixes {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}
