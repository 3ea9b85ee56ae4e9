package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// BenchmarkLoadEndpoint is GET /v1/load in the daemon, request to encoded
// answer, for three busy medallions of one repository at the hook's
// budget: "kept" as the daemon serves it (the answer kept until a version
// of the scope is written), "rendered" without (Config.WatchWrites unset).
func BenchmarkLoadEndpoint(b *testing.B) {
	st, err := store.Open(b.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for i := range 3 {
		m := &medallion.Medallion{
			Meta:    medallion.Meta{MedallionID: fmt.Sprintf("x-state-%d", i), SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
			Scope:   medallion.Scope{GraphNodes: []string{"repo:x"}, Tags: []string{"project_state"}},
			Summary: medallion.Summary{HighLevel: "x is a service that stores save files; the storage layer is being migrated."},
		}
		for j := range 8 {
			m.Decisions = append(m.Decisions, medallion.Decision{ID: fmt.Sprintf("D-%03d", j),
				Statement: fmt.Sprintf("use badger for storage layer %d", j), Rationale: "embedded, no server to run", Confidence: 0.8})
			m.OpenQuestions = append(m.OpenQuestions, medallion.OpenQuestion{ID: fmt.Sprintf("Q-%03d", j),
				Question: fmt.Sprintf("finish the migration of module %d", j), BlockedOn: []string{}, Priority: medallion.Priority([]string{"high", "medium", "low"}[j%3])})
			m.Affordances.Invariants = append(m.Affordances.Invariants, fmt.Sprintf("never edit generated file gen/%d.go by hand; run go generate ./... instead", j))
			m.Affordances.AvoidRepeating = append(m.Affordances.AvoidRepeating, fmt.Sprintf("when go test ./internal/p%d fails with missing go.sum entry: run go mod download first", j))
		}
		if _, err := st.Create(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	for _, kept := range []bool{true, false} {
		name := "rendered"
		cfg := Config{Store: st, Logger: hclog.NewNullLogger(), StartedAt: time.Now(), DiskUsage: func() int64 { return 0 },
			ScopeForCWD: func(string) []string { return []string{"repo:x"} }}
		if kept {
			name, cfg.WatchWrites = "kept", st.WatchWrites
		}
		srv := New(cfg)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/load?cwd=%2Fsrc%2Fx&budget=3000", nil))
				if rec.Code != http.StatusOK || rec.Body.Len() < 4000 {
					b.Fatalf("status %d, %d bytes: %.200s", rec.Code, rec.Body.Len(), rec.Body.String())
				}
			}
		})
	}
}
