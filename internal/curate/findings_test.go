package curate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestFindings(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"credo two issues", "Checking 87 files ...\n\n  Software Design\n┃ \n┃ [D] ↘ Nested modules could be aliased at the top of the invoking module.\n┃       lib/app.ex:9:5 #(App.start)\n\n┃ [R] ↘ Prefer using an implicit `try` rather than explicit `try`.\n┃       lib/otel.ex:39:5 #(Otel.setup)\n",
			[]string{"Nested modules could be aliased at the top of the invoking module. (lib/app.ex)", "Prefer using an implicit `try` rather than explicit `try`. (lib/otel.ex)"}},
		{"dialyzer", "Total errors: 1\nlib/h.ex:94:7:pattern_match_cov\nThe pattern\n:variable_\n\ncan never match, because previous clauses completely cover the type\nbinary().\n\n____\n",
			[]string{"pattern_match_cov in lib/h.ex: The pattern :variable_ can never match, because previous clauses completely cover the…"}},
		{"rust with ansi", "\x1b[1m\x1b[31merror[E0308]: mismatched types\x1b[0m\n --> src/main.rs:3:5\n", []string{"error[E0308]: mismatched types"}},
		{"typescript", "src/a.ts(3,5): error TS2345: Argument of type 'string' is not assignable.\n", []string{"error TS2345: Argument of type 'string' is not assignable."}},
		{"plain output", "ok  \tpkg\t0.1s\nPASS\n", nil},
		// The cheap gates: a dialyzer header alone (no "error" in the
		// text), boxed; one behind a box that escapes colour; a
		// credo issue with its spaces as tabs.
		{"dialyzer without the word", "│ lib/h.ex:94:7:pattern_match_cov\nThe pattern can never match\n", []string{"pattern_match_cov in lib/h.ex: The pattern can never match"}},
		{"dialyzer behind a coloured box", "\x1b[2m│\x1b[0m lib/h.ex:9:call\nThe call will not succeed\n", []string{"call in lib/h.ex: The call will not succeed"}},
		{"credo with tabs", "┃\t[W]\t↘  Use of IO.inspect\n┃\t\tlib/a.ex:3\n", []string{"Use of IO.inspect (lib/a.ex)"}},
		// The header's path may itself begin with a colon: the gate
		// must not ask for one past the line's start.
		{"dialyzer path from a colon", ":lib/h.ex:9:call\nThe call will not succeed\n", []string{"call in :lib/h.ex: The call will not succeed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := findings(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("findings = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCollapseSpaces(t *testing.T) {
	for _, s := range []string{"", " ", "a", "a b", "a  b", " a", "a ", "a\tb", "a\u00a0b", "a \u2003b", "héllo wörld", "  x  y  "} {
		if got, want := collapseSpaces(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("collapseSpaces(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestAnyFailureLine covers each kind of line failureLine knows, in the
// cases it is written in, first, last (without its newline) and amid
// other lines, so that anyFailureLine's search for failure words finds
// each.
func TestAnyFailureLine(t *testing.T) {
	for _, l := range []string{"FAIL\tpkg 0.1s", "--- FAIL: TestX (0.00s)", "FAILED tests/a.py::test_b", "** (CompileError) lib/a.ex:3: undefined",
		"error: could not find `x`", "ERROR[E0308]: mismatched", "fatal: not a git repository", "panic: runtime error",
		"Traceback (most recent call last):", "  Could Not Compile dependency :x", "BUILD FAILED in 3s", "could not start application :app",
		"11 tests, 4 failures", "2 Failed", "Found 3 errors.", "  \t  3 failures  ",
		// U+0130 lowers to i under unicode.ToLower, as failureLine
		// lowers, but is no ASCII letter.
		"2 faİled", "build faİled", "3 FAİLURES"} {
		for _, text := range []string{l, l + "\nok", "ok\n" + l, "a failover\n" + l + "\n0 errors\n"} {
			if !anyFailureLine(text) {
				t.Errorf("anyFailureLine(%q) = false, want true", text)
			}
		}
	}
	for _, text := range []string{"", "ok  pkg 0.1s", "0 failures\nno errors\nPASS", "  all good  ", "failover configured\nerror handling in place"} {
		if anyFailureLine(text) {
			t.Errorf("anyFailureLine(%q) = true, want false", text)
		}
	}
}

// TestAnyFailureLineEachLine holds anyFailureLine to what it stands for,
// failureLine of some line of the text, over random texts of failure
// words in every case, the letters beyond ASCII that lower to ASCII ones,
// unicode spaces and line ends with and without a carriage return.
// collapseSpaces is held to strings.Join(strings.Fields(s), " ") on the
// same texts.
func TestAnyFailureLineEachLine(t *testing.T) {
	frags := []string{"FAIL", "--- FAIL: T", "fail", "Fail", "failed", "failures", "errors", "Error", "ERROR:", "error[",
		"fatal:", "panic: x", "PANIC: y", "Traceback (most recent call last):", "could not compile", "CoUlD NoT start application",
		"BUILD FAİLED", "2 faİled", "K", "İ", "** (", "3", "0", " ", "  ", "\t", "\u00a0", "\u2003", "\u0085", "\r", "\r\n",
		"\n", "\n", "│", "\x1b[31m", "ß", "\xff", "\xc4", ",", ":", "x"}
	r := rand.New(rand.NewPCG(7, 11))
	for n := range 50000 {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString(frags[r.IntN(len(frags))])
		}
		s := b.String()
		want := false
		for line := range strings.Lines(s) {
			want = want || failureLine(line)
		}
		if got := anyFailureLine(s); got != want {
			t.Fatalf("case %d: anyFailureLine(%q) = %v, failureLine of its lines %v", n, s, got, want)
		}
		if got, want := collapseSpaces(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("case %d: collapseSpaces(%q) = %q, want %q", n, s, got, want)
		}
	}
}
