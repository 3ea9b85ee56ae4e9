package history

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

// base is version 1 of a small medallion; each test case edits a clone.
func base() *medallion.Medallion {
	return &medallion.Medallion{
		Meta: medallion.Meta{MedallionID: "med-1", SchemaVersion: medallion.SchemaVersion, Model: "tier0",
			CreatedAt: "2025-11-17T09:00:00.000000Z", UpdatedAt: "2025-11-17T09:00:00.000000Z", Status: medallion.StatusActive, Version: 1},
		Scope:   medallion.Scope{GraphNodes: []string{"repo:muse"}, Tags: []string{"project_state"}},
		Summary: medallion.Summary{HighLevel: "Muse: parser done.", Subsystems: []medallion.Subsystem{{Name: "internal/parse", Status: medallion.SubsystemStable, Notes: "read"}}},
		Decisions: []medallion.Decision{
			{ID: "D-001", Statement: "Stream MIDI output", Rationale: "tracks are large", Confidence: 0.6},
			{ID: "D-002", Statement: "Use tabs in scores", Rationale: "user said so", Confidence: 0.8},
		},
		OpenQuestions: []medallion.OpenQuestion{
			{ID: "Q-001", Question: "Fix tempo parsing", BlockedOn: []string{}, Priority: medallion.PriorityMedium},
			{ID: "Q-002", Question: "Windows line endings?", BlockedOn: []string{}, Priority: medallion.PriorityLow},
		},
		Affordances: medallion.Affordances{
			RecommendedEntryPoints: []string{"internal/parse/parse.go"},
			AvoidRepeating:         []string{"when go vet fails: run make gen"},
			Invariants:             []string{"never edit generated files"},
		},
	}
}

// next returns a clone of m as the following version.
func next(m *medallion.Medallion, edit func(*medallion.Medallion)) *medallion.Medallion {
	c := m.Clone()
	c.Meta.Version++
	c.Meta.UpdatedAt = "2025-11-17T10:00:00.000000Z"
	edit(c)
	return c
}

func TestDiff(t *testing.T) {
	v1 := base()
	tests := []struct {
		name string
		to   *medallion.Medallion
		want Changes
	}{
		{
			name: "nothing but meta",
			to:   next(v1, func(*medallion.Medallion) {}),
			want: Changes{},
		},
		{
			name: "decision added, changed, superseded, removed",
			to: next(v1, func(m *medallion.Medallion) {
				m.Decisions = []medallion.Decision{
					{ID: "D-002", Statement: "Use tabs in scores", Rationale: "user said so", Confidence: 0.85},
					{ID: "D-003", Statement: "Buffer one bar at a time", Rationale: "supersedes D-001 (Stream MIDI output)", Confidence: 0.7},
				}
			}),
			want: Changes{Decisions: []DecisionChange{
				{Kind: Changed, ID: "D-002", Fields: []FieldChange{{"confidence", "0.80", "0.85"}}},
				{Kind: Added, ID: "D-003"},
				{Kind: Superseded, ID: "D-001", By: "D-003"},
			}},
		},
		{
			name: "supersedes a longer id is not a supersede",
			to: next(v1, func(m *medallion.Medallion) {
				m.Decisions = []medallion.Decision{m.Decisions[1], {ID: "D-010", Statement: "x", Rationale: "supersedes D-0010", Confidence: 0.5}}
			}),
			want: Changes{Decisions: []DecisionChange{
				{Kind: Added, ID: "D-010"},
				{Kind: Removed, ID: "D-001"},
			}},
		},
		{
			name: "question resolved by a decision, another resolved, one added and one reprioritised",
			to: next(v1, func(m *medallion.Medallion) {
				m.Decisions = append(m.Decisions, medallion.Decision{ID: "D-003", Statement: "Tempo parsed per bar", Rationale: "resolves Q-001.", Confidence: 0.7})
				m.OpenQuestions = []medallion.OpenQuestion{
					{ID: "Q-003", Question: "Add a --strict flag", BlockedOn: []string{}, Priority: medallion.PriorityHigh},
				}
			}),
			want: Changes{
				Decisions: []DecisionChange{{Kind: Added, ID: "D-003"}},
				OpenQuestions: []QuestionChange{
					{Kind: Added, ID: "Q-003"},
					{Kind: Resolved, ID: "Q-001", By: "D-003"},
					{Kind: Resolved, ID: "Q-002"},
				},
			},
		},
		{
			name: "question changed; resolved in the summary",
			to: next(v1, func(m *medallion.Medallion) {
				m.Summary.HighLevel = "Muse: parser done; this resolves Q-002."
				m.OpenQuestions = []medallion.OpenQuestion{{ID: "Q-001", Question: "Fix tempo parsing", BlockedOn: []string{"spec"}, Priority: medallion.PriorityHigh}}
			}),
			want: Changes{
				HighLevel: &FieldChange{"high_level", "Muse: parser done.", "Muse: parser done; this resolves Q-002."},
				OpenQuestions: []QuestionChange{
					{Kind: Changed, ID: "Q-001", Fields: []FieldChange{{"priority", "medium", "high"}, {"blocked_on", "", "spec"}}},
					{Kind: Resolved, ID: "Q-002", By: "summary"},
				},
			},
		},
		{
			name: "affordances and subsystems",
			to: next(v1, func(m *medallion.Medallion) {
				m.Summary.Subsystems = []medallion.Subsystem{
					{Name: "internal/parse", Status: medallion.SubsystemInProgress, Notes: "edited"},
					{Name: "cmd/muse", Status: medallion.SubsystemUnknown, Notes: "read"},
				}
				m.Affordances.Invariants = append(m.Affordances.Invariants, "always run make gen after editing .proto")
				m.Affordances.AvoidRepeating = nil
				m.Affordances.RecommendedEntryPoints = []string{"cmd/muse/main.go", "internal/parse/parse.go"}
			}),
			want: Changes{
				Subsystems: []SubsystemChange{
					{Kind: Changed, Name: "internal/parse", Fields: []FieldChange{{"status", "stable", "in_progress"}, {"notes", "read", "edited"}}},
					{Kind: Added, Name: "cmd/muse"},
				},
				Invariants:             []ItemChange{{Added, "always run make gen after editing .proto"}},
				AvoidRepeating:         []ItemChange{{Removed, "when go vet fails: run make gen"}},
				RecommendedEntryPoints: []ItemChange{{Added, "cmd/muse/main.go"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := v1.Clone()
			got := Diff(v1, tt.to)
			if !reflect.DeepEqual(v1, before) {
				t.Fatal("Diff modified its from argument")
			}
			if got.ID != "med-1" || got.FromVersion != 1 || got.ToVersion != 2 {
				t.Errorf("header = %s %d→%d, want med-1 1→2", got.ID, got.FromVersion, got.ToVersion)
			}
			wantMeta := []FieldChange{{"version", "1", "2"}, {"updated_at", "2025-11-17T09:00:00.000000Z", "2025-11-17T10:00:00.000000Z"}}
			if !reflect.DeepEqual(got.Meta, wantMeta) {
				t.Errorf("meta = %+v, want %+v", got.Meta, wantMeta)
			}
			// The entries carry From/To pointers; compare their identity
			// (kind, id, fields, by) and check the pointers separately.
			for i := range got.Decisions {
				d := &got.Decisions[i]
				checkEnds(t, d.ID, d.Kind, d.From != nil, d.To != nil)
				d.From, d.To = nil, nil
			}
			for i := range got.OpenQuestions {
				q := &got.OpenQuestions[i]
				checkEnds(t, q.ID, q.Kind, q.From != nil, q.To != nil)
				q.From, q.To = nil, nil
			}
			for i := range got.Subsystems {
				s := &got.Subsystems[i]
				checkEnds(t, s.Name, s.Kind, s.From != nil, s.To != nil)
				s.From, s.To = nil, nil
			}
			got.ID, got.FromVersion, got.ToVersion, got.Meta = "", 0, 0, nil
			if !reflect.DeepEqual(got, tt.want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(tt.want, "", "  ")
				t.Errorf("Diff:\n got %s\nwant %s", g, w)
			}
			if got.Empty() != (tt.name == "nothing but meta") {
				t.Errorf("Empty() = %v", got.Empty())
			}
		})
	}
}

// checkEnds checks that an entry carries the old value when it existed
// before and the new one when it exists after.
func checkEnds(t *testing.T, id string, k Kind, hasFrom, hasTo bool) {
	t.Helper()
	wantFrom, wantTo := k != Added, k == Added || k == Changed
	if hasFrom != wantFrom || hasTo != wantTo {
		t.Errorf("%s %s: from set %v, to set %v; want %v, %v", k, id, hasFrom, hasTo, wantFrom, wantTo)
	}
}

func TestDiffMetaModelAndStatus(t *testing.T) {
	v1 := base()
	v2 := next(v1, func(m *medallion.Medallion) { m.Meta.Model = "claude-sonnet"; m.Meta.Status = medallion.StatusStale })
	got := Diff(v1, v2).Meta
	want := []FieldChange{
		{"version", "1", "2"}, {"model", "tier0", "claude-sonnet"}, {"status", "active", "stale"},
		{"updated_at", "2025-11-17T09:00:00.000000Z", "2025-11-17T10:00:00.000000Z"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("meta = %+v, want %+v", got, want)
	}
}

func TestMentions(t *testing.T) {
	tests := []struct {
		text, verb, id string
		want           bool
	}{
		{"supersedes D-003 (old statement)", "supersedes", "D-003", true},
		{"Supersedes D-003.", "supersedes", "D-003", true},
		{"supersedes D-0031", "supersedes", "D-003", false},
		{"supersedes D-0031, supersedes D-003", "supersedes", "D-003", true},
		{"resolves Q-1", "resolves", "Q-1", true},
		{"resolved Q-1", "resolves", "Q-1", false},
		{"anything", "resolves", "", false},
	}
	for _, tt := range tests {
		if got := mentions(tt.text, tt.verb, tt.id); got != tt.want {
			t.Errorf("mentions(%q, %q, %q) = %v, want %v", tt.text, tt.verb, tt.id, got, tt.want)
		}
	}
}
