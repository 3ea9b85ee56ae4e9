package server

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/medallionhq/medallion/internal/medallion"
)

// The SessionStart hook asks for the same load before every agent session,
// and the medallions of a scope change only at checkpoints: rendering it
// anew each time was most of the daemon's part of the hook (about 0.4 ms
// of 0.6). So GET /v1/load keeps each answer, encoded, per scope and
// parameters, and drops it when a version of a medallion of that scope is
// written; the store says so (store.Badger.WatchWrites) before the write
// returns to its writer.
//
// Never stale: an answer is kept only if no version was written while it
// was rendered (writes counts them), and every write drops the kept
// answers of each scope its medallion was in, before and after. A
// medallion is in a load's scope when it has all its nodes and one of its
// tags; a write drops every answer that names any node or any tag of the
// medallion, which is more than that, never less.
const (
	// maxLoadCacheEntries bounds the scopes kept; past it, all are
	// dropped (a daemon sees a few repositories a day).
	maxLoadCacheEntries = 32
	// maxLoadCacheBody: bigger answers (large budgets, by hand) are not
	// kept, so the bodies stay under 2 MiB (the keys, a scope's names,
	// add at most a request header's size each).
	maxLoadCacheBody = 64 << 10
)

// loadCache holds encoded GET /v1/load answers. A nil *loadCache keeps
// nothing: a server whose store cannot tell it about writes renders every
// load.
type loadCache struct {
	mu      sync.Mutex
	writes  uint64 // versions written since the server started
	entries map[string]*loadEntry
}

// loadEntry is one kept answer and the scope it was rendered for.
type loadEntry struct {
	scope medallion.Scope
	body  []byte
}

func newLoadCache() *loadCache {
	return &loadCache{entries: make(map[string]*loadEntry)}
}

// loadKey names a load's parameters: the resolved scope, in order (the
// answer repeats it), limit, budget and format.
func loadKey(scope medallion.Scope, limit, budget int, format string) string {
	var b strings.Builder
	for _, n := range scope.GraphNodes {
		b.WriteString("n" + strconv.Quote(n))
	}
	for _, t := range scope.Tags {
		b.WriteString("t" + strconv.Quote(t))
	}
	b.WriteString(strconv.Itoa(limit) + "\x00" + strconv.Itoa(budget) + "\x00" + format)
	return b.String()
}

// get returns the kept answer for key, or nil, and the write count to
// hand to put with an answer rendered from now on.
func (c *loadCache) get(key string) (body []byte, writes uint64) {
	if c == nil {
		return nil, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		return e.body, c.writes
	}
	return nil, c.writes
}

// put keeps body for key unless a version was written since get returned
// writes: the answer may then predate it.
func (c *loadCache) put(key string, scope medallion.Scope, body []byte, writes uint64) {
	if c == nil || len(body) > maxLoadCacheBody {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writes != writes {
		return
	}
	if len(c.entries) >= maxLoadCacheEntries {
		clear(c.entries)
	}
	scope = medallion.Scope{GraphNodes: slices.Clone(scope.GraphNodes), Tags: slices.Clone(scope.Tags)}
	c.entries[key] = &loadEntry{scope: scope, body: body}
}

// written drops every kept answer whose scope prev or cur (a version
// written, and the one before it; either may be nil) may be in.
func (c *loadCache) written(prev, cur *medallion.Medallion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	for k, e := range c.entries {
		if touches(prev, e.scope) || touches(cur, e.scope) {
			delete(c.entries, k)
		}
	}
}

// touches reports whether m names any node or any tag of scope.
func touches(m *medallion.Medallion, scope medallion.Scope) bool {
	if m == nil {
		return false
	}
	for _, n := range scope.GraphNodes {
		if slices.Contains(m.Scope.GraphNodes, n) {
			return true
		}
	}
	for _, t := range scope.Tags {
		if slices.Contains(m.Scope.Tags, t) {
			return true
		}
	}
	return false
}
