package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// BenchmarkHistoryEndpoint is GET /v1/medallions/{id}/history in the
// daemon, request to encoded answer, for a medallion of 1,000 versions
// (10,000 with MEDALLION_PERF=1; issue 12: ≤ 100 ms). The store's part,
// and what a version costs stored, is BenchmarkHistory in internal/store.
func BenchmarkHistoryEndpoint(b *testing.B) {
	n := 1000
	if os.Getenv("MEDALLION_PERF") != "" {
		n = 10_000
	}
	st, err := store.Open(b.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	m, err := st.Create(ctx, &medallion.Medallion{
		Meta:  medallion.Meta{MedallionID: "busy", SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
		Scope: medallion.Scope{GraphNodes: []string{"repo:muse"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := 2; i <= n; i++ {
		m.Summary.HighLevel = fmt.Sprintf("checkpoint %d", i)
		if m, err = st.Update(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	srv := New(Config{Store: st, Logger: hclog.NewNullLogger(), StartedAt: time.Now(), DiskUsage: func() int64 { return 0 }})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/medallions/busy/history", nil))
		if rec.Code != http.StatusOK || rec.Body.Len() < n*50 {
			b.Fatalf("status %d, %d bytes: %.200s", rec.Code, rec.Body.Len(), rec.Body.String())
		}
	}
}
