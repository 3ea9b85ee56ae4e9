package curate

import (
	"slices"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	long := "I moved the parser into its own package and the tests pass again now."
	for _, tc := range []struct {
		name string
		says []string
		want []string
	}{
		{"no assistant message", nil, nil},
		{"an acknowledgement is no report", []string{"Done."}, nil},
		{"the last message of substance wins over an earlier one",
			[]string{"Earlier I looked at the lexer and found three places that allocate per token.", long, "Done."},
			[]string{long}},
		{"opening sentences and stated choices, nothing else",
			[]string{"Fixed the export. The count was off by one. It walks the list twice. The fix is in export.go. " +
				"The docs are unchanged. I chose a map instead of a slice because lookups dominate. The CI job is green."},
			[]string{"Fixed the export.", "The count was off by one.", "It walks the list twice.", "The fix is in export.go.",
				"I chose a map instead of a slice because lookups dominate."}},
		{"list heads, headings, labels and markup are no report lines",
			[]string{"## What changed\nHere's what was done:\n1. **Summary:** Moved the parser into `internal/parse`.\n✅\n::git-commit{cwd=\"/repo\"}\nThe tests pass on both platforms now."},
			[]string{"Moved the parser into `internal/parse`.", "The tests pass on both platforms now."}},
		{"a dunder is no bold markup",
			[]string{"Moved the fixtures into `tests/__init__.py` and the loader into `src/__main__.py` for the CLI."},
			[]string{"Moved the fixtures into `tests/__init__.py` and the loader into `src/__main__.py` for the CLI."}},
		{"filler is no opening",
			[]string{"Perfect! Now let me summarize.\n<analysis>\nThe importer skips empty rows now and the tests pass."},
			[]string{"The importer skips empty rows now and the tests pass."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b builder
			for _, s := range tc.says {
				b.say(s)
			}
			var it Items
			x := extractor{ep: b.episode()}
			x.report(&it)
			if !slices.Equal(it.Report, tc.want) {
				t.Errorf("report = %q, want %q", it.Report, tc.want)
			}
		})
	}
}

func TestSummaryLinesWithinBound(t *testing.T) {
	m := Apply(nil, []string{"repo:r"}, Items{
		Report:   []string{strings.Repeat("word ", 150), "I chose X because Y."},
		Progress: []string{strings.Repeat("step ", 200)},
	}, t0)
	h := m.Summary.HighLevel
	if len(h) > MaxSummaryBytes {
		t.Errorf("summary is %d bytes, over %d", len(h), MaxSummaryBytes)
	}
	lines := strings.Split(h, "\n")
	if !strings.HasPrefix(lines[0], "Latest report: word") || lines[1] != "I chose X because Y." {
		t.Errorf("summary lines = %q, want report, choice first", lines)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Recently completed: step") {
		t.Errorf("last line %q, want the clipped progress", last)
	}
	if empty := Apply(nil, []string{"repo:r"}, Items{}, t0).Summary.HighLevel; empty != "Scope: repo:r." {
		t.Errorf("summary with nothing to say = %q, want the scope", empty)
	}
}
