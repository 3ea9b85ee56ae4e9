package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/medallionhq/medallion/internal/store"
)

func TestIDs(t *testing.T) {
	ctx := context.Background()
	s := openBadger(t, t.TempDir(), store.Options{GCInterval: -1})
	if ids, err := s.IDs(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("IDs of an empty store = %q, %v", ids, err)
	}
	for _, id := range []string{"b", "a:x", "c"} {
		if _, err := s.Create(ctx, newMedallion(id, []string{"repo:x"}, nil)); err != nil {
			t.Fatal(err)
		}
	}
	// An update adds a version, not an id.
	m, err := s.Get(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	ids, err := s.IDs(ctx)
	if err != nil || !slices.Equal(ids, []string{"a:x", "b", "c"}) {
		t.Errorf("IDs = %q, %v", ids, err)
	}
	s.Close()
	if _, err := s.IDs(ctx); err == nil {
		t.Error("IDs after Close succeeded")
	}
}
