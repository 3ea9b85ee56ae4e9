package curate

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/transcript"
)

// fixtureEpisode parses a transcript fixture into one episode.
func fixtureEpisode(t *testing.T, format transcript.Format, path string) checkpoint.Episode {
	t.Helper()
	p, err := transcript.New(format, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var events []episode.BufferedEvent
	var off int64
	for sc.Scan() {
		for _, e := range p.ParseLine(sc.Bytes(), transcript.Position{File: "fx", Path: path, Offset: off}) {
			events = append(events, episode.BufferedEvent{Seq: uint64(len(events) + 1), Event: e})
		}
		off += int64(len(sc.Bytes())) + 1
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sid := ""
	if len(events) > 0 {
		sid = events[0].Event.SessionID
	}
	return checkpoint.Episode{SessionID: sid, Scope: []string{"repo:fixture"}, Events: events, Context: episode.Derive(events)}
}

// TestFixtures runs Tier 0 over the transcript fixtures: what each
// transcript shows (the fix, the correction, the plan, the open work) is
// extracted, and every result is a valid medallion.
func TestFixtures(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "transcripts")
	tests := []struct {
		format transcript.Format
		file   string
		want   []string // lines of the medallion's items that must appear
	}{
		{transcript.FormatClaudeCode, "7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57.jsonl", []string{
			"avoid: when --- FAIL: TestReturnRestocks (0.00s): edit internal/stock/stock.go (s.counts[id] += n), then `go test ./internal/stock/...` succeeds",
			"invariant: no, don't delete the cache; invalidate it in Store.Return instead",
			"decision: Approved plan: 1. Call cache.Invalidate(id) at the end of Store.Return",
			"question high: Unresolved: Fix the lint issues before stopping",
			"question high: Add a regression test for partial returns",
			"subsystem: internal/stock in_progress",
		}},
		{transcript.FormatClaudeCode, "agent-5e6f7a8b.jsonl", nil},
		{transcript.FormatCodex, "rollout-2026-03-02T10-15-00-019c9a10-1111-7aaa-8bbb-0123456789ab.jsonl", []string{
			"question high: Unresolved: error: open data/items.csv: no such file or directory",
			"question high: Run the importer tests",
			"question medium: Document the data dir in README",
			"subsystem: cmd/import in_progress",
		}},
		{transcript.FormatCodex, "rollout-2026-03-03T08-00-00-019c9b20-2222-7ccc-8ddd-0123456789ab.jsonl", []string{
			"question high: Unresolved: FAIL github.com/acme/importer/internal/csv 0.02s",
		}},
		{transcript.FormatJSONL, "acme-session-7.jsonl", []string{
			"avoid: when --- FAIL: TestReturnRestocks: edit internal/stock/stock.go (s.counts[id] += n), then `go test ./internal/stock/...` succeeds",
			"invariant: no, never edit the counts directly; go through Store.Adjust",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ep := fixtureEpisode(t, tt.format, filepath.Join(dir, string(tt.format), tt.file))
			m := Apply(nil, ep.Scope, Extract(ep), t0)
			if err := m.Validate(); err != nil {
				t.Fatalf("invalid: %v", err)
			}
			var got []string
			for _, s := range m.Affordances.AvoidRepeating {
				got = append(got, "avoid: "+s)
			}
			for _, s := range m.Affordances.Invariants {
				got = append(got, "invariant: "+s)
			}
			for _, d := range m.Decisions {
				got = append(got, "decision: "+d.Statement)
			}
			for _, q := range m.OpenQuestions {
				got = append(got, "question "+string(q.Priority)+": "+q.Question)
			}
			for _, s := range m.Summary.Subsystems {
				got = append(got, "subsystem: "+s.Name+" "+string(s.Status))
			}
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, strings.Join(got, "\n"))
				}
			}
			if tt.want == nil && len(got) != 0 {
				t.Errorf("items from a transcript without any:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}
