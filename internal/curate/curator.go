package curate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// Curator is the Tier 0 checkpoint.Curator: it extracts items from an
// episode and stores them in the active medallion of exactly the episode's
// scope, creating it on first use.
type Curator struct {
	Store store.Store
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Tier1 is the model curator run after Tier 0; nil means Tier 0 only.
	Tier1 *Tier1
}

// FinishesIdle implements checkpoint.IdleFinisher: with Tier 1 on, a
// session that goes idle with nothing buffered may still hold a backlog
// no model pass has seen.
func (c *Curator) FinishesIdle() bool { return c.Tier1 != nil }

// Unfinished implements checkpoint.IdleFinisher: the sessions whose Tier 1
// backlog is waiting for a pass.
func (c *Curator) Unfinished(ctx context.Context) ([]string, error) {
	if c.Tier1 == nil {
		return nil, nil
	}
	return c.Tier1.unfinished(ctx)
}

func (c *Curator) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

var _ checkpoint.IdleFinisher = (*Curator)(nil)

// scopeCandidates bounds how many medallions containing the scope are
// looked at to find the one with exactly that scope.
const scopeCandidates = 50

// conflictRetries is how often an update that lost a race is redone on
// the newer version before giving up.
const conflictRetries = 3

// Curate implements checkpoint.Curator: Tier 0, and Tier 1 on top when
// one is configured and due (see Tier1). An episode that yields no items
// stores nothing in Tier 0; Tier 1 may still distil it. Only a store
// failure fails the checkpoint: Tier 1's failures leave Tier 0's version
// standing.
func (c *Curator) Curate(ctx context.Context, ep checkpoint.Episode) (checkpoint.Result, error) {
	if c.Tier1 == nil {
		return c.tier0(ctx, ep, Extract(ep))
	}
	return c.Tier1.curate(ctx, c, ep)
}

// tier0 stores items, what the deterministic extractors found in ep.
func (c *Curator) tier0(ctx context.Context, ep checkpoint.Episode, items Items) (checkpoint.Result, error) {
	if items.Empty() {
		return checkpoint.Result{}, nil
	}
	now := c.now
	for range conflictRetries {
		existing, err := c.find(ctx, ep.Scope)
		if err != nil {
			return checkpoint.Result{}, err
		}
		var stored *medallion.Medallion
		if existing == nil {
			stored, err = c.Store.Create(ctx, withTags(Apply(nil, ep.Scope, items, now()), ep.Tags))
			if errors.Is(err, store.ErrExists) {
				// The scope's id is taken by a medallion that is not
				// active or appeared meanwhile: update that one.
				if existing, err = c.Store.Get(ctx, ID(ep.Scope)); err != nil {
					return checkpoint.Result{}, fmt.Errorf("read medallion %s: %w", ID(ep.Scope), err)
				}
				if existing == nil {
					continue
				}
			}
		}
		if existing != nil {
			stored, err = c.Store.Update(ctx, keepUser(existing, withTags(Apply(existing, ep.Scope, items, now()), ep.Tags)))
		}
		switch {
		case errors.Is(err, store.ErrConflict):
			continue
		case err != nil:
			return checkpoint.Result{}, fmt.Errorf("store tier 0 medallion for session %s: %w", ep.SessionID, err)
		}
		return checkpoint.Result{MedallionID: stored.Meta.MedallionID, Version: stored.Meta.Version, Items: Counts(items)}, nil
	}
	return checkpoint.Result{}, fmt.Errorf("store tier 0 medallion for session %s: %w after %d attempts", ep.SessionID, store.ErrConflict, conflictRetries)
}

// find returns the active medallion whose graph nodes are exactly scope,
// or nil.
func (c *Curator) find(ctx context.Context, scope []string) (*medallion.Medallion, error) {
	if len(scope) == 0 {
		return nil, nil
	}
	want := sortedSet(scope)
	ms, err := c.Store.LatestForScope(ctx, medallion.Scope{GraphNodes: want}, scopeCandidates)
	if err != nil {
		return nil, fmt.Errorf("find medallion for scope %v: %w", want, err)
	}
	for _, m := range ms {
		if m.Meta.Status == medallion.StatusActive && slices.Equal(sortedSet(m.Scope.GraphNodes), want) {
			return m, nil
		}
	}
	return nil, nil
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// Counts counts items by kind, as the checkpoint log and answer show what
// was stored, leaving out the empty kinds.
func Counts(it Items) map[string]int {
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

// keepUser is where the user's say over single items (medallionctl pin,
// forget, edit) overrides what Tier 0 and Tier 1 made of existing: next
// keeps every pinned item as the user left it and loses the forgotten
// items the curator brought back (medallion.KeepUserHolds). It is the last
// step before a curated version is stored.
func keepUser(existing, next *medallion.Medallion) *medallion.Medallion {
	medallion.KeepUserHolds(existing, next)
	return next
}

// withTags adds an episode's scope tags (an evidence checkpoint's --tag) to
// m's, sorted and without repeats. Apply chooses the tags of a new
// medallion; these are added to them on every version the episode writes.
func withTags(m *medallion.Medallion, tags []string) *medallion.Medallion {
	if len(tags) == 0 {
		return m
	}
	all := append(slices.Clone(m.Scope.Tags), tags...)
	slices.Sort(all)
	m.Scope.Tags = slices.Compact(all)
	return m
}
