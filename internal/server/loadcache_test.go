package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// kept is how many loads the server keeps.
func (e *env) kept() int {
	e.srv.loads.mu.Lock()
	defer e.srv.loads.mu.Unlock()
	return len(e.srv.loads.entries)
}

func (e *env) load(t *testing.T, query string) api.LoadResponse {
	t.Helper()
	var resp api.LoadResponse
	e.want(t, http.StatusOK, "GET", "/v1/load?"+query, nil, &resp)
	return resp
}

// TestLoadCacheNeverStale: a kept load is served until a version of a
// medallion of its scope is written, whatever wrote it (create, update,
// import, a medallion moving in or out of the scope), and survives writes
// elsewhere.
func TestLoadCacheNeverStale(t *testing.T) {
	e := startWith(t, func(c *Config, st *store.Badger) { c.Import = st.Import })
	ctx := context.Background()
	muse, err := e.store.Create(ctx, sample("muse-state", "repo:muse"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.store.Create(ctx, sample("other-state", "repo:other"))
	if err != nil {
		t.Fatal(err)
	}
	other.Scope.Tags = []string{"elsewhere"}
	if other, err = e.store.Update(ctx, other); err != nil {
		t.Fatal(err)
	}

	first := e.load(t, "node=repo:muse")
	if again := e.load(t, "node=repo:muse"); e.kept() != 1 || again.Text != first.Text {
		t.Fatalf("kept %d loads; second load differs:\n%s\n---\n%s", e.kept(), first.Text, again.Text)
	}
	e.load(t, "tag=project_state")
	if e.kept() != 2 {
		t.Fatalf("kept %d loads, want 2", e.kept())
	}

	// A medallion of neither scope: both loads stay.
	other.Summary.HighLevel = "another project"
	if other, err = e.store.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	if e.kept() != 2 {
		t.Errorf("a write outside both scopes dropped a load: %d kept", e.kept())
	}

	steps := []struct {
		name  string
		write func() error
		query string
		want  string // in the text; "" means no medallion
	}{
		{"update", func() error {
			muse.Summary.HighLevel = "now a daemon with a cache"
			muse, err = e.store.Update(ctx, muse)
			return err
		}, "node=repo:muse", "now a daemon with a cache"},
		{"same update seen by tag", nil, "tag=project_state", "now a daemon with a cache"},
		{"create", func() error {
			m := sample("muse-module", "repo:muse", "module:muse/cache")
			m.Summary.HighLevel = "the cache module"
			_, err := e.store.Create(ctx, m)
			return err
		}, "node=repo:muse", "the cache module"},
		{"import", func() error {
			m := sample("muse-imported", "repo:muse")
			m.Meta.Version, m.Meta.Status = 1, medallion.StatusActive
			m.Meta.CreatedAt, m.Meta.UpdatedAt = "2030-01-01T00:00:00Z", "2030-01-01T00:00:00Z"
			m.Summary.HighLevel = "brought from another machine"
			return e.store.Import(ctx, []*medallion.Medallion{m})
		}, "node=repo:muse", "brought from another machine"},
		{"a tag moves into the tag scope", func() error {
			other.Scope.Tags = []string{"project_state"}
			other, err = e.store.Update(ctx, other)
			return err
		}, "tag=project_state", "another project"},
		{"status no longer active", func() error {
			muse.Meta.Status = medallion.StatusStale
			muse, err = e.store.Update(ctx, muse)
			return err
		}, "node=repo:muse&limit=1", "brought from another machine"},
	}
	for _, st := range steps {
		if st.write != nil {
			e.load(t, st.query) // kept before the write
			if err := st.write(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		if got := e.load(t, st.query); !strings.Contains(got.Text, st.want) {
			t.Errorf("%s: load %s lacks %q:\n%s", st.name, st.query, st.want, got.Text)
		}
	}

	// Moved out of the scope: gone from its load.
	for _, id := range []string{"muse-module", "muse-imported"} {
		e.load(t, "node=repo:muse")
		m, err := e.store.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		m.Scope.GraphNodes = []string{"repo:elsewhere"}
		if _, err := e.store.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.load(t, "node=repo:muse"); len(got.Medallions) != 0 {
		t.Errorf("medallions moved out of repo:muse are still loaded: %q", got.Medallions)
	}
}

// TestLoadCacheUnderConcurrentWrites: readers keep loading (and keeping)
// a scope while a writer updates its medallion; every load that starts
// after an update returned shows that update.
func TestLoadCacheUnderConcurrentWrites(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	m, err := e.store.Create(ctx, sample("muse-state", "repo:muse"))
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if res := e.do(t, "GET", "/v1/load?node=repo:muse", nil, nil); res.status != http.StatusOK {
					t.Errorf("load: %d %s", res.status, res.body)
					return
				}
			}
		}()
	}
	const rounds = 100
	for i := 1; i <= rounds; i++ {
		m.Summary.HighLevel = fmt.Sprintf("round %d of the writer", i)
		if m, err = e.store.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		if got := e.load(t, "node=repo:muse"); !strings.Contains(got.Text, m.Summary.HighLevel+"\n") {
			t.Fatalf("after round %d returned, a load shows:\n%s", i, got.Text)
		}
	}
	stop.Store(true)
	wg.Wait()
}

// TestLoadWithoutWatch: a server whose store does not report its writes
// keeps nothing and renders every load.
func TestLoadWithoutWatch(t *testing.T) {
	e := startWith(t, func(c *Config, _ *store.Badger) { c.WatchWrites = nil })
	ctx := context.Background()
	m, err := e.store.Create(ctx, sample("muse-state", "repo:muse"))
	if err != nil {
		t.Fatal(err)
	}
	e.load(t, "node=repo:muse")
	m.Summary.HighLevel = "changed"
	if _, err := e.store.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	if e.srv.loads != nil || !strings.Contains(e.load(t, "node=repo:muse").Text, "changed") {
		t.Error("a server without WatchWrites kept a load")
	}
}
