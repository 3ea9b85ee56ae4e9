package curate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/distill"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

// AuxStore keeps small records across restarts (store.Badger implements
// it): Tier 1 keeps there the digest of each session's events that no
// model pass has seen yet.
type AuxStore interface {
	GetAux(ctx context.Context, key string) ([]byte, error)
	PutAux(ctx context.Context, key string, value []byte) error
	AuxKeys(ctx context.Context, prefix string) ([]string, error)
}

// Tier1 runs the model curator after Tier 0 (seed 004: Tier 1 after
// Tier 0). Each checkpoint adds its episode's digest to the session's
// backlog; a pass runs at the checkpoints that close a unit of work (idle,
// manual, schedule, posted evidence) or when the backlog reaches
// Threshold tokens, so a busy session is distilled in few calls rather
// than one per count checkpoint. A failed pass leaves Tier 0's version
// standing and the backlog for the next pass; it never fails the
// checkpoint.
type Tier1 struct {
	Distiller *distill.Distiller
	Aux       AuxStore
	// Threshold is the backlog, in estimated tokens, that makes any
	// checkpoint run a pass; zero means the distiller's input budget.
	Threshold int
	Logger    hclog.Logger

	passes, fallbacks, refused atomic.Int64
	mu                         sync.Mutex
	lastErr                    string
	lastErrAt                  time.Time
}

// Tier1Stats is what Tier1 has done since the daemon started.
type Tier1Stats struct {
	Passes, Fallbacks, Refused int64
	LastError                  string
	LastErrorAt                time.Time
}

// Stats returns the counters; safe for concurrent use.
func (t *Tier1) Stats() Tier1Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Tier1Stats{Passes: t.passes.Load(), Fallbacks: t.fallbacks.Load(), Refused: t.refused.Load(),
		LastError: t.lastErr, LastErrorAt: t.lastErrAt}
}

// closing lists the triggers after which the work is at a rest: the model
// sees a unit of work whole there.
var closing = []string{checkpoint.TriggerIdle, checkpoint.TriggerManual, checkpoint.TriggerSchedule, checkpoint.TriggerEvidence}

// maxBacklogPrompts bounds the backlog, in prompts' worth of tokens: a
// model that stays down for days must not turn it into a week of calls
// when it returns. The oldest entries go first, and the log says so.
const maxBacklogPrompts = 8

const backlogPrefix = "tier1/backlog/"

func backlogKey(session string) string { return backlogPrefix + session }

// unfinished lists the sessions whose backlog no pass has taken yet.
func (t *Tier1) unfinished(ctx context.Context) ([]string, error) {
	keys, err := t.Aux.AuxKeys(ctx, backlogPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k[len(backlogPrefix):]
	}
	return out, nil
}

// curate is a checkpoint with Tier 1 on. When no pass is due it is Tier 0
// alone. When one is, Tier 0's items and the model's patch make one new
// version together — a checkpoint is one version, as the seed's
// checkpointSession — and if the model fails, Tier 0's version is stored
// alone.
func (t *Tier1) curate(ctx context.Context, c *Curator, ep checkpoint.Episode) (checkpoint.Result, error) {
	log := t.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	items := Extract(ep)
	events := make([]transcript.Event, 0, len(ep.Events))
	for i := range ep.Events {
		events = append(events, ep.Events[i].Event)
	}
	backlog, err := t.load(ctx, ep.SessionID)
	if err != nil {
		t.fail(log, ep, "read backlog", err)
		return c.tier0(ctx, ep, items)
	}
	backlog = merge(backlog, distill.Digest(events))
	limit := t.Distiller.MaxInputTokens
	if limit <= 0 {
		limit = distill.DefaultMaxInputTokens
	}
	n := distill.TotalTokens(backlog)
	if n > maxBacklogPrompts*limit {
		cut := 0
		for n > maxBacklogPrompts*limit && cut < len(backlog) {
			n -= backlog[cut].Tokens()
			cut++
		}
		log.Warn("tier 1 backlog over its bound: oldest entries dropped", "session", ep.SessionID, "dropped", cut)
		backlog = backlog[cut:]
	}
	threshold := t.Threshold
	if threshold <= 0 {
		threshold = limit
	}
	due := slices.Contains(closing, ep.Trigger) || n >= threshold
	if !due || len(backlog) == 0 || len(ep.Scope) == 0 {
		if err := t.save(ctx, ep.SessionID, backlog); err != nil {
			t.fail(log, ep, "save backlog", err)
		}
		return c.tier0(ctx, ep, items)
	}
	// Kept until the pass is stored: a failure or a crash before then
	// leaves it for the next pass.
	if err := t.save(ctx, ep.SessionID, backlog); err != nil {
		t.fail(log, ep, "save backlog", err)
		return c.tier0(ctx, ep, items)
	}

	existing, err := c.find(ctx, ep.Scope)
	if err != nil {
		return checkpoint.Result{}, err
	}
	op, base := "update", existing
	if existing == nil {
		op = "generate"
	}
	if !items.Empty() || base == nil {
		base = Apply(existing, ep.Scope, items, c.now())
	}
	out, dr, err := t.Distiller.Distill(ctx, base, ep.Scope, backlog)
	if err != nil {
		t.fail(log, ep, op, err)
		return c.tier0(ctx, ep, items)
	}
	out.Meta.UpdatedAt = medallion.FormatTime(c.now())
	out = keepUser(existing, withTags(out, ep.Tags))
	var stored *medallion.Medallion
	if existing == nil {
		stored, err = c.Store.Create(ctx, out)
	} else {
		stored, err = c.Store.Update(ctx, out)
	}
	if err != nil {
		// A conflict means someone (a review action) wrote meanwhile:
		// the backlog stays for the next pass, which starts from their
		// version, and Tier 0 stores this episode's items now.
		t.fail(log, ep, "store "+op, err)
		return c.tier0(ctx, ep, items)
	}
	if err := t.save(ctx, ep.SessionID, nil); err != nil {
		log.Error("tier 1 backlog not cleared", "session", ep.SessionID, "error", err)
	}
	t.passes.Add(1)
	t.refused.Add(int64(dr.Applied.Refused))
	log.Info("tier 1 pass", "session", ep.SessionID, "scope", ep.Scope, "op", op, "medallion", stored.Meta.MedallionID,
		"version", stored.Meta.Version, "calls", dr.Calls, "repairs", dr.Repairs, "input_tokens", dr.InputTokens,
		"output_tokens", dr.OutputTokens, "added", dr.Applied.Added, "revised", dr.Applied.Revised,
		"dropped", dr.Applied.Dropped, "resolved", dr.Applied.Resolved, "refused", dr.Applied.Refused)
	counts := Counts(items)
	for k, v := range map[string]int{"tier1_added": dr.Applied.Added, "tier1_revised": dr.Applied.Revised,
		"tier1_dropped": dr.Applied.Dropped + dr.Applied.Resolved} {
		if v > 0 {
			counts[k] = v
		}
	}
	return checkpoint.Result{MedallionID: stored.Meta.MedallionID, Version: stored.Meta.Version, Items: counts}, nil
}

func (t *Tier1) fail(log hclog.Logger, ep checkpoint.Episode, op string, err error) {
	t.fallbacks.Add(1)
	t.mu.Lock()
	t.lastErr, t.lastErrAt = fmt.Sprintf("%s for scope %v: %v", op, ep.Scope, err), time.Now()
	t.mu.Unlock()
	level := log.Warn
	// A stop is no failure; a full disk the daemon has logged once when
	// writing stopped, and the checkpoint, refused too, logs its own
	// failure: a line here each time would repeat both.
	if errors.Is(err, context.Canceled) || errors.Is(err, store.ErrDiskFull) {
		level = log.Debug
	}
	level("tier 1 failed; the tier 0 version stands", "session", ep.SessionID, "scope", ep.Scope, "op", op, "error", err)
}

func (t *Tier1) load(ctx context.Context, session string) ([]distill.Entry, error) {
	b, err := t.Aux.GetAux(ctx, backlogKey(session))
	if err != nil || b == nil {
		return nil, err
	}
	var out []distill.Entry
	if err := json.Unmarshal(b, &out); err != nil {
		// A damaged backlog costs the model some context, never the
		// checkpoint: start over from this episode.
		return nil, nil
	}
	return out, nil
}

func (t *Tier1) save(ctx context.Context, session string, backlog []distill.Entry) error {
	if len(backlog) == 0 {
		return t.Aux.PutAux(ctx, backlogKey(session), nil)
	}
	b, err := json.Marshal(backlog)
	if err != nil {
		return err
	}
	return t.Aux.PutAux(ctx, backlogKey(session), b)
}

// merge appends the new entries whose events the backlog does not hold
// yet: an episode curated again after a crash adds nothing twice.
func merge(backlog, add []distill.Entry) []distill.Entry {
	seen := map[string]bool{}
	for _, e := range backlog {
		for _, id := range e.EventIDs {
			seen[id] = true
		}
	}
	for _, e := range add {
		if len(e.EventIDs) > 0 && seen[e.EventIDs[0]] {
			continue
		}
		backlog = append(backlog, e)
	}
	return backlog
}
