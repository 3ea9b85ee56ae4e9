package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/medallion"
)

// writeJSON prints v indented, with a trailing newline. Field order follows
// the Go structs, so the output is stable from one run to the next and
// diffs well.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Medallions quote code and shell commands: keep < > & readable.
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// newTable returns a writer that aligns tab-separated columns; call Flush.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// cell makes s safe for one table cell: medallion text comes from agents'
// transcripts, and a stray escape sequence must not drive the terminal or a
// newline break the table.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Join(strings.Fields(sanitize(s, false)), " ")
}

// text makes multi-line s safe to print, keeping its newlines and indenting
// every line after the first by indent.
func text(s, indent string) string {
	s = sanitize(strings.TrimRight(s, "\n"), true)
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

// sanitize replaces control characters other than whitespace by a visible
// escape; keepNewlines leaves \n alone for multi-line text.
func sanitize(s string, keepNewlines bool) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' && keepNewlines:
			b.WriteRune(r)
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case unicode.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// list joins a string list for one cell.
func list(items []string) string {
	if len(items) == 0 {
		return "-"
	}
	return cell(strings.Join(items, ","))
}

// when renders an RFC 3339 timestamp in UTC to the second: tables are for
// reading, -o json keeps the exact value.
func when(s string) string {
	t, err := medallion.ParseTime(s)
	if err != nil {
		return cell(s)
	}
	return t.UTC().Format(time.RFC3339)
}

// humanBytes renders a size in binary units.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// now is the clock relative times are measured against; tests fix it so
// golden files do not age.
var now = time.Now

// ago renders how long before now t was, in the largest whole unit: "just
// now", "45s ago", "3m ago", "5h ago", "12d ago". A zero t is "-". A time
// ahead of the clock (another machine's transcript, a skewed clock) reads
// "in 3m".
func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now().Sub(t)
	if d < 0 {
		if d > -time.Minute {
			return "just now"
		}
		return "in " + roughly(-d)
	}
	if d < time.Second {
		return "just now"
	}
	return roughly(d) + " ago"
}

// roughly renders d in its largest whole unit, up to days.
func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}

// stamp renders t in UTC to the second, or "-" for a zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// clip shortens s to at most n runes, marking a cut with "…", so that one
// long value cannot wrap a line of a table.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRightFunc(string(r[:n-1]), unicode.IsSpace) + "…"
}
