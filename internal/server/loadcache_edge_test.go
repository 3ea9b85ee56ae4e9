package server

import (
	"context"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// Key collision: node "repo:muse\x00t\x00project_state" and
// node=repo:muse&tag=project_state share one key.
func TestLoadKeyUnambiguous(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	if _, err := e.store.Create(ctx, sample("muse-state", "repo:muse")); err != nil {
		t.Fatal(err)
	}
	// A client sends a node with a NUL in it first: empty answer, kept.
	odd := e.load(t, "node=repo:muse%00t%00project_state")
	t.Logf("odd load: medallions %v scope %q", odd.Medallions, odd.Scope)
	// The ordinary load then gets the odd load's answer.
	got := e.load(t, "node=repo:muse&tag=project_state")
	if len(got.Medallions) != 1 || !strings.Contains(got.Text, "a daemon storing save files") {
		t.Errorf("node=repo:muse&tag=project_state answered medallions %v scope %q", got.Medallions, got.Scope)
	}
	// And a write in the scope does not drop it.
	m, _ := e.store.Get(ctx, "muse-state")
	m.Summary.HighLevel = "changed"
	if _, err := e.store.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	got = e.load(t, "node=repo:muse&tag=project_state")
	if len(got.Medallions) != 1 || !strings.Contains(got.Text, "changed") {
		t.Errorf("after an update in scope: medallions %v scope %q", got.Medallions, got.Scope)
	}
}

type blockingIndexer struct {
	armed   chan struct{} // closed: block
	entered chan struct{}
	release chan struct{}
}

func (b *blockingIndexer) IndexVersion(_ *badger.Txn, _, _ *medallion.Medallion) (func(), error) {
	select {
	case <-b.armed:
		b.entered <- struct{}{}
		<-b.release
	default:
	}
	return nil, nil
}

// A write whose transaction began before the server registered its
// watcher (the daemon starts ingestion before server.New) is never heard
// of: a load rendered during it is kept and outlives the write.
func TestLoadCacheHearsWriteInFlightAtStart(t *testing.T) {
	ctx := context.Background()
	bi := &blockingIndexer{armed: make(chan struct{}), entered: make(chan struct{}), release: make(chan struct{})}
	updated := make(chan error, 1)
	e := startWith(t, func(c *Config, st *store.Badger) {
		st.SetIndexer(bi)
		m, err := st.Create(ctx, sample("muse-state", "repo:muse"))
		if err != nil {
			t.Fatal(err)
		}
		close(bi.armed)
		m.Summary.HighLevel = "written before the load"
		go func() { _, err := st.Update(ctx, m); updated <- err }()
		<-bi.entered // the update's transaction is open; watchers already read (none)
	})
	before := e.load(t, "node=repo:muse") // renders the old version, kept
	close(bi.release)
	if err := <-updated; err != nil {
		t.Fatal(err)
	}
	// The update has returned; a load starting now must show it.
	after := e.load(t, "node=repo:muse")
	if !strings.Contains(after.Text, "written before the load") {
		t.Errorf("load after the update returned shows the old version (kept %d):\n%s\n(before: %.60q)", e.kept(), after.Text, before.Text)
	}
}
