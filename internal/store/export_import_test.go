package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// exportAll collects what Export hands out.
func exportAll(t *testing.T, s *store.Badger) []*medallion.Medallion {
	t.Helper()
	var out []*medallion.Medallion
	if err := s.Export(context.Background(), func(m *medallion.Medallion) error { out = append(out, m); return nil }); err != nil {
		t.Fatalf("export: %v", err)
	}
	return out
}

// TestExportImport: every version of every medallion, with its status and
// evidence, goes from one store to another unchanged, and the new store
// answers queries from its indexes.
func TestExportImport(t *testing.T) {
	ctx := context.Background()
	src := openBadger(t, t.TempDir(), store.Options{GCInterval: -1})
	for i := range 5 {
		id := fmt.Sprintf("m%d", i)
		m, err := src.Create(ctx, newMedallion(id, []string{"repo:x", fmt.Sprintf("mod:%d", i)}, []string{"t"}))
		if err != nil {
			t.Fatal(err)
		}
		for v := 1; v <= i; v++ {
			m.Summary.HighLevel = fmt.Sprintf("version %d of %s", v+1, id)
			m.Evidence = []medallion.Evidence{{Item: "invariant", Text: "x", SessionID: "s", EventIDs: []string{fmt.Sprintf("e%d", v)}}}
			if v == i {
				m.Meta.Status = medallion.StatusStale
			}
			if m, err = src.Update(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	exported := exportAll(t, src)
	if len(exported) != 1+2+3+4+5 {
		t.Fatalf("exported %d versions, want 15", len(exported))
	}

	dst := openBadger(t, t.TempDir(), store.Options{GCInterval: -1})
	g := store.NewGroupVersions(func(vs []*medallion.Medallion) error { return dst.Import(ctx, vs) })
	for _, m := range exported {
		if err := g.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := exportAll(t, dst); !reflect.DeepEqual(got, exported) {
		t.Errorf("a second export differs from the first")
	}
	for i := range 5 {
		id := fmt.Sprintf("m%d", i)
		want, _ := src.Get(ctx, id)
		got, err := dst.Get(ctx, id)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("get %s: %+v, %v; want %+v", id, got, err, want)
		}
		wantH, _ := src.History(ctx, id)
		if gotH, err := dst.History(ctx, id); err != nil || !reflect.DeepEqual(gotH, wantH) {
			t.Errorf("history %s: %+v, %v", id, gotH, err)
		}
	}
	if n, _ := dst.Count(ctx); n != 5 {
		t.Errorf("count %d, want 5", n)
	}
	got, err := dst.LatestForScope(ctx, medallion.Scope{GraphNodes: []string{"mod:3"}}, 10)
	if err != nil || len(got) != 1 || got[0].Meta.MedallionID != "m3" || got[0].Meta.Version != 4 {
		t.Errorf("scope query after import: %+v, %v", got, err)
	}

	// An import never overwrites.
	if err := dst.Import(ctx, exported[:1]); !errors.Is(err, store.ErrExists) {
		t.Errorf("import of a stored id: %v, want ErrExists", err)
	}
}

func TestImportRefusesBadVersions(t *testing.T) {
	ctx := context.Background()
	s := openBadger(t, t.TempDir(), store.Options{GCInterval: -1})
	v := func(id string, n int) *medallion.Medallion {
		m := newMedallion(id, []string{"repo:x"}, nil)
		m.Meta.Version, m.Meta.Status = n, medallion.StatusActive
		m.Meta.CreatedAt, m.Meta.UpdatedAt = "2026-03-01T12:00:00.000000Z", fmt.Sprintf("2026-03-01T12:00:0%d.000000Z", n)
		return m
	}
	bad := v("b", 2)
	bad.Meta.Status = "old"
	tests := []struct {
		name     string
		versions []*medallion.Medallion
		want     string
	}{
		{"a gap", []*medallion.Medallion{v("a", 1), v("a", 3)}, "version 2 is numbered 3"},
		{"no version 1", []*medallion.Medallion{v("a", 2)}, "version 1 is numbered 2"},
		{"two ids", []*medallion.Medallion{v("a", 1), v("c", 2)}, `version 2 belongs to "c"`},
		{"invalid", []*medallion.Medallion{v("b", 1), bad}, "meta.status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Import(ctx, tt.versions)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("import: %v, want %q", err, tt.want)
			}
		})
	}
	if n, _ := s.Count(ctx); n != 0 {
		t.Errorf("count %d after refused imports", n)
	}
}
