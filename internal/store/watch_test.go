package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// TestWatchWrites: a watcher hears of every version Create, Update and
// Import write, with the version before it, before the write returns.
func TestWatchWrites(t *testing.T) {
	s := openBadger(t, t.TempDir(), store.Options{})
	ctx := context.Background()
	var heard []string
	s.WatchWrites(func(prev, cur *medallion.Medallion) {
		p := "-"
		if prev != nil {
			p = fmt.Sprintf("%s@%d", prev.Meta.MedallionID, prev.Meta.Version)
		}
		heard = append(heard, fmt.Sprintf("%s>%s@%d", p, cur.Meta.MedallionID, cur.Meta.Version))
	})
	m, err := s.Create(ctx, newMedallion("a", []string{"repo:muse"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, m); err == nil { // based on version 1 again: refused
		t.Fatal("a stale update was stored")
	}
	v1 := newMedallion("b", []string{"repo:muse"}, nil)
	v1.Meta.Version, v1.Meta.Status = 1, medallion.StatusActive
	v1.Meta.CreatedAt, v1.Meta.UpdatedAt = "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z"
	v2 := v1.Clone()
	v2.Meta.Version, v2.Meta.UpdatedAt = 2, "2025-01-02T00:00:00Z"
	if err := s.Import(ctx, []*medallion.Medallion{v1, v2}); err != nil {
		t.Fatal(err)
	}
	want := []string{"->a@1", "a@1>a@2", "->b@1", "b@1>b@2"}
	if fmt.Sprint(heard) != fmt.Sprint(want) {
		t.Errorf("heard %q, want %q", heard, want)
	}
}
