package render

import (
	"fmt"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

// busy is a medallion of the size Tier 0 curation writes for a busy
// session: eight items of each kind (the e2e load benchmarks' medallion).
func busy(i int) *medallion.Medallion {
	m := &medallion.Medallion{
		Meta: medallion.Meta{MedallionID: fmt.Sprintf("x-state-%d", i), SchemaVersion: medallion.SchemaVersion,
			Model: "tier0", UpdatedAt: "2026-11-21T17:42:10.123456Z", Status: medallion.StatusActive, Version: 1},
		Scope: medallion.Scope{GraphNodes: []string{"repo:x"}, Tags: []string{"project_state"}},
		Summary: medallion.Summary{HighLevel: "x is a service that stores save files; the storage layer is being migrated.",
			Subsystems: []medallion.Subsystem{{Name: "internal/store", Status: medallion.SubsystemInProgress, Notes: "migrating"}}},
	}
	m.Affordances.RecommendedEntryPoints = []string{"cmd/x/main.go"}
	for j := range 8 {
		m.Affordances.Invariants = append(m.Affordances.Invariants, fmt.Sprintf("never edit generated file gen/%d.go by hand; run go generate ./... instead", j))
		m.Affordances.AvoidRepeating = append(m.Affordances.AvoidRepeating, fmt.Sprintf("when go test ./internal/p%d fails with missing go.sum entry: run go mod download first", j))
		m.Decisions = append(m.Decisions, medallion.Decision{ID: fmt.Sprintf("D-%03d", j), Statement: fmt.Sprintf("use badger for storage layer %d", j),
			Rationale: "embedded, no server to run", Confidence: 0.8})
		m.OpenQuestions = append(m.OpenQuestions, medallion.OpenQuestion{ID: fmt.Sprintf("Q-%03d", j), Question: fmt.Sprintf("finish the migration of module %d", j),
			Priority: medallion.Priorities[j%3]})
	}
	return m
}

// BenchmarkLoad renders what the SessionStart hook asks the daemon for:
// three busy medallions of one scope within the default budget, which
// leaves items out (the cut lines are priced for every item considered).
func BenchmarkLoad(b *testing.B) {
	ms := []*medallion.Medallion{busy(0), busy(1), busy(2)}
	for b.Loop() {
		if res := Load(ms, Options{Budget: DefaultBudget}); len(res.Cut) == 0 {
			b.Fatal("nothing was cut: the benchmark does not exercise the budget")
		}
	}
}
