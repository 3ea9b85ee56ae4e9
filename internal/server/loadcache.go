package server

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/hookcache"
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
//
// The answers the SessionStart hook asked for are also kept as files it
// reads without a round trip (internal/hookcache). A file lives exactly as
// long as the kept answer it copies: written only while that answer is
// kept, removed under the same lock that drops it.
const (
	// maxLoadCacheEntries bounds the scopes kept; past it, all are
	// dropped (a daemon sees a few repositories a day).
	maxLoadCacheEntries = 32
	// maxLoadCacheBody: bigger answers (large budgets, by hand) are not
	// kept, so the bodies stay under 2 MiB (the keys, a scope's names,
	// add at most a request header's size each).
	maxLoadCacheBody = 64 << 10
	// maxHookFiles bounds the files kept for one answer: the cwds of one
	// repository a hook ran in.
	maxHookFiles = 64
)

// loadCache holds encoded GET /v1/load answers. A nil *loadCache keeps
// nothing: a server whose store cannot tell it about writes renders every
// load.
type loadCache struct {
	mu      sync.Mutex
	writes  uint64 // versions written since the server started
	entries map[string]*loadEntry
	// files keeps the hook's answers as files; nil keeps none (no
	// folder, or a file could not be removed).
	files *hookcache.Writer
	owner map[string]*loadEntry // the entry each file copies, by name
	// dropped hears of the files a write removed (c.mu is held: it must
	// not block), to render them again (rewarm.go); nil: nobody.
	dropped func([]hookLoad)
	log     hclog.Logger
	// keeps: files was set at the start (it may be nil since).
	keeps bool
	// keeping counts the keepFileLater goroutines running; once settled
	// (under keepMu), none starts.
	keepMu  sync.Mutex
	settled bool
	keeping sync.WaitGroup
}

// loadEntry is one kept answer, the scope it was rendered for, and for
// the hook: the save file's text ("" when no medallion is in the scope)
// and the answer files that copy it.
type loadEntry struct {
	scope medallion.Scope
	body  []byte
	text  string
	files []hookFile
}

// hookLoad is a load as the SessionStart hook makes it: a cwd, at a
// budget (the default limit, markdown).
type hookLoad struct {
	cwd    string
	budget int
}

// hookFile is an answer file: its name and the load it answers.
type hookFile struct {
	name string
	hookLoad
}

func newLoadCache(files *hookcache.Writer, log hclog.Logger) *loadCache {
	return &loadCache{entries: make(map[string]*loadEntry), files: files, keeps: files != nil, owner: make(map[string]*loadEntry), log: log}
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

// get returns the kept answer for key and its hook text, or nil, and the
// write count to hand to put with an answer rendered from now on.
func (c *loadCache) get(key string) (body []byte, text string, writes uint64) {
	if c == nil {
		return nil, "", 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		return e.body, e.text, c.writes
	}
	return nil, "", c.writes
}

// put keeps body, and text for the hook, for key unless a version was
// written since get returned writes: the answer may then predate it.
func (c *loadCache) put(key string, scope medallion.Scope, body []byte, text string, writes uint64) {
	if c == nil || len(body) > maxLoadCacheBody {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writes != writes {
		return
	}
	old := c.entries[key] // the same answer, rendered twice at once
	if old == nil && len(c.entries) >= maxLoadCacheEntries {
		for _, e := range c.entries {
			c.drop(e, false)
		}
		clear(c.entries)
	}
	scope = medallion.Scope{GraphNodes: slices.Clone(scope.GraphNodes), Tags: slices.Clone(scope.Tags)}
	e := &loadEntry{scope: scope, body: body, text: text}
	if old != nil {
		e.files = old.files
		for _, f := range e.files {
			c.owner[f.name] = e
		}
	}
	c.entries[key] = e
}

// keepFileLater is keepFile on its own goroutine: the hook that asked
// gets its answer without waiting for the file (a few system calls, and
// a scope derived from the file system, which is done before the lock:
// a folder on a mount that hangs must not hold up the store's writes,
// which take the lock in written). settle waits for them.
//
// A request whose context holds a list for work after its answer (the
// hook's socket, afterAnswerKey) gets the work there instead.
func (c *loadCache) keepFileLater(ctx context.Context, key string, writes uint64, cwd string, budget int, nodes []string) {
	if c == nil || !c.keeps {
		return
	}
	c.keepMu.Lock()
	defer c.keepMu.Unlock()
	if c.settled {
		return
	}
	c.keeping.Add(1)
	keep := func() {
		defer c.keeping.Done()
		if hookcache.Keepable(cwd, nodes) {
			c.keepFile(key, writes, cwd, budget, nodes)
		}
	}
	if after, ok := ctx.Value(afterAnswerKey{}).(*[]func()); ok {
		*after = append(*after, keep)
		return
	}
	go keep()
}

// settle waits for the keepFileLater goroutines started so far; final,
// as the server shuts down, it also starts no more.
func (c *loadCache) settle(final bool) {
	if c == nil {
		return
	}
	if final {
		c.keepMu.Lock()
		c.settled = true
		c.keepMu.Unlock()
	}
	c.keeping.Wait()
}

// keepFile writes the answer kept for key as the hook's file for cwd at
// budget, resolved to nodes (hookcache.Keepable), unless it is there
// already. Only the answer get's writes came with: none was written since
// and it is still kept.
func (c *loadCache) keepFile(key string, writes uint64, cwd string, budget int, nodes []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if c.files == nil || e == nil || c.writes != writes {
		return
	}
	name := c.files.NameFor(cwd, budget, nodes)
	owned := c.owner[name] == e
	if owned && c.files.Has(name) {
		return // kept already: a load by hand, or a hook that could not use it
	}
	if !owned && len(e.files) >= maxHookFiles {
		return
	}
	if _, err := c.files.Put(hookcache.Answer{CWD: cwd, Budget: budget, Nodes: nodes, Text: e.text}); err != nil {
		c.log.Warn("hook answer not kept; the hook asks the daemon", "error", err)
		return
	}
	if !owned {
		if prev := c.owner[name]; prev != nil {
			// The cwd's scope changed: the file copies this entry now.
			prev.files = slices.DeleteFunc(prev.files, func(f hookFile) bool { return f.name == name })
		}
		c.owner[name] = e
		e.files = append(e.files, hookFile{name, hookLoad{cwd, budget}})
	}
}

// drop removes the files of e, whose answer is no longer kept (c.mu is
// held), and when a write dropped it (written), has them rendered again.
// A file that cannot be removed would be served stale, so no file is kept
// from then on and the folder is emptied as far as it can be.
func (c *loadCache) drop(e *loadEntry, written bool) {
	if len(e.files) == 0 {
		return
	}
	for _, f := range e.files {
		delete(c.owner, f.name)
		if c.files == nil {
			continue
		}
		if err := c.files.Remove(f.name); err != nil {
			c.log.Error("a kept hook answer could not be removed; no more are kept until the daemon restarts", "error", err)
			if err := c.files.Close(); err != nil {
				c.log.Error("hook answers folder not emptied: hooks may read stale save files until the daemon restarts", "error", err)
			}
			c.files = nil
		}
	}
	if written && c.files != nil && c.dropped != nil {
		loads := make([]hookLoad, len(e.files))
		for i, f := range e.files {
			loads[i] = f.hookLoad
		}
		c.dropped(loads)
	}
	e.files = nil
}

// written drops every kept answer whose scope prev or cur (a version
// written, and the one before it; either may be nil) may be in.
func (c *loadCache) written(prev, cur *medallion.Medallion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	for k, e := range c.entries {
		if touches(prev, e.scope) || touches(cur, e.scope) {
			c.drop(e, true)
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
