package medallion

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// full returns a valid medallion that uses every field, so a test can break
// exactly one thing in it.
func full() *Medallion {
	return &Medallion{
		Meta: Meta{
			MedallionID:    "repo-muse:cli_v1.2",
			SchemaVersion:  SchemaVersion,
			Model:          "tier0",
			CreatedAt:      "2025-11-17T09:30:00.000000Z",
			UpdatedAt:      "2025-11-18T10:00:00.250000Z",
			KnowledgeMinTS: "2025-11-17T09:00:00Z",
			KnowledgeMaxTS: "2025-11-18T09:59:59+01:00",
			Status:         StatusActive,
			Version:        3,
		},
		Scope: Scope{
			GraphNodes: []string{"repo:muse", "module:cli"},
			Tags:       []string{"project_state", "émigré"},
		},
		Summary: Summary{
			HighLevel: "Muse is a CLI for versioning music.\nThe cli module parses flags.",
			Subsystems: []Subsystem{
				{Name: "parser", Status: SubsystemStable, Notes: "hand written"},
				{Name: "sync", Status: SubsystemInProgress},
				{Name: "legacy-db", Status: SubsystemDeprecated, Notes: "do not extend"},
				{Name: "plugins", Status: SubsystemUnknown},
			},
		},
		Decisions: []Decision{
			{ID: "D-001", Statement: "Use cobra for the CLI", Rationale: "the user said so", Confidence: 0.9},
			{ID: "D-002", Statement: "Store times in UTC", Confidence: 0},
			{ID: "D-003", Statement: "Never shell out to git", Confidence: 1},
		},
		OpenQuestions: []OpenQuestion{
			{ID: "Q-001", Question: "Which audio backend?", BlockedOn: []string{"benchmark results"}, Priority: PriorityHigh},
			{ID: "Q-002", Question: "Windows support?", BlockedOn: []string{}, Priority: PriorityLow},
			{ID: "Q-003", Question: "Rename the sync module?", Priority: PriorityMedium},
		},
		Affordances: Affordances{
			RecommendedEntryPoints: []string{"cmd/muse/main.go"},
			AvoidRepeating:         []string{"go test ./... without -short takes 20 minutes"},
			Invariants:             []string{"never commit generated files"},
		},
	}
}

func problemsOf(t *testing.T, m *Medallion) []Problem {
	t.Helper()
	err := m.Validate()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate() returned %T (%v), want *ValidationError", err, err)
	}
	if len(ve.Problems) == 0 {
		t.Fatal("Validate() returned a *ValidationError without problems")
	}
	return ve.Problems
}

func TestValidateValid(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Medallion)
	}{
		{"full", func(*Medallion) {}},
		{"after Normalize", func(m *Medallion) { m.Normalize() }},
		{"tags only", func(m *Medallion) { m.Scope.GraphNodes = nil }},
		{"graph nodes only", func(m *Medallion) { m.Scope.Tags = nil }},
		{"no optional knowledge bounds", func(m *Medallion) { m.Meta.KnowledgeMinTS, m.Meta.KnowledgeMaxTS = "", "" }},
		{"updated equals created", func(m *Medallion) { m.Meta.UpdatedAt = m.Meta.CreatedAt }},
		{"version 0 (an update based on the latest)", func(m *Medallion) { m.Meta.Version = 0 }},
		{"empty lists", func(m *Medallion) {
			m.Summary = Summary{}
			m.Decisions, m.OpenQuestions, m.Affordances = nil, nil, Affordances{}
		}},
		{"longest id", func(m *Medallion) { m.Meta.MedallionID = strings.Repeat("a", MaxIDLen) }},
		{"longest scope entry", func(m *Medallion) { m.Scope.Tags = []string{strings.Repeat("t", MaxScopeLen)} }},
		{"same id for a decision and a question", func(m *Medallion) { m.OpenQuestions[0].ID = "D-001" }},
		{"superseded", func(m *Medallion) { m.Meta.Status = StatusSuperseded }},
		{"stale", func(m *Medallion) { m.Meta.Status = StatusStale }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := full()
			tt.mutate(m)
			if err := m.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
}

func TestValidateInvalid(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Medallion)
		// want is every problem expected, as "field: message substring".
		want []string
	}{
		{"missing id", func(m *Medallion) { m.Meta.MedallionID = "" },
			[]string{"meta.medallion_id: required"}},
		{"id with a slash", func(m *Medallion) { m.Meta.MedallionID = "repo/muse" },
			[]string{`meta.medallion_id: must be 1-128 ASCII letters, digits or . _ : - (got "repo/muse")`}},
		{"id with a space", func(m *Medallion) { m.Meta.MedallionID = "repo muse" },
			[]string{"meta.medallion_id: must be 1-128"}},
		{"id with non-ASCII letters", func(m *Medallion) { m.Meta.MedallionID = "répo" },
			[]string{"meta.medallion_id: must be 1-128"}},
		{"id too long", func(m *Medallion) { m.Meta.MedallionID = strings.Repeat("a", MaxIDLen+1) },
			[]string{"meta.medallion_id: must be 1-128"}},
		{"missing schema version", func(m *Medallion) { m.Meta.SchemaVersion = "" },
			[]string{`meta.schema_version: required ("medallion.v1")`}},
		{"wrong schema version", func(m *Medallion) { m.Meta.SchemaVersion = "medallion.v2" },
			[]string{`meta.schema_version: must be "medallion.v1" (got "medallion.v2")`}},
		{"confidence above 1", func(m *Medallion) { m.Decisions[1].Confidence = 1.5 },
			[]string{"decisions[1].confidence: must be between 0 and 1 (got 1.5)"}},
		{"negative confidence", func(m *Medallion) { m.Decisions[0].Confidence = -0.1 },
			[]string{"decisions[0].confidence: must be between 0 and 1 (got -0.1)"}},
		{"NaN confidence", func(m *Medallion) { m.Decisions[2].Confidence = math.NaN() },
			[]string{"decisions[2].confidence: must be between 0 and 1 (got NaN)"}},
		{"infinite confidence", func(m *Medallion) { m.Decisions[2].Confidence = math.Inf(1) },
			[]string{"decisions[2].confidence: must be between 0 and 1 (got +Inf)"}},
		{"unknown status", func(m *Medallion) { m.Meta.Status = "archived" },
			[]string{`meta.status: must be one of active, stale, superseded (got "archived")`}},
		{"missing status", func(m *Medallion) { m.Meta.Status = "" },
			[]string{"meta.status: required (one of active, stale, superseded)"}},
		{"unknown priority", func(m *Medallion) { m.OpenQuestions[1].Priority = "urgent" },
			[]string{`open_questions[1].priority: must be one of low, medium, high (got "urgent")`}},
		{"missing priority", func(m *Medallion) { m.OpenQuestions[0].Priority = "" },
			[]string{"open_questions[0].priority: required (one of low, medium, high)"}},
		{"unknown subsystem status", func(m *Medallion) { m.Summary.Subsystems[2].Status = "Stable" },
			[]string{`summary.subsystems[2].status: must be one of unknown, stable, in_progress, deprecated (got "Stable")`}},
		{"subsystem without a name", func(m *Medallion) { m.Summary.Subsystems[0].Name = " " },
			[]string{"summary.subsystems[0].name: required"}},
		{"duplicate decision id", func(m *Medallion) { m.Decisions[2].ID = "D-001" },
			[]string{`decisions[2].id: duplicate id "D-001" (also at index 0)`}},
		{"missing decision id and statement", func(m *Medallion) { m.Decisions[0].ID, m.Decisions[0].Statement = "", "\t" },
			[]string{"decisions[0].id: required", "decisions[0].statement: required"}},
		{"decision id too long", func(m *Medallion) { m.Decisions[0].ID = strings.Repeat("D", MaxIDLen+1) },
			[]string{"decisions[0].id: longer than 128 bytes"}},
		{"control character in a decision id", func(m *Medallion) { m.Decisions[1].ID = "D\n1" },
			[]string{"decisions[1].id: must be valid UTF-8 without control characters"}},
		{"duplicate question id", func(m *Medallion) { m.OpenQuestions[1].ID = "Q-001" },
			[]string{`open_questions[1].id: duplicate id "Q-001" (also at index 0)`}},
		{"question without text", func(m *Medallion) { m.OpenQuestions[2].Question = "" },
			[]string{"open_questions[2].question: required"}},
		{"empty blocked_on entry", func(m *Medallion) { m.OpenQuestions[0].BlockedOn = []string{"x", ""} },
			[]string{"open_questions[0].blocked_on[1]: must not be empty"}},
		{"bad created_at", func(m *Medallion) { m.Meta.CreatedAt = "17/11/2025" },
			[]string{`meta.created_at: must be an RFC 3339 timestamp such as 2025-11-17T09:30:00Z (got "17/11/2025")`}},
		{"timestamp without zone", func(m *Medallion) { m.Meta.UpdatedAt = "2025-11-18T10:00:00" },
			[]string{"meta.updated_at: must be an RFC 3339 timestamp"}},
		{"missing timestamps", func(m *Medallion) { m.Meta.CreatedAt, m.Meta.UpdatedAt = "", "" },
			[]string{"meta.created_at: required (RFC 3339", "meta.updated_at: required (RFC 3339"}},
		{"bad knowledge bound", func(m *Medallion) { m.Meta.KnowledgeMinTS = "yesterday" },
			[]string{`meta.knowledge_min_ts: must be an RFC 3339 timestamp such as 2025-11-17T09:30:00Z (got "yesterday")`}},
		{"updated_at before created_at", func(m *Medallion) { m.Meta.UpdatedAt = "2025-11-17T09:29:59.999999Z" },
			[]string{"meta.updated_at: must not be before created_at"}},
		{"updated_at before created_at across zones", func(m *Medallion) { m.Meta.UpdatedAt = "2025-11-17T10:00:00+01:00" },
			[]string{"meta.updated_at: must not be before created_at"}},
		{"knowledge_max_ts before knowledge_min_ts", func(m *Medallion) { m.Meta.KnowledgeMaxTS = "2025-11-16T00:00:00Z" },
			[]string{"meta.knowledge_max_ts: must not be before knowledge_min_ts"}},
		{"negative version", func(m *Medallion) { m.Meta.Version = -1 },
			[]string{"meta.version: must not be negative (got -1)"}},
		{"empty scope", func(m *Medallion) { m.Scope = Scope{} },
			[]string{"scope: needs at least one graph node or tag"}},
		{"empty scope lists", func(m *Medallion) { m.Scope = Scope{GraphNodes: []string{}, Tags: []string{}} },
			[]string{"scope: needs at least one graph node or tag"}},
		{"empty graph node", func(m *Medallion) { m.Scope.GraphNodes[1] = "  " },
			[]string{"scope.graph_nodes[1]: must not be empty"}},
		{"duplicate graph node", func(m *Medallion) { m.Scope.GraphNodes = append(m.Scope.GraphNodes, "repo:muse") },
			[]string{`scope.graph_nodes[2]: duplicate "repo:muse"`}},
		{"duplicate tag", func(m *Medallion) { m.Scope.Tags = []string{"a", "b", "a"} },
			[]string{`scope.tags[2]: duplicate "a"`}},
		{"control character in a graph node", func(m *Medallion) { m.Scope.GraphNodes[0] = "repo:mu\x1bse" },
			[]string{"scope.graph_nodes[0]: must be valid UTF-8 without control characters"}},
		{"newline in a tag", func(m *Medallion) { m.Scope.Tags[0] = "a\nb" },
			[]string{"scope.tags[0]: must be valid UTF-8 without control characters"}},
		{"invalid UTF-8 in a tag", func(m *Medallion) { m.Scope.Tags[0] = "a\xffb" },
			[]string{"scope.tags[0]: must be valid UTF-8 without control characters"}},
		{"scope entry too long", func(m *Medallion) { m.Scope.GraphNodes[0] = strings.Repeat("n", MaxScopeLen+1) },
			[]string{"scope.graph_nodes[0]: longer than 256 bytes"}},
		{"empty affordances", func(m *Medallion) {
			m.Affordances.RecommendedEntryPoints = []string{""}
			m.Affordances.AvoidRepeating = []string{"ok", " "}
			m.Affordances.Invariants = []string{"\n"}
		}, []string{
			"affordances.recommended_entry_points[0]: must not be empty",
			"affordances.avoid_repeating[1]: must not be empty",
			"affordances.invariants[0]: must not be empty",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := full()
			tt.mutate(m)
			assertProblems(t, problemsOf(t, m), tt.want)
		})
	}
}

// assertProblems checks that got holds exactly one problem per want entry,
// in order, each with the wanted field and a message starting as wanted.
func assertProblems(t *testing.T, got []Problem, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
	}
	for i, w := range want {
		field, msg, _ := strings.Cut(w, ": ")
		if got[i].Field != field || !strings.HasPrefix(got[i].Message, msg) {
			t.Errorf("problem %d = %q, want field %q with a message starting %q", i, got[i].String(), field, msg)
		}
	}
}

func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	m := full()
	m.Meta.MedallionID = ""
	m.Meta.SchemaVersion = "v0"
	m.Meta.UpdatedAt = "2020-01-01T00:00:00Z"
	m.Meta.Status = "zombie"
	m.Scope.GraphNodes = []string{"x", "x"}
	m.Summary.Subsystems[0].Status = "meh"
	m.Decisions[0].Confidence = 1.5
	m.Decisions[1].ID = "D-001"
	m.OpenQuestions[0].Priority = "asap"
	m.Affordances.Invariants = []string{""}

	want := []string{
		"meta.medallion_id: required",
		`meta.schema_version: must be "medallion.v1"`,
		"meta.updated_at: must not be before created_at",
		"meta.status: must be one of",
		`scope.graph_nodes[1]: duplicate "x"`,
		"summary.subsystems[0].status: must be one of",
		"decisions[0].confidence: must be between 0 and 1 (got 1.5)",
		`decisions[1].id: duplicate id "D-001"`,
		"open_questions[0].priority: must be one of",
		"affordances.invariants[0]: must not be empty",
	}
	problems := problemsOf(t, m)
	assertProblems(t, problems, want)

	msg := m.Validate().Error()
	if !strings.HasPrefix(msg, "invalid medallion: meta.medallion_id: required; ") {
		t.Errorf("Error() = %q, want it to start with the first problem", msg)
	}
	for _, p := range problems {
		if !strings.Contains(msg, p.String()) {
			t.Errorf("Error() = %q does not mention %q", msg, p)
		}
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"repo-muse", true},
		{"a.b_c:d-e", true},
		{"D-001", true},
		{"x", true},
		{strings.Repeat("9", MaxIDLen), true},
		{"", false},
		{strings.Repeat("9", MaxIDLen+1), false},
		{"a/b", false},
		{"..%2f", false},
		{"tab\there", false},
		{"ünï", false},
		{"x\x00", false},
	}
	for _, tt := range tests {
		if got := ValidID(tt.id); got != tt.want {
			t.Errorf("ValidID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestEnumListsMatchValidation(t *testing.T) {
	// Every listed constant must pass, so the lists (which also feed the JSON
	// Schema) and Validate cannot disagree.
	for _, s := range Statuses {
		m := full()
		m.Meta.Status = s
		if err := m.Validate(); err != nil {
			t.Errorf("status %q: %v", s, err)
		}
	}
	for _, s := range SubsystemStatuses {
		m := full()
		m.Summary.Subsystems[0].Status = s
		if err := m.Validate(); err != nil {
			t.Errorf("subsystem status %q: %v", s, err)
		}
	}
	for _, p := range Priorities {
		m := full()
		m.OpenQuestions[0].Priority = p
		if err := m.Validate(); err != nil {
			t.Errorf("priority %q: %v", p, err)
		}
	}
	if !slices.Equal(Statuses, []Status{StatusActive, StatusStale, StatusSuperseded}) {
		t.Errorf("Statuses = %q", Statuses)
	}
}
