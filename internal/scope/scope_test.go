package scope

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree builds, under a temp dir:
//
//	work/muse/.git/                  a clone
//	work/muse/cli/cmd/
//	work/muse/vendor/lib/.git        a submodule (.git file, modules path)
//	wt/muse-fix/.git                 a worktree of muse (.git file)
//	wt/muse-fix/src/
//	wt/rel/.git                      a worktree with a relative gitdir
//	plain/notes/
func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mkdir(t, root, "work", "muse", ".git", "worktrees", "muse-fix")
	mkdir(t, root, "work", "muse", ".git", "worktrees", "rel")
	mkdir(t, root, "work", "muse", "cli", "cmd")
	mkdir(t, root, "work", "muse", "vendor", "lib")
	writeFile(t, filepath.Join(root, "work", "muse", "vendor", "lib", ".git"), "gitdir: ../../.git/modules/lib\n")
	mkdir(t, root, "wt", "muse-fix", "src")
	writeFile(t, filepath.Join(root, "wt", "muse-fix", ".git"),
		"gitdir: "+filepath.Join(root, "work", "muse", ".git", "worktrees", "muse-fix")+"\n")
	mkdir(t, root, "wt", "rel")
	writeFile(t, filepath.Join(root, "wt", "rel", ".git"), "gitdir: ../../work/muse/.git/worktrees/rel")
	mkdir(t, root, "plain", "notes")
	return root
}

func TestResolve(t *testing.T) {
	root := tree(t)
	r := New([]Rule{
		{Path: filepath.Join(root, "work", "muse"), Nodes: []string{"repo:muse", "team:audio"}},
		{Path: filepath.Join(root, "work", "muse", "cli"), Nodes: []string{"repo:muse", "module:cli"}},
		{Path: filepath.Join(root, "work", "muse", "cli") + "/", Nodes: []string{"never:used"}},
	}, Options{})
	tests := []struct {
		name string
		cwd  string
		want []string
	}{
		{"longest rule wins", filepath.Join(root, "work", "muse", "cli", "cmd"), []string{"repo:muse", "module:cli"}},
		{"rule folder itself", filepath.Join(root, "work", "muse", "cli"), []string{"repo:muse", "module:cli"}},
		{"shorter rule", filepath.Join(root, "work", "muse", "vendor"), []string{"repo:muse", "team:audio"}},
		{"rule over a submodule's own repo", filepath.Join(root, "work", "muse", "vendor", "lib"), []string{"repo:muse", "team:audio"}},
		{"name prefix is not a folder prefix", filepath.Join(root, "work", "muse", "client"), []string{"repo:muse", "team:audio"}},
		{"unclean cwd", filepath.Join(root, "work", "muse", "cli") + "/./cmd/../cmd/", []string{"repo:muse", "module:cli"}},
		{"worktree named after its main repo", filepath.Join(root, "wt", "muse-fix", "src"), []string{"repo:muse"}},
		{"worktree with a relative gitdir", filepath.Join(root, "wt", "rel"), []string{"repo:muse"}},
		{"outside any repo", filepath.Join(root, "plain", "notes"), []string{"dir:notes"}},
		{"missing folder inside a repo", filepath.Join(root, "wt", "muse-fix", "gone", "deeper"), []string{"repo:muse"}},
		{"missing folder outside", filepath.Join(root, "plain", "gone"), []string{"dir:gone"}},
		{"empty", "", nil},
		{"relative", "work/muse", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Resolve(tt.cwd); !slices.Equal(got, tt.want) {
				t.Errorf("Resolve(%q) = %q, want %q", tt.cwd, got, tt.want)
			}
		})
	}
}

func TestResolveWithoutRules(t *testing.T) {
	root := tree(t)
	r := New(nil, Options{})
	tests := []struct {
		cwd  string
		want []string
	}{
		{filepath.Join(root, "work", "muse", "cli", "cmd"), []string{"repo:muse"}},
		{filepath.Join(root, "work", "muse"), []string{"repo:muse"}},
		{filepath.Join(root, "work", "muse", "vendor", "lib"), []string{"repo:lib"}}, // a submodule is its own repo
		{filepath.Join(root, "work"), []string{"dir:work"}},
	}
	for _, tt := range tests {
		if got := r.Resolve(tt.cwd); !slices.Equal(got, tt.want) {
			t.Errorf("Resolve(%q) = %q, want %q", tt.cwd, got, tt.want)
		}
	}
}

func TestGitRoot(t *testing.T) {
	root := tree(t)
	tests := []struct {
		dir, root, name string
	}{
		{filepath.Join(root, "work", "muse", "cli"), filepath.Join(root, "work", "muse"), "muse"},
		{filepath.Join(root, "wt", "muse-fix"), filepath.Join(root, "wt", "muse-fix"), "muse"},
		{filepath.Join(root, "plain"), "", ""},
	}
	for _, tt := range tests {
		gotRoot, gotName := GitRoot(tt.dir)
		if gotRoot != tt.root || gotName != tt.name {
			t.Errorf("GitRoot(%s) = %q, %q; want %q, %q", tt.dir, gotRoot, gotName, tt.root, tt.name)
		}
	}
}

// TestCache: an answer is reused until it expires, so a repository created
// later is seen after the TTL, not before.
func TestCache(t *testing.T) {
	root := t.TempDir()
	proj := mkdir(t, root, "proj", "sub")
	now := time.Unix(1000, 0)
	r := New(nil, Options{TTL: time.Minute, Now: func() time.Time { return now }})
	if got := r.Resolve(proj); !slices.Equal(got, []string{"dir:sub"}) {
		t.Fatalf("before git init: %q", got)
	}
	mkdir(t, root, "proj", ".git")
	if got := r.Resolve(proj); !slices.Equal(got, []string{"dir:sub"}) {
		t.Errorf("within the TTL the cached answer stays: %q", got)
	}
	now = now.Add(time.Minute)
	if got := r.Resolve(proj); !slices.Equal(got, []string{"repo:proj"}) {
		t.Errorf("after the TTL: %q, want repo:proj", got)
	}
}

func TestCacheBounded(t *testing.T) {
	root := t.TempDir()
	now := time.Unix(1000, 0)
	r := New(nil, Options{CacheSize: 8, Now: func() time.Time { return now }})
	for i := range 100 {
		r.Resolve(filepath.Join(root, "d", string(rune('a'+i%26)), string(rune('a'+i/26))))
		if n := len(r.cache); n > 8 {
			t.Fatalf("cache holds %d entries, bound is 8", n)
		}
	}
	// Expired entries are dropped before live ones.
	r = New(nil, Options{CacheSize: 2, TTL: time.Minute, Now: func() time.Time { return now }})
	r.Resolve(filepath.Join(root, "old"))
	now = now.Add(2 * time.Minute)
	r.Resolve(filepath.Join(root, "new1"))
	r.Resolve(filepath.Join(root, "new2"))
	if _, ok := r.cache[filepath.Join(root, "old")]; ok {
		t.Error("the expired entry survived eviction")
	}
	if _, ok := r.cache[filepath.Join(root, "new1")]; !ok {
		t.Error("a live entry was evicted while an expired one could go")
	}
}

func TestConcurrentResolve(t *testing.T) {
	root := tree(t)
	r := New(nil, Options{CacheSize: 4})
	cwds := []string{
		filepath.Join(root, "work", "muse", "cli"), filepath.Join(root, "wt", "muse-fix"),
		filepath.Join(root, "plain", "notes"), filepath.Join(root, "work"), filepath.Join(root, "wt", "rel"),
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				cwd := cwds[(g+i)%len(cwds)]
				if len(r.Resolve(cwd)) != 1 {
					t.Errorf("Resolve(%s) gave no node", cwd)
					return
				}
			}
		})
	}
	wg.Wait()
}
