//go:build unix

package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/hookcache"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/scope"
	"github.com/medallionhq/medallion/internal/store"
)

// startHook is start with the hook's answer files kept in the returned
// folder, one per cwd, and cwds resolved from the file system, as the
// daemon does.
func startHook(t *testing.T) (*env, string) { return startHookBy(t, false) }

// startHookBy is startHook keeping one file per scope (byScope), as a
// daemon without scope rules does, or per cwd.
func startHookBy(t *testing.T, byScope bool) (*env, string) {
	t.Helper()
	var dir string
	e := startWith(t, func(c *Config, st *store.Badger) {
		dir = hookcache.Dir(filepath.Join(t.TempDir(), "m.sock"))
		w, err := hookcache.Open(dir, byScope)
		if err != nil {
			t.Fatal(err)
		}
		c.HookAnswers = w
		c.ScopeForCWD = scope.Derive
		c.Import = st.Import
	})
	return e, dir
}

// startMuse is startHook with a working tree named muse and the
// medallion of repo:muse.
func startMuse(t *testing.T) (e *env, dir, muse string, m *medallion.Medallion) {
	t.Helper()
	return startMuseBy(t, false)
}

// startMuseBy is startMuse keeping a file per scope (byScope) or per cwd.
func startMuseBy(t *testing.T, byScope bool) (e *env, dir, muse string, m *medallion.Medallion) {
	t.Helper()
	e, dir = startHookBy(t, byScope)
	muse = gitRepo(t, "muse")
	m, err := e.store.Create(context.Background(), sample("muse-state", "repo:muse"))
	if err != nil {
		t.Fatal(err)
	}
	return e, dir, muse, m
}

// gitRepo makes a working tree named name.
func gitRepo(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func hookQuery(cwd string) string {
	return "cwd=" + url.QueryEscape(cwd) + "&budget=1200"
}

// loadSettled is load, once the answer file it keeps (on its own
// goroutine) is written.
func (e *env) loadSettled(t *testing.T, query string) api.LoadResponse {
	t.Helper()
	resp := e.load(t, query)
	e.srv.loads.settle(false)
	return resp
}

func files(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestHookAnswerFiles: a load as the hook makes it leaves its answer in a
// file the hook reads; a write to the scope removes the file before the
// write returns, a write elsewhere leaves it; other loads keep no file.
func TestHookAnswerFiles(t *testing.T) {
	setRewarm(t, time.Hour, time.Hour) // none in this test
	e, dir := startHook(t)
	ctx := context.Background()
	muse, other := gitRepo(t, "muse"), gitRepo(t, "other")
	m, err := e.store.Create(ctx, sample("muse-state", "repo:muse"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := e.store.Create(ctx, sample("other-state", "repo:other"))
	if err != nil {
		t.Fatal(err)
	}

	for _, q := range []string{"node=repo:muse", hookQuery(muse) + "&format=json", hookQuery(muse) + "&limit=1"} {
		e.loadSettled(t, q)
	}
	if n := files(t, dir); n != 0 {
		t.Fatalf("loads the hook does not make left %d files", n)
	}
	resp := e.loadSettled(t, hookQuery(muse))
	if got, ok := hookcache.Read(dir, muse, 1200); !ok || got != resp.Text {
		t.Fatalf("kept answer %q, %v; want the load's text:\n%s", got, ok, resp.Text)
	}
	// Removed by someone else: the next load keeps it again.
	if err := os.Remove(filepath.Join(dir, hookcache.Name(muse, 1200))); err != nil {
		t.Fatal(err)
	}
	e.loadSettled(t, hookQuery(muse))
	if _, ok := hookcache.Read(dir, muse, 1200); !ok {
		t.Fatal("a removed answer file was not kept again")
	}
	sub := filepath.Join(muse, "cmd")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	e.loadSettled(t, hookQuery(sub)) // the same answer, a second file
	e.loadSettled(t, hookQuery(other))
	if n := files(t, dir); n != 3 {
		t.Fatalf("%d files, want 3", n)
	}

	o.Summary.HighLevel = "elsewhere"
	if _, err := e.store.Update(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, ok := hookcache.Read(dir, muse, 1200); !ok {
		t.Error("a write to another scope removed muse's answer")
	}
	if _, ok := hookcache.Read(dir, other, 1200); ok {
		t.Error("other's answer outlived a write to its scope")
	}

	rewrite(t, e, dir, m, "now with answer files", muse, sub)

	// A repository without medallions: kept too, as "nothing to add".
	empty := gitRepo(t, "empty")
	if resp := e.loadSettled(t, hookQuery(empty)); len(resp.Medallions) != 0 {
		t.Fatalf("load of an empty scope: %+v", resp)
	}
	if got, ok := hookcache.Read(dir, empty, 1200); !ok || got != "" {
		t.Errorf("empty scope's answer %q, %v; want \"\", true", got, ok)
	}
}

// TestHookAnswerFilesByScope: without scope rules, the hook's load in one
// folder of a repository keeps one file that a hook in any of its folders
// reads, even one no hook ran in yet; a write to the scope removes it for
// all of them.
func TestHookAnswerFilesByScope(t *testing.T) {
	setRewarm(t, time.Hour, time.Hour) // none in this test
	e, dir, muse, m := startMuseBy(t, true)
	sub := filepath.Join(muse, "cmd")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	other := gitRepo(t, "other")
	resp := e.loadSettled(t, hookQuery(muse))
	for _, cwd := range []string{muse, sub} {
		if got, ok := hookcache.Read(dir, cwd, 1200); !ok || got != resp.Text {
			t.Errorf("%s: kept answer %q, %v; want the load's text", cwd, got, ok)
		}
	}
	if _, ok := hookcache.Read(dir, other, 1200); ok {
		t.Error("another repository read muse's answer")
	}
	e.loadSettled(t, hookQuery(sub))
	if n := files(t, dir); n != 1 {
		t.Fatalf("%d files for one scope's hook loads, want 1", n)
	}
	rewrite(t, e, dir, m, "now one file a repository", sub, muse)
	if got, ok := hookcache.Read(dir, muse, 1200); !ok || !strings.Contains(got, "now one file a repository") {
		t.Errorf("the repository's root reads %q, %v after its subfolder's load", got, ok)
	}
}

// rewrite stores a version of m summed up as summary and checks that the
// answer of its scope is gone from the files of every cwd once the write
// returned, and that a hook's load in the first cwd keeps the new answer.
func rewrite(t *testing.T, e *env, dir string, m *medallion.Medallion, summary string, cwds ...string) {
	t.Helper()
	m.Summary.HighLevel = summary
	if _, err := e.store.Update(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range cwds {
		if got, ok := hookcache.Read(dir, cwd, 1200); ok {
			t.Errorf("%s: the answer outlived a write to its scope: %q", cwd, got)
		}
	}
	e.loadSettled(t, hookQuery(cwds[0]))
	if got, ok := hookcache.Read(dir, cwds[0], 1200); !ok || !strings.Contains(got, summary) {
		t.Errorf("after the write, the kept answer is %q, %v", got, ok)
	}
}

// TestHookAnswerFilesUnderConcurrentWrites: the hook's loads keep going
// while a writer updates the scope's medallion; once an update returned, a
// kept answer is either gone or shows it; for files kept per cwd and per
// scope (read from another folder of the repository).
func TestHookAnswerFilesUnderConcurrentWrites(t *testing.T) {
	t.Run("by cwd", func(t *testing.T) { testHookAnswerFilesUnderConcurrentWrites(t, false) })
	t.Run("by scope", func(t *testing.T) { testHookAnswerFilesUnderConcurrentWrites(t, true) })
}

func testHookAnswerFilesUnderConcurrentWrites(t *testing.T, byScope bool) {
	setRewarm(t, time.Millisecond, 10*time.Millisecond) // racing the readers
	e, dir, muse, m := startMuseBy(t, byScope)
	reader := muse
	if byScope {
		reader = filepath.Join(muse, "internal")
		if err := os.Mkdir(reader, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var err error
	var stop atomic.Bool
	var wg sync.WaitGroup
	defer func() { stop.Store(true); wg.Wait() }() // also on Fatal
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if res := e.do(t, "GET", "/v1/load?"+hookQuery(muse), nil, nil); res.status != http.StatusOK {
					t.Errorf("load: %d %s", res.status, res.body)
					return
				}
			}
		}()
	}
	kept := 0
	for i := 1; i <= 100; i++ {
		m.Summary.HighLevel = fmt.Sprintf("round %d of the writer", i)
		if m, err = e.store.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		for j := range 20 {
			if j > 0 {
				time.Sleep(100 * time.Microsecond) // the readers keep it again
			}
			got, ok := hookcache.Read(dir, reader, 1200)
			if ok && !strings.Contains(got, m.Summary.HighLevel+"\n") {
				t.Fatalf("after round %d returned, the kept answer shows:\n%s", i, got)
			}
			if ok {
				kept++
			}
		}
	}
	if kept == 0 {
		t.Error("no answer was ever kept while the readers loaded")
	}
}

// setRewarm sets how long the server waits for writes to go quiet before
// it renders the hook's answers again, for one test.
func setRewarm(t *testing.T, quiet, most time.Duration) {
	q, m := rewarmQuiet, rewarmMax
	rewarmQuiet, rewarmMax = quiet, most
	t.Cleanup(func() { rewarmQuiet, rewarmMax = q, m })
}

// TestHookAnswerRewarmed: once the writes to a scope have gone quiet, the
// answers they dropped are rendered and kept again, so the next session's
// hook reads its file; a burst of writes renders them once.
func TestHookAnswerRewarmed(t *testing.T) {
	setRewarm(t, 500*time.Millisecond, time.Hour)
	e, dir, muse, m := startMuse(t)
	ctx := context.Background()
	var err error
	e.loadSettled(t, hookQuery(muse))
	e.load(t, "node=repo:muse") // no file: not rendered again
	for i := range 5 {
		m.Summary.HighLevel = fmt.Sprintf("checkpoint %d", i)
		if m, err = e.store.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		if _, ok := hookcache.Read(dir, muse, 1200); ok {
			t.Fatalf("write %d: the answer was rendered again before the writes went quiet", i)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, ok := hookcache.Read(dir, muse, 1200)
		if ok && strings.Contains(got, "checkpoint 4\n") {
			break
		}
		if ok || time.Now().After(deadline) {
			t.Fatalf("after the writes went quiet the kept answer is %q, %v", got, ok)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := e.kept(); n != 1 {
		t.Errorf("%d answers kept, want the hook's alone", n)
	}
}

// TestHookAnswerNotReadAfterFailedRemoval: a write whose answer file
// cannot be removed (the folder made read-only) still keeps every hook
// from reading the answer it dropped. Root removes whatever the modes
// say, so it needs another user.
func TestHookAnswerNotReadAfterFailedRemoval(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root ignores the folder's mode")
	}
	setRewarm(t, time.Hour, time.Hour)
	e, dir, muse, m := startMuse(t)
	ctx := context.Background()
	e.loadSettled(t, hookQuery(muse))
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	m.Summary.HighLevel = "a newer state"
	if _, err := e.store.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, ok := hookcache.Read(dir, muse, 1200); ok {
		t.Errorf("after the write returned, a hook reads the answer it dropped:\n%s", got)
	}
}

// TestHookEndpoint: GET /v1/hook answers the hook's load with its text
// alone, the load's text byte for byte, 204 for a repository without
// medallions, and keeps the answer file as the load does.
func TestHookEndpoint(t *testing.T) {
	setRewarm(t, time.Hour, time.Hour) // none in this test
	e, dir := startHook(t)
	muse, empty := gitRepo(t, "muse"), gitRepo(t, "empty")
	if _, err := e.store.Create(context.Background(), sample("muse-state", "repo:muse")); err != nil {
		t.Fatal(err)
	}
	res := e.do(t, "GET", "/v1/hook?"+hookQuery(muse), nil, nil)
	e.srv.loads.settle(false)
	load := e.load(t, hookQuery(muse))
	if res.status != http.StatusOK || string(res.body) != load.Text || load.Text == "" {
		t.Fatalf("status %d, text:\n%s\nwant the load's:\n%s", res.status, res.body, load.Text)
	}
	if got, ok := hookcache.Read(dir, muse, 1200); !ok || got != load.Text {
		t.Errorf("kept answer %q, %v; want the text", got, ok)
	}

	res = e.do(t, "GET", "/v1/hook?"+hookQuery(empty), nil, nil)
	e.srv.loads.settle(false)
	if res.status != http.StatusNoContent || len(res.body) != 0 {
		t.Errorf("repository without medallions: status %d, body %q; want 204 and none", res.status, res.body)
	}
	if got, ok := hookcache.Read(dir, empty, 1200); !ok || got != "" {
		t.Errorf("empty scope's answer %q, %v; want \"\", true", got, ok)
	}

	for _, tc := range []struct{ query, want string }{
		{"budget=1200", "give the directory the session starts in as cwd"},
		{"node=repo:muse", "unknown query parameter"},
		{hookQuery(muse) + "&format=json", "unknown query parameter"},
		{"cwd=relative", "absolute"},
		{"cwd=" + url.QueryEscape(muse) + "&budget=0", "budget must be"},
	} {
		checkError(t, e.do(t, "GET", "/v1/hook?"+tc.query, nil, nil), http.StatusBadRequest, api.CodeInvalid, tc.want)
	}
}
