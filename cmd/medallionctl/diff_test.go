package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/history"
	"github.com/medallionhq/medallion/internal/medallion"
)

// evolved starts a fake daemon holding muse-project-state in three
// versions, stored through the CLI: v2 is what a checkpoint makes of v1
// (a decision superseded, a question resolved by a decision, another
// reprioritised, a known fix and an invariant learned, a subsystem
// finished); v3 only raises a confidence.
func evolved(t *testing.T) string {
	t.Helper()
	f := startFake(t)
	sock := "--socket=" + f.sock
	ok(t, sock, "put", "-f", writeFile(t, "v1.json", museJSON))

	var m medallion.Medallion
	if err := json.Unmarshal([]byte(museJSON), &m); err != nil {
		t.Fatal(err)
	}
	m.Meta.Model = "tier0"
	m.Summary.HighLevel = "Muse turns text scores into MIDI.\nThe parser and the MIDI writer are done; tempo maps are next."
	m.Summary.Subsystems[1].Status = medallion.SubsystemStable
	m.Summary.Subsystems = append(m.Summary.Subsystems, medallion.Subsystem{Name: "internal/tempo", Status: medallion.SubsystemInProgress, Notes: "edited 3 files"})
	m.Decisions = []medallion.Decision{
		m.Decisions[0],
		{ID: "D-003", Statement: "Tempo maps are copied on write", Rationale: "supersedes D-002 (Keep tempo maps immutable); resolves Q-001", Confidence: 0.7},
	}
	m.OpenQuestions = []medallion.OpenQuestion{
		{ID: "Q-002", Question: "Windows line endings in scores?", BlockedOn: []string{"user_input"}, Priority: medallion.PriorityHigh},
		{ID: "Q-003", Question: "Add tests for tempo changes inside a bar", BlockedOn: []string{}, Priority: medallion.PriorityMedium},
	}
	m.Affordances.AvoidRepeating = append(m.Affordances.AvoidRepeating, "when go test ./internal/tempo fails with nil map: initialise the map in New")
	m.Affordances.Invariants = append(m.Affordances.Invariants, "no, never edit generated files; change the .proto and run make gen instead")
	m.Affordances.RecommendedEntryPoints = []string{"internal/tempo/tempo.go", "cmd/muse/main.go"}
	m.Meta.Version = 1
	putMedallion(t, sock, &m, "v2.json")

	m.Decisions[1].Confidence = 0.75
	m.Meta.Version = 2
	putMedallion(t, sock, &m, "v3.json")
	return sock
}

func putMedallion(t *testing.T, sock string, m *medallion.Medallion, name string) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	ok(t, sock, "put", "-f", writeFile(t, name, string(b)))
}

func TestDiffOutputs(t *testing.T) {
	sock := evolved(t)
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"latest against the one before", []string{"diff", "muse-project-state"}, "diff_latest.txt"},
		{"a checkpoint's changes", []string{"diff", "muse-project-state", "--from", "1", "--to", "2"}, "diff_1_2.txt"},
		{"only --to", []string{"diff", "muse-project-state", "--to", "2"}, "diff_1_2.txt"},
		{"json", []string{"diff", "muse-project-state", "--from", "1", "--to", "2", "-o", "json"}, "diff_1_2.json"},
		{"backwards", []string{"diff", "muse-project-state", "--from", "2", "--to", "1"}, "diff_2_1.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.golden, ok(t, append([]string{sock}, tt.args...)...))
		})
	}
}

// TestDiffJSONIsChanges checks that -o json is the Changes structure and
// that it names the reasons a user reads in the table.
func TestDiffJSONIsChanges(t *testing.T) {
	sock := evolved(t)
	out := ok(t, sock, "diff", "muse-project-state", "--from", "1", "--to", "2", "-o", "json")
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var ch history.Changes
	if err := dec.Decode(&ch); err != nil {
		t.Fatalf("-o json does not decode as history.Changes: %v\n%s", err, out)
	}
	var superseded, resolved string
	for _, d := range ch.Decisions {
		if d.Kind == history.Superseded {
			superseded = d.ID + " by " + d.By
		}
	}
	for _, q := range ch.OpenQuestions {
		if q.Kind == history.Resolved {
			resolved = q.ID + " by " + q.By
		}
	}
	if superseded != "D-002 by D-003" || resolved != "Q-001 by D-003" {
		t.Errorf("superseded %q, resolved %q; want D-002 by D-003 and Q-001 by D-003", superseded, resolved)
	}
}

func TestDiffErrors(t *testing.T) {
	sock := evolved(t)
	f := startFake(t)
	single := "--socket=" + f.sock
	ok(t, single, "put", "-f", writeFile(t, "muse.json", museJSON))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"one version only", []string{single, "diff", "muse-project-state"}, 1, "only one version: there is nothing to diff"},
		{"unknown id", []string{sock, "diff", "nope"}, 1, `medallion "nope" not found`},
		{"--to out of range", []string{sock, "diff", "muse-project-state", "--to", "9"}, 1, `has versions 1 to 3, not 9`},
		{"--from out of range", []string{sock, "diff", "muse-project-state", "--from", "4", "--to", "1"}, 1, `has versions 1 to 3, not 4`},
		{"same version", []string{sock, "diff", "muse-project-state", "--from", "2", "--to", "2"}, 2, "both version 2"},
		{"negative", []string{sock, "diff", "muse-project-state", "--from", "-1"}, 2, "at least 1"},
		{"no id", []string{sock, "diff"}, 2, "diff needs ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ctl(t, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit %d and stderr containing %q", r.code, r.stderr, r.stdout, tt.code, tt.want)
			}
		})
	}
}
