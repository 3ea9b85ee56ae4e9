package search

import (
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"LatestForScope", []string{"latest", "scope", "latestforscope"}},
		{"HTTPServer", []string{"http", "server", "httpserver"}},
		{"max_line is 16MiB", []string{"max", "line", "maxline", "16mi", "16mib"}},
		{"internal/store/badger.go", []string{"internal", "store", "badger", "go", "internalstorebadgergo", "badgergo"}},
		{"Don't retry the tests.", []string{"don", "retry", "test"}},
		{"classes status retries", []string{"class", "status", "retry"}},
		{"repo:muse", []string{"repo", "muse", "repomuse"}},
		{"latest_for_scope", []string{"latest", "scope", "latestforscope"}},
		{"utf8 decoding", []string{"utf8", "decoding"}},
		{"the a of", nil},
		{"", nil},
	} {
		if got := Terms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestTermsBounded(t *testing.T) {
	long := ""
	for range 100 {
		long += "ab"
	}
	for _, term := range Terms(long + " " + long + "_x") {
		if len(term) > maxTermBytes {
			t.Errorf("term of %d bytes: %q", len(term), term)
		}
	}
}
