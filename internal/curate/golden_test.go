package curate

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGolden runs a checkpoint over each transcript fixture and compares
// the medallion with testdata/golden (go test -run TestGolden -update
// rewrites them). Besides the whole file, it checks the parts a user
// relies on — the fix, the correction, the open todo, the decision — and
// that none of the transcript's noise reached the medallion.
func TestGolden(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "transcripts")
	// Noise in every fixture: harness messages, agent narration, API
	// errors, hook chatter, images, the user's idle questions.
	commonNoise := []string{"Let me run", "API Error", "Overloaded", "Caveat:", "system-reminder", "gofmt reported",
		"AGENTS.md", "environment_context", "permissions instructions", "Request interrupted", "why is the progress bar",
		"continue", "dry-run mode", "Image #1", "write_stdin", "This session is being continued"}
	tests := []struct {
		format transcript.Format
		file   string
		want   []string // substrings of the medallion JSON
	}{
		{transcript.FormatClaudeCode, "7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57.jsonl", []string{
			// fix, correction, open todo, decision
			"when --- FAIL: TestReturnRestocks (0.00s): edit internal/stock/stock.go (s.counts[id] += n), then `go test ./internal/stock/...` succeeds",
			"no, don't delete the cache; invalidate it in Store.Return instead",
			"Add a regression test for partial returns",
			"Approved plan: 1. Call cache.Invalidate(id) at the end of Store.Return",
		}},
		{transcript.FormatCodex, "rollout-2026-03-02T10-15-00-019c9a10-1111-7aaa-8bbb-0123456789ab.jsonl", []string{
			"The nightly import fails with a missing file error.",
			"Fix it and make sure the tests pass.",
			"Run the importer tests",
			"Unresolved: error: open data/items.csv: no such file or directory",
		}},
		{transcript.FormatCodex, "rollout-2026-03-03T08-00-00-019c9b20-2222-7ccc-8ddd-0123456789ab.jsonl", []string{
			"Unresolved: FAIL github.com/acme/importer/internal/csv 0.02s",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ep := fixtureEpisode(t, tt.format, filepath.Join(dir, string(tt.format), tt.file))
			m := Apply(nil, ep.Scope, Extract(ep), t0)
			if err := m.Validate(); err != nil {
				t.Fatalf("invalid: %v", err)
			}
			got, err := json.MarshalIndent(m, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			var plain bytes.Buffer
			enc := json.NewEncoder(&plain)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(m); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(plain.String(), w) {
					t.Errorf("medallion lacks %q", w)
				}
			}
			for _, n := range commonNoise {
				if strings.Contains(plain.String(), n) {
					t.Errorf("noise %q reached the medallion", n)
				}
			}
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(tt.file, ".jsonl")+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("medallion differs from %s (go test -run TestGolden -update rewrites it):\n%s", golden, got)
			}
		})
	}
}
