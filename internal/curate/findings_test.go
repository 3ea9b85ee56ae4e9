package curate

import (
	"slices"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := findings(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("findings = %q, want %q", got, tc.want)
			}
		})
	}
}
