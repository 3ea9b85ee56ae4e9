// Package scope decides which graph nodes an agent session's episodes
// belong to, from the session's working directory.
//
// The order of precedence:
//
//  1. Configured rules (config scope_rule blocks): a session whose cwd is a
//     rule's folder or below it gets the rule's nodes; when several rules
//     match, the one with the longest folder wins.
//  2. The git repository: the nearest enclosing folder holding a .git entry
//     (a folder in a clone, a file in a worktree or submodule) gives
//     "repo:<name of that folder>". A linked worktree (its .git file points
//     into "<main>/.git/worktrees/") is named after its main repository, so
//     a worktree of muse checked out as ~/wt/muse-fix is still "repo:muse".
//  3. Outside any repository: "dir:<name of the cwd>", so the episodes of
//     work in a plain folder are still kept together.
//
// A session without a cwd (or with a relative one) gets no scope; the store
// keeps whatever scope it had.
//
// A cwd's repository rarely changes, and every ingested event asks, so
// answers are cached for a while (Options.TTL) in a bounded cache; the cwd
// of a transcript may no longer exist, or exist only on another machine,
// in which case the search climbs through the folders that do exist.
package scope

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Rule maps a folder and everything below it to graph nodes.
type Rule struct {
	// Path is an absolute, clean folder path.
	Path string
	// Nodes are the graph nodes, such as "repo:muse", "module:cli".
	Nodes []string
}

// Defaults for Options.
const (
	DefaultTTL       = 5 * time.Minute
	DefaultCacheSize = 4096
)

// Options tunes a Resolver; the zero value gives the defaults.
type Options struct {
	// TTL is how long an answer derived from the file system is reused;
	// a `git init` or a moved repository is seen after at most this long.
	TTL time.Duration
	// CacheSize bounds the number of cached cwds.
	CacheSize int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Resolver maps working directories to graph nodes. It is safe for
// concurrent use.
type Resolver struct {
	rules []Rule // longest path first
	ttl   time.Duration
	max   int
	now   func() time.Time

	mu    sync.Mutex
	cache map[string]entry
}

type entry struct {
	nodes   []string
	expires time.Time
}

// New returns a Resolver with rules (in any order) and opts.
func New(rules []Rule, opts Options) *Resolver {
	r := &Resolver{
		ttl:   opts.TTL,
		max:   opts.CacheSize,
		now:   opts.Now,
		cache: map[string]entry{},
	}
	if r.ttl <= 0 {
		r.ttl = DefaultTTL
	}
	if r.max <= 0 {
		r.max = DefaultCacheSize
	}
	if r.now == nil {
		r.now = time.Now
	}
	for _, rule := range rules {
		r.rules = append(r.rules, Rule{Path: filepath.Clean(rule.Path), Nodes: slices.Clone(rule.Nodes)})
	}
	// Longest first, so the first match is the most specific; stable, so
	// of two rules for the same folder the first in the config wins.
	slices.SortStableFunc(r.rules, func(a, b Rule) int { return len(b.Path) - len(a.Path) })
	return r
}

// Resolve returns the graph nodes for a session working in cwd, or nil when
// cwd is empty or relative. The returned slice must not be modified.
func (r *Resolver) Resolve(cwd string) []string {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil
	}
	cwd = filepath.Clean(cwd)
	for _, rule := range r.rules {
		if within(cwd, rule.Path) {
			return rule.Nodes
		}
	}
	now := r.now()
	r.mu.Lock()
	e, ok := r.cache[cwd]
	r.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.nodes
	}
	nodes := Derive(cwd)
	r.mu.Lock()
	if len(r.cache) >= r.max {
		r.evict(now)
	}
	r.cache[cwd] = entry{nodes: nodes, expires: now.Add(r.ttl)}
	r.mu.Unlock()
	return nodes
}

// evict makes room: expired entries go first; if none had expired, the
// whole cache is dropped (a daemon sees a few hundred cwds, so reaching the
// bound at all means something unusual, and re-deriving is cheap).
func (r *Resolver) evict(now time.Time) {
	for k, e := range r.cache {
		if !now.Before(e.expires) {
			delete(r.cache, k)
		}
	}
	if len(r.cache) >= r.max {
		clear(r.cache)
	}
}

// Derive gives the graph nodes of cwd from the file system alone, without
// rules or cache: the repository holding it, else the folder's name. The
// SessionStart hook checks with it that a kept answer still names the
// repository a cwd is in (internal/hookcache).
func Derive(cwd string) []string {
	if root, name := GitRoot(cwd); root != "" {
		return []string{"repo:" + name}
	}
	return []string{"dir:" + baseName(cwd)}
}

// GitRoot returns the nearest folder at or above dir that holds a .git entry
// and the repository's name: that folder's name, or for a linked worktree
// the name of its main repository. It returns "", "" outside any repository.
func GitRoot(dir string) (root, name string) {
	for d := filepath.Clean(dir); ; {
		git := filepath.Join(d, ".git")
		if fi, err := os.Lstat(git); err == nil {
			name = baseName(d)
			if fi.Mode().IsRegular() {
				if main := worktreeMain(git); main != "" {
					name = baseName(main)
				}
			}
			return d, name
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
		}
		d = parent
	}
}

// worktreeMain reads a .git file ("gitdir: <path>") and, when it points into
// "<main>/.git/worktrees/<name>", returns <main>.
func worktreeMain(gitFile string) string {
	f, err := os.Open(gitFile)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(gitFile), gitdir)
	}
	gitdir = filepath.ToSlash(filepath.Clean(gitdir))
	i := strings.LastIndex(gitdir, "/.git/worktrees/")
	if i <= 0 {
		return ""
	}
	return filepath.FromSlash(gitdir[:i])
}

// baseName is the folder's own name; "/" for the file system root.
func baseName(p string) string {
	b := filepath.Base(p)
	if b == "." || b == "" {
		return string(filepath.Separator)
	}
	return b
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}
