package curate

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/render"
	"github.com/medallionhq/medallion/internal/transcript"
)

var (
	labelsDir = filepath.Join(corpusDir, "labels")
	evalDir   = filepath.Join("..", "..", "..", "shared", "eval")
)

// evalTargets are the quality targets for the rendered load.
var evalTargets = map[string]float64{"overall": 60, "constraints": 85, "fixes": 60, "open": 70}

// evalFloors are what TestEval enforces: the targets, all met
// since the eval reached load recall 67 % (75/112) with 22 % of stored
// items unmatched, so a change that loses them fails CI.
var evalFloors = map[string]float64{"load overall": 60, "stored unmatched max": 30}

// score is what score_quality.py printed, parsed.
type score struct {
	recall    map[string][2]int // category → hit, total
	overall   float64
	unmatched float64
	output    string
}

var (
	// The scorer rounds its percentages (67/112 prints "60%"), so the
	// counts are what is compared.
	recallLine    = regexp.MustCompile(`(?m)^recall (\{.*\}) overall (\d+)/(\d+) = \d+%`)
	unmatchedLine = regexp.MustCompile(`(?m)^items (\d+), unmatched (\d+) = \d+%`)
)

func runScorer(t *testing.T, outDir string) score {
	t.Helper()
	out, err := exec.Command("python3", filepath.Join(evalDir, "score_quality.py"), labelsDir, outDir).CombinedOutput()
	if err != nil {
		t.Fatalf("score_quality.py: %v\n%s", err, out)
	}
	s := score{output: string(out), recall: map[string][2]int{}}
	m := recallLine.FindStringSubmatch(s.output)
	u := unmatchedLine.FindStringSubmatch(s.output)
	if m == nil || u == nil {
		t.Fatalf("cannot parse the scorer's output:\n%s", out)
	}
	var rec map[string]string
	if err := json.Unmarshal([]byte(m[1]), &rec); err != nil {
		t.Fatalf("parse recall %s: %v", m[1], err)
	}
	for cat, v := range rec {
		hit, tot, _ := strings.Cut(v, "/")
		h, _ := strconv.Atoi(hit)
		n, _ := strconv.Atoi(tot)
		s.recall[cat] = [2]int{h, n}
	}
	s.overall = percent(m[2], m[3])
	s.unmatched = percent(u[2], u[1])
	return s
}

// percent is 100·part/whole of two decimal counts.
func percent(part, whole string) float64 {
	p, _ := strconv.Atoi(part)
	w, _ := strconv.Atoi(whole)
	if w == 0 {
		return 0
	}
	return 100 * float64(p) / float64(w)
}

func (s score) pct(cat string) float64 {
	r := s.recall[cat]
	if r[1] == 0 {
		return 0
	}
	return 100 * float64(r[0]) / float64(r[1])
}

type scorerItem struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func writeItems(t *testing.T, dir, file string, items []scorerItem) {
	t.Helper()
	if items == nil {
		items = []scorerItem{}
	}
	b, err := json.Marshal(map[string]any{"items": items})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEval is `make eval`: it runs the checkpoint simulation and the load
// over every labelled session of the shared corpus and scores two outputs
// with ../shared/eval/score_quality.py — "load", the rendered save file at
// the default budget, one item per line (what the next session gets), and
// "stored", the medallion's items (what the store holds; its unmatched
// share bounds the noise). It prints both against the targets and
// fails when one is missed.
func TestEval(t *testing.T) {
	labels, _ := filepath.Glob(filepath.Join(labelsDir, "*.json"))
	if len(labels) == 0 {
		t.Skipf("no labels in %s", labelsDir)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	work := t.TempDir()
	if d := os.Getenv("MEDALLION_EVAL_DIR"); d != "" {
		// Keep the outputs for a look at what matched.
		work = d
		os.RemoveAll(filepath.Join(work, "load"))
		os.RemoveAll(filepath.Join(work, "stored"))
	}
	loadDir, storedDir := filepath.Join(work, "load"), filepath.Join(work, "stored")
	for _, d := range []string{loadDir, storedDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, lp := range labels {
		var label struct {
			File   string `json:"file"`
			Format string `json:"format"`
		}
		b, err := os.ReadFile(lp)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &label); err != nil {
			t.Fatalf("%s: %v", lp, err)
		}
		format := transcript.FormatClaudeCode
		if label.Format == "codex" {
			format = transcript.FormatCodex
		}
		path := filepath.Join(corpusDir, string(format), label.File)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("labelled transcript missing: %v", err)
			continue
		}
		sim := simulate(t, format, path)
		load := render.Load(sim.medallions, render.Options{Budget: render.DefaultBudget})
		var loadItems []scorerItem
		for line := range strings.Lines(load.Text) {
			if l := strings.TrimSpace(line); l != "" {
				loadItems = append(loadItems, scorerItem{Kind: "other", Text: l})
			}
		}
		writeItems(t, loadDir, label.File, loadItems)

		medPath, loadPath := filepath.Join(work, label.File+".med.json"), filepath.Join(work, label.File+".load.txt")
		mb, err := json.Marshal(sim.medallions)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(medPath, mb, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(loadPath, []byte(load.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("python3", filepath.Join(evalDir, "medallion_items.py"), medPath, loadPath).Output()
		if err != nil {
			t.Fatalf("medallion_items.py %s: %v", label.File, err)
		}
		var stored struct {
			Items []scorerItem `json:"items"`
		}
		if err := json.Unmarshal(out, &stored); err != nil {
			t.Fatalf("medallion_items.py output: %v", err)
		}
		writeItems(t, storedDir, label.File, stored.Items)
		if testing.Verbose() {
			t.Logf("%s: %d events, load %d tokens:\n%s", label.File, sim.events, load.Tokens, load.Text)
		}
	}
	ld, st := runScorer(t, loadDir), runScorer(t, storedDir)
	t.Logf("load (the rendered save file, one item per line):\n%s", ld.output)
	t.Logf("stored (the medallion's items):\n%s", st.output)
	var report strings.Builder
	fmt.Fprintf(&report, "%-12s %8s %8s %8s\n", "", "target", "load", "stored")
	fmt.Fprintf(&report, "%-12s %7.0f%% %7.0f%% %7.0f%%\n", "overall", evalTargets["overall"], ld.overall, st.overall)
	for _, cat := range []string{"constraints", "fixes", "decisions", "open"} {
		target := "-"
		if v, ok := evalTargets[cat]; ok {
			target = fmt.Sprintf("%.0f%%", v)
		}
		fmt.Fprintf(&report, "%-12s %8s %7.0f%% %7.0f%%  (%d/%d, %d/%d)\n", cat, target, ld.pct(cat), st.pct(cat),
			ld.recall[cat][0], ld.recall[cat][1], st.recall[cat][0], st.recall[cat][1])
	}
	fmt.Fprintf(&report, "%-12s %8s %8s %7.0f%%\n", "unmatched", "<=30%", "", st.unmatched)
	t.Logf("quality vs the issue's targets:\n%s", report.String())
	for _, cat := range []string{"constraints", "fixes", "open"} {
		if ld.pct(cat) < evalTargets[cat] {
			t.Errorf("load recall of %s %.0f%% fell below the target %.0f%%", cat, ld.pct(cat), evalTargets[cat])
		}
	}
	if ld.overall < evalFloors["load overall"] {
		t.Errorf("load recall %.0f%% fell below the regression floor %.0f%%", ld.overall, evalFloors["load overall"])
	}
	if st.unmatched > evalFloors["stored unmatched max"] {
		t.Errorf("stored unmatched %.0f%% rose above the regression ceiling %.0f%%", st.unmatched, evalFloors["stored unmatched max"])
	}
}
