package render

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

// reviewed is fixed() with model-made items: D-002, Q-002, the first
// invariant, the avoid item, an entry point and the summary pending; the
// second invariant approved; D-001 (the user's) not model-made at all.
func reviewed() *medallion.Medallion {
	m := fixed()
	m.Review = []medallion.Review{
		{Item: "D-002", Text: "Templates live in templates/", Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: "Q-002", Text: "Add RSS output", Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: medallion.ItemInvariant, Text: "never commit generated files", Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: medallion.ItemInvariant, Text: "always use table-driven tests", Source: "tier1:qwen3", State: medallion.ReviewApproved},
		{Item: medallion.ItemAvoidRepeating, Text: m.Affordances.AvoidRepeating[0], Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: medallion.ItemEntryPoint, Text: "cmd/muse/main.go", Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: medallion.ItemSummary, Text: m.Summary.HighLevel, Source: "tier1:qwen3", State: medallion.ReviewPending},
		// A rejected invariant is no longer in the list; its entry stays.
		{Item: medallion.ItemInvariant, Text: "use tabs", Source: "tier1:qwen3", State: medallion.ReviewRejected},
	}
	return m
}

func TestReviewModes(t *testing.T) {
	pendingLines := []string{
		"- [D-002] Templates live in templates/",
		"- [Q-002] Add RSS output (low)",
		"- never commit generated files",
		"- when `go test` fails with missing go.sum entry: run go mod download first",
		"- cmd/muse/main.go",
		"the renderer is next.",
	}
	settled := []string{
		"- [D-001] Use goldmark for markdown — CommonMark compliant\n",
		"- always use table-driven tests\n",
		"- internal/parse/parse.go\n",
		"[Q-001] Fix the failing TestRender",
	}
	for _, tc := range []struct {
		mode string
		// marked: pending lines end with the mark; present: they are
		// rendered at all.
		marked, present bool
	}{
		{"", true, true},
		{ReviewAuto, true, true},
		{ReviewRequired, false, false},
		{ReviewOff, false, true},
	} {
		t.Run("mode "+tc.mode, func(t *testing.T) {
			text := Load([]*medallion.Medallion{reviewed()}, Options{Review: tc.mode, Budget: 5000}).Text
			for _, line := range pendingLines {
				switch {
				case tc.marked && !strings.Contains(text, line+UnreviewedMark+"\n"):
					t.Errorf("pending %q is not marked:\n%s", line, text)
				case !tc.present && strings.Contains(text, line):
					t.Errorf("pending %q is rendered in required mode:\n%s", line, text)
				case tc.present && !tc.marked && (!strings.Contains(text, line+"\n") || strings.Contains(text, line+UnreviewedMark)):
					t.Errorf("pending %q is not rendered unmarked:\n%s", line, text)
				}
			}
			for _, line := range settled {
				if !strings.Contains(text, line) {
					t.Errorf("%q is missing or marked:\n%s", line, text)
				}
			}
			if got := strings.Count(text, UnreviewedMark); tc.marked && got != len(pendingLines) || !tc.marked && got != 0 {
				t.Errorf("%d marks, want %d:\n%s", got, len(pendingLines), text)
			}
			if strings.Contains(text, "use tabs") {
				t.Errorf("a rejected item came back:\n%s", text)
			}
		})
	}
}

func TestReviewMarksInJSON(t *testing.T) {
	r := Load([]*medallion.Medallion{reviewed()}, Options{Format: FormatJSON, Budget: 5000})
	var out struct {
		Medallions []struct {
			Sections struct {
				Rules     []string             `json:"rules"`
				Decisions []medallion.Decision `json:"decisions"`
				Summary   string               `json:"summary"`
				Questions []medallion.OpenQuestion
			} `json:"sections"`
		} `json:"medallions"`
	}
	if err := json.Unmarshal([]byte(r.Text), &out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.Text)
	}
	s := out.Medallions[0].Sections
	if len(s.Rules) != 2 || s.Rules[0] != "never commit generated files"+UnreviewedMark || s.Rules[1] != "always use table-driven tests" {
		t.Errorf("rules %q", s.Rules)
	}
	for _, d := range s.Decisions {
		if marked := strings.HasSuffix(d.Statement, UnreviewedMark); marked != (d.ID == "D-002") {
			t.Errorf("decision %s statement %q", d.ID, d.Statement)
		}
	}
	if !strings.HasSuffix(s.Summary, UnreviewedMark) {
		t.Errorf("summary %q is not marked", s.Summary)
	}
	// The medallion itself is not changed by rendering.
	if m := reviewed(); m.Decisions[1].Statement != "Templates live in templates/" {
		t.Errorf("fixture changed")
	}
}

// TestReviewLeavesTheMedallionAlone: marks go into the rendering only.
func TestReviewLeavesTheMedallionAlone(t *testing.T) {
	m := reviewed()
	Load([]*medallion.Medallion{m}, Options{Format: FormatJSON})
	Load([]*medallion.Medallion{m}, Options{})
	want := reviewed()
	if m.Decisions[1].Statement != want.Decisions[1].Statement || m.OpenQuestions[1].Question != want.OpenQuestions[1].Question ||
		m.Affordances.Invariants[0] != want.Affordances.Invariants[0] || m.Summary.HighLevel != want.Summary.HighLevel {
		t.Errorf("Load changed the medallion: %+v", m)
	}
}

// TestReviewBudgetProperty: with marks (which lengthen lines) and with
// items left out, the text still never exceeds the budget.
func TestReviewBudgetProperty(t *testing.T) {
	for seed := int64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewSource(seed))
		m := randomMedallion(rng, 1)
		// Half of every kind of item is pending.
		for i, d := range m.Decisions {
			if i%2 == 0 {
				m.Review = append(m.Review, medallion.Review{Item: d.ID, Text: d.Statement, Source: "tier1:x", State: medallion.ReviewPending})
			}
		}
		for i, v := range m.Affordances.Invariants {
			if i%2 == 0 {
				m.Review = append(m.Review, medallion.Review{Item: medallion.ItemInvariant, Text: v, Source: "tier1:x", State: medallion.ReviewPending})
			}
		}
		budget := 50 + rng.Intn(3000)
		for _, mode := range []string{ReviewAuto, ReviewRequired, ReviewOff} {
			for _, format := range []string{FormatMarkdown, FormatJSON} {
				r := Load([]*medallion.Medallion{m}, Options{Budget: budget, Format: format, Review: mode})
				if got := Tokens(r.Text); got > budget || got != r.Tokens {
					t.Fatalf("seed %d %s %s: budget %d, Tokens(Text) %d, Result.Tokens %d", seed, mode, format, budget, got, r.Tokens)
				}
			}
		}
	}
}
