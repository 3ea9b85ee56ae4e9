package render

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixed is a medallion with every kind of item, for the golden tests.
func fixed() *medallion.Medallion {
	return &medallion.Medallion{
		Meta: medallion.Meta{MedallionID: "muse-project-state", SchemaVersion: medallion.SchemaVersion,
			Model: "tier0", CreatedAt: "2026-11-20T10:00:00.000000Z", UpdatedAt: "2026-11-21T17:42:10.123456Z",
			Status: medallion.StatusActive, Version: 7},
		Scope: medallion.Scope{GraphNodes: []string{"repo:muse"}, Tags: []string{"project_state"}},
		Summary: medallion.Summary{
			HighLevel: "Muse is a CLI that turns notes into a static site. The parser was rewritten;\nthe renderer is next.",
			Subsystems: []medallion.Subsystem{
				{Name: "internal/parse", Status: medallion.SubsystemStable, Notes: "rewritten, tested"},
				{Name: "internal/render", Status: medallion.SubsystemInProgress},
			},
		},
		Decisions: []medallion.Decision{
			{ID: "D-001", Statement: "Use goldmark for markdown", Rationale: "CommonMark compliant", Confidence: 0.9},
			{ID: "D-002", Statement: "Templates live in templates/", Confidence: 0.6},
		},
		OpenQuestions: []medallion.OpenQuestion{
			{ID: "Q-001", Question: "Fix the failing TestRender", BlockedOn: []string{"go test ./internal/render: exit 1"}, Priority: medallion.PriorityHigh},
			{ID: "Q-002", Question: "Add RSS output", Priority: medallion.PriorityLow},
		},
		Affordances: medallion.Affordances{
			RecommendedEntryPoints: []string{"cmd/muse/main.go", "internal/parse/parse.go"},
			AvoidRepeating:         []string{"when `go test` fails with missing go.sum entry: run go mod download first"},
			Invariants:             []string{"never commit generated files", "always use table-driven tests"},
		},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		ms   []*medallion.Medallion
		opts Options
	}{
		{"full.md", []*medallion.Medallion{fixed()}, Options{}},
		{"tight.md", []*medallion.Medallion{fixed()}, Options{Budget: 150}},
		{"full.json", []*medallion.Medallion{fixed()}, Options{Format: FormatJSON}},
		{"empty.md", nil, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Load(tc.ms, tc.opts)
			if r.Tokens != Tokens(r.Text) {
				t.Errorf("Result.Tokens = %d, Tokens(Text) = %d", r.Tokens, Tokens(r.Text))
			}
			path := filepath.Join("testdata", tc.name)
			if *update {
				if err := os.WriteFile(path, []byte(r.Text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if r.Text != string(want) {
				t.Errorf("Load text differs from %s:\n--- got\n%s\n--- want\n%s", path, r.Text, want)
			}
		})
	}
}

func TestTightCutNamesWhatWasLeftOut(t *testing.T) {
	r := Load([]*medallion.Medallion{fixed()}, Options{Budget: 150})
	if len(r.Cut) == 0 {
		t.Fatalf("budget 150 cut nothing:\n%s", r.Text)
	}
	for _, c := range r.Cut {
		if !strings.Contains(r.Text, c) {
			t.Errorf("cut %q not named in the text:\n%s", c, r.Text)
		}
		if !strings.HasSuffix(c, "medallionctl show muse-project-state") {
			t.Errorf("cut %q does not say how to see it", c)
		}
	}
	if !strings.Contains(r.Text, "never commit generated files") {
		t.Errorf("the first rule is missing at budget 150:\n%s", r.Text)
	}
}

func TestJSONIsValid(t *testing.T) {
	for _, budget := range []int{120, 300, 1500} {
		r := Load([]*medallion.Medallion{fixed(), fixed()}, Options{Budget: budget, Format: FormatJSON})
		var v jsonLoad
		if err := json.Unmarshal([]byte(r.Text), &v); err != nil {
			t.Fatalf("budget %d: invalid JSON: %v\n%s", budget, err, r.Text)
		}
		if r.Tokens > budget {
			t.Errorf("budget %d: %d tokens", budget, r.Tokens)
		}
	}
}

// randomText returns short or long text of words, code-ish tokens and a
// little non-ASCII.
func randomText(rng *rand.Rand) string {
	words := []string{"parser", "the", "go", "test", "./internal/render", "fails", "when", "fmt.Println(x)",
		"{\"a\":1}", "naïve", "日本語", "0x7fa3", "never", "use", "--flag", "résumé", "🙂", "\n", "  "}
	n := 1 + rng.Intn(8)
	if rng.Intn(5) == 0 {
		n = 50 + rng.Intn(300)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.Intn(len(words))])
	}
	return b.String()
}

func randomMedallion(rng *rand.Rand, id int) *medallion.Medallion {
	m := &medallion.Medallion{
		Meta:  medallion.Meta{MedallionID: fmt.Sprintf("m-%d-%s", id, strings.Repeat("x", rng.Intn(40))), Version: 1 + rng.Intn(200), UpdatedAt: "2026-11-21T17:42:10Z"},
		Scope: medallion.Scope{GraphNodes: []string{fmt.Sprintf("repo:r%d", rng.Intn(3))}},
	}
	n := func() int {
		if rng.Intn(4) == 0 {
			return rng.Intn(60)
		}
		return rng.Intn(6)
	}
	for i := n(); i > 0; i-- {
		m.Affordances.Invariants = append(m.Affordances.Invariants, "R"+randomText(rng))
	}
	for i := n(); i > 0; i-- {
		m.Affordances.AvoidRepeating = append(m.Affordances.AvoidRepeating, "F"+randomText(rng))
	}
	for i := n(); i > 0; i-- {
		m.Affordances.RecommendedEntryPoints = append(m.Affordances.RecommendedEntryPoints, "E"+randomText(rng))
	}
	for i := n(); i > 0; i-- {
		m.Decisions = append(m.Decisions, medallion.Decision{ID: fmt.Sprintf("D-%03d", i), Statement: randomText(rng), Rationale: randomText(rng), Confidence: rng.Float64()})
	}
	for i := n(); i > 0; i-- {
		m.OpenQuestions = append(m.OpenQuestions, medallion.OpenQuestion{ID: fmt.Sprintf("Q-%03d", i), Question: randomText(rng),
			Priority: medallion.Priorities[rng.Intn(3)]})
	}
	for i := n(); i > 0; i-- {
		m.Summary.Subsystems = append(m.Summary.Subsystems, medallion.Subsystem{Name: randomText(rng), Status: medallion.SubsystemInProgress})
	}
	if rng.Intn(3) > 0 {
		m.Summary.HighLevel = randomText(rng)
	}
	return m
}

// TestBudgetProperty renders random medallions at random budgets: the text
// never exceeds the budget, and within each medallion the sections come in
// priority order (so what a tight budget keeps is the most important).
func TestBudgetProperty(t *testing.T) {
	for seed := int64(0); seed < 400; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var ms []*medallion.Medallion
		for i := rng.Intn(3) + 1; i > 0; i-- {
			ms = append(ms, randomMedallion(rng, i))
		}
		budget := 50 + rng.Intn(4951)
		for _, format := range []string{FormatMarkdown, FormatJSON} {
			r := Load(ms, Options{Budget: budget, Format: format})
			if got := Tokens(r.Text); got > budget || got != r.Tokens {
				t.Fatalf("seed %d %s: budget %d, Tokens(Text) %d, Result.Tokens %d", seed, format, budget, got, r.Tokens)
			}
		}
		r := Load(ms, Options{Budget: budget})
		if len(ms) == 1 {
			last := -1
			for s := section(0); s < numSections; s++ {
				i := strings.Index(r.Text, "\n## "+sectionInfo[s].title+"\n")
				if i < 0 {
					continue
				}
				if i < last {
					t.Fatalf("seed %d: section %q comes after a lower-priority one:\n%s", seed, sectionInfo[s].title, r.Text)
				}
				last = i
			}
		}
		// What was cut is named in the text, unless the budget was too
		// small for even the short preamble (the text is then truncated).
		if strings.HasSuffix(r.Text, "…") {
			continue
		}
		for _, c := range r.Cut {
			if !strings.Contains(r.Text, c) {
				t.Fatalf("seed %d: cut %q not in text", seed, c)
			}
		}
	}
}

func TestTokensNeverFarBelowBPE(t *testing.T) {
	// Reference counts are cl100k_base token counts of each text (counted
	// with tiktoken); the estimate may be higher, never lower.
	for _, tc := range []struct {
		text string
		bpe  int
	}{
		{"hello world", 2},
		{"The quick brown fox jumps over the lazy dog.", 10},
		{"func main() {\n\tfmt.Println(\"hello\")\n}", 11},
		{"internal/server/load.go", 5},
		{`{"hookSpecificOutput":{"hookEventName":"SessionStart"}}`, 13},
		{"日本語のテキスト", 8},
	} {
		if got := Tokens(tc.text); got < tc.bpe {
			t.Errorf("Tokens(%q) = %d, below the tokenizer's %d", tc.text, got, tc.bpe)
		}
	}
}

func TestTokensSubadditive(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		a, b := randomText(rng), randomText(rng)
		if Tokens(a+b) > Tokens(a)+Tokens(b) {
			t.Fatalf("Tokens(%q+%q) = %d > %d + %d", a, b, Tokens(a+b), Tokens(a), Tokens(b))
		}
	}
}

// TestDecisionOrder checks that stronger decisions come first and, among
// equals, the newest: a later request refines an earlier one, so a tight
// budget cuts the oldest.
func TestDecisionOrder(t *testing.T) {
	m := fixed()
	m.Decisions = []medallion.Decision{
		{ID: "D-001", Statement: "first request", Confidence: 0.6},
		{ID: "D-002", Statement: "agent choice", Confidence: 0.5},
		{ID: "D-003", Statement: "second request", Confidence: 0.6},
		{ID: "D-004", Statement: "stated rule", Confidence: 0.9},
	}
	text := Load([]*medallion.Medallion{m}, Options{}).Text
	want := []string{"[D-004]", "[D-003]", "[D-001]", "[D-002]"}
	last := -1
	for _, id := range want {
		i := strings.Index(text, id)
		if i < 0 || i < last {
			t.Fatalf("decisions not in order %v:\n%s", want, text)
		}
		last = i
	}
}
