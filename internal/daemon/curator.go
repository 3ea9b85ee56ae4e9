package daemon

import (
	"context"
	"slices"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/curate"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// tier0 is the daemon's checkpoint.Curator: Tier 0 curation (curate.Curator)
// into the store; it writes an evidence checkpoint's tags into the
// medallion's scope.
type tier0 struct {
	st store.Store
}

var _ checkpoint.Curator = tier0{}

// Curate implements checkpoint.Curator.
func (t tier0) Curate(ctx context.Context, ep checkpoint.Episode) (checkpoint.Result, error) {
	c := curate.Curator{Store: t.st}
	if len(ep.Tags) > 0 {
		c.Store = taggedStore{Store: t.st, tags: ep.Tags}
	}
	return c.Curate(ctx, ep)
}

// taggedStore adds tags to the scope of every medallion it writes: the
// curator chooses the scope's tags for a new medallion, and an evidence
// checkpoint's --tag adds to them, on the version it creates or updates.
type taggedStore struct {
	store.Store
	tags []string
}

func (s taggedStore) Create(ctx context.Context, m *medallion.Medallion) (*medallion.Medallion, error) {
	return s.Store.Create(ctx, s.tag(m))
}

func (s taggedStore) Update(ctx context.Context, m *medallion.Medallion) (*medallion.Medallion, error) {
	return s.Store.Update(ctx, s.tag(m))
}

// tag returns a copy of m whose scope tags include s.tags, sorted.
func (s taggedStore) tag(m *medallion.Medallion) *medallion.Medallion {
	m = m.Clone()
	tags := append(slices.Clone(m.Scope.Tags), s.tags...)
	slices.Sort(tags)
	m.Scope.Tags = slices.Compact(tags)
	return m
}
