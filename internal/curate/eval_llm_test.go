package curate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/distill"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/llm"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/redact"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

// evalLLMInputTokens is the prompt budget of the Tier 1 eval: the default
// a small local model fits would split long sessions into many sequential
// calls, and each needs its own round of recorded answers.
const evalLLMInputTokens = 32000

// simulateStore runs a transcript through the real Curator and a real
// store with the checkpoints of simulate, and returns the medallion of its
// scope.
func simulateStore(t *testing.T, format transcript.Format, path string, cur *Curator) *medallion.Medallion {
	t.Helper()
	ctx := context.Background()
	scope := []string{"repo:" + filepath.Base(path)}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cur.Now = func() time.Time { return clock }
	checkpoints(parseFile(t, format, path), func(sid, trigger string, buf []episode.BufferedEvent) {
		clock = clock.Add(time.Minute)
		ep := checkpoint.Episode{SessionID: sid, Scope: scope, Agent: string(format), Trigger: trigger, Events: buf, Context: episode.Derive(buf)}
		if _, err := cur.Curate(ctx, ep); err != nil {
			t.Errorf("%s: curate: %v", filepath.Base(path), err)
		}
	})
	m, err := cur.find(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEvalLLM is `make eval-llm`: every labelled session through Tier 0
// alone and through Tier 0 + Tier 1, on a real store, with the model at
// MEDALLION_EVAL_LLM_URL (../shared/eval/llm_replay.py serving recorded
// answers). Prompts the replay server has no answer for are left pending
// there; the session then falls back to Tier 0, as with a dead endpoint,
// and the report says how many are pending. Skipped without the URL.
func TestEvalLLM(t *testing.T) {
	url := os.Getenv("MEDALLION_EVAL_LLM_URL")
	if url == "" {
		t.Skip("MEDALLION_EVAL_LLM_URL not set (make eval-llm sets it)")
	}
	labels, _ := filepath.Glob(filepath.Join(labelsDir, "*.json"))
	if len(labels) == 0 {
		t.Skipf("no labels in %s", labelsDir)
	}
	work := t.TempDir()
	dirs := map[string]string{}
	for _, k := range []string{"t0-load", "t0-stored", "t1-load", "t1-stored"} {
		dirs[k] = filepath.Join(work, k)
		if err := os.MkdirAll(dirs[k], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t0, t1 := baseline{}, baseline{}
	var names []string
	var rep strings.Builder
	totalCalls, totalIn, totalFallbacks, transcriptTokens := int64(0), int64(0), int64(0), 0
	for _, lp := range labels {
		var label struct{ File, Format string }
		b, err := os.ReadFile(lp)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &label); err != nil {
			t.Fatal(err)
		}
		format := transcript.FormatClaudeCode
		if label.Format == "codex" {
			format = transcript.FormatCodex
		}
		path := filepath.Join(corpusDir, string(format), label.File)
		fi, err := os.Stat(path)
		if err != nil {
			t.Logf("%s: transcript missing: %v", label.File, err)
			continue
		}
		name := filepath.Base(lp)
		one := labelDir(t, work, name, b)

		run := func(tier1 bool) (*medallion.Medallion, llm.Stats, Tier1Stats) {
			st, err := store.Open(t.TempDir(), store.Options{GCInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			cur := &Curator{Store: st}
			var client *llm.Client
			if tier1 {
				client, err = llm.New(llm.Config{BaseURL: url, Model: "replay", MaxRetries: -1, Timeout: 10 * time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				cur.Tier1 = &Tier1{Aux: st, Logger: hclog.New(&hclog.LoggerOptions{Name: label.File[:min(len(label.File), 30)], Level: hclog.Warn, Output: os.Stderr}), Distiller: &distill.Distiller{
					LLM: client, Model: "replay", MaxInputTokens: evalLLMInputTokens, Redact: redact.String,
				}}
			}
			m := simulateStore(t, format, path, cur)
			if !tier1 {
				return m, llm.Stats{}, Tier1Stats{}
			}
			return m, client.Stats(), cur.Tier1.Stats()
		}
		score := func(m *medallion.Medallion, load, stored string) fileEval {
			var meds []*medallion.Medallion
			if m != nil {
				meds = append(meds, m)
			}
			fe, _ := scoreMedallions(t, work, one, label.File, meds, load, stored)
			return fe
		}
		m0, _, _ := run(false)
		m1, ls, ts := run(true)
		t0[name] = score(m0, dirs["t0-load"], dirs["t0-stored"])
		t1[name] = score(m1, dirs["t1-load"], dirs["t1-stored"])
		names = append(names, name)
		totalCalls += ls.Calls
		totalIn += ls.PromptTokens
		totalFallbacks += ts.Fallbacks
		transcriptTokens += int(fi.Size() / 4)
		h0, n := t0[name].Load.hits()
		h1, _ := t1[name].Load.hits()
		fmt.Fprintf(&rep, "  %s %-50.50s load %2d → %2d /%-2d  unmatched %2d/%-2d → %2d/%-2d  calls %d  input tokens %6d  fallbacks %d\n",
			half(name), name, h0, h1, n, t0[name].Stored.Unmatched, t0[name].Stored.Items,
			t1[name].Stored.Unmatched, t1[name].Stored.Items, ls.Calls, ls.PromptTokens, ts.Fallbacks)
	}
	halfA, halfB := halves(names)
	for _, part := range []struct {
		title string
		files []string
	}{{"whole labelled set", names}, {"half A", halfA}, {"half B", halfB}} {
		report(&rep, "Tier 0 alone, "+part.title, t0, part.files)
		report(&rep, "Tier 0 + Tier 1, "+part.title, t1, part.files)
	}
	// The replay server leaves answered prompts in pending/: count those
	// without an answer.
	var pending []string
	recs := os.Getenv("MEDALLION_EVAL_LLM_DIR")
	all, _ := filepath.Glob(filepath.Join(recs, "pending", "*.json"))
	for _, p := range all {
		if _, err := os.Stat(filepath.Join(recs, "answers", filepath.Base(p))); err != nil {
			pending = append(pending, p)
		}
	}
	fmt.Fprintf(&rep, "model calls %d (%.2f per 25k transcript tokens), input tokens %d, fallbacks to tier 0 %d, prompts pending an answer %d\n",
		totalCalls, float64(totalCalls)/(float64(transcriptTokens)/25000), totalIn, totalFallbacks, len(pending))
	t.Logf("Tier 0 against Tier 0 + Tier 1 per labelled file (load recall, stored unmatched):\n%s", rep.String())
}

// storedItems turns medallions and their load into scorer items with
// ../shared/eval/medallion_items.py.
func storedItems(t *testing.T, work, file string, meds []*medallion.Medallion, load string) []scorerItem {
	t.Helper()
	medPath, loadPath := filepath.Join(work, file+".med.json"), filepath.Join(work, file+".load.txt")
	mb, err := json.Marshal(meds)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(medPath, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(loadPath, []byte(load), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execPython(filepath.Join(evalDir, "medallion_items.py"), medPath, loadPath)
	if err != nil {
		t.Fatalf("medallion_items.py %s: %v", file, err)
	}
	var stored struct {
		Items []scorerItem `json:"items"`
	}
	if err := json.Unmarshal(out, &stored); err != nil {
		t.Fatalf("medallion_items.py output: %v", err)
	}
	return stored.Items
}
