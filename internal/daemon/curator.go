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
// into the store. It adds what the checkpoint log and answer show — the
// items stored, by kind — and writes an evidence checkpoint's tags into the
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
	res, err := c.Curate(ctx, ep)
	if err != nil || res.MedallionID == "" || res.Items != nil {
		return res, err
	}
	// Extract is deterministic, so this counts exactly what was stored.
	res.Items = itemCounts(curate.Extract(ep))
	return res, nil
}

// itemCounts counts items by kind, leaving out the empty kinds.
func itemCounts(it curate.Items) map[string]int {
	out := map[string]int{}
	for k, n := range map[string]int{
		"avoid_repeating": len(it.AvoidRepeating), "invariants": len(it.Invariants),
		"decisions": len(it.Decisions), "open_questions": len(it.OpenQuestions), "closed": len(it.Closed),
		"progress": len(it.Progress), "subsystems": len(it.Subsystems), "entry_points": len(it.EntryPoints),
	} {
		if n > 0 {
			out[k] = n
		}
	}
	return out
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
