package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/store/storetest"
)

func testLogger(t *testing.T) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Warn, Output: t.Output()})
}

// openBadger opens a Badger store in dir and closes it when the test ends.
func openBadger(t *testing.T, dir string, opts store.Options) *store.Badger {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	s, err := store.Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func TestBadgerContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dir string) store.Store {
		s, err := store.Open(dir, store.Options{Logger: testLogger(t)})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return s
	})
}

func newMedallion(id string, nodes, tags []string) *medallion.Medallion {
	return &medallion.Medallion{
		Meta:    medallion.Meta{MedallionID: id, SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
		Scope:   medallion.Scope{GraphNodes: nodes, Tags: tags},
		Summary: medallion.Summary{HighLevel: "summary of " + id},
	}
}

func TestCountSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openBadger(t, dir, store.Options{})
	for i := range 25 {
		m, err := s.Create(ctx, newMedallion(fmt.Sprintf("m%02d", i), []string{"repo:muse"}, nil))
		if err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if _, err := s.Update(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openBadger(t, dir, store.Options{})
	if n, err := s.Count(ctx); err != nil || n != 25 {
		t.Errorf("count after reopen = %d, %v; want 25", n, err)
	}
	if _, err := s.Create(ctx, newMedallion("one-more", []string{"repo:muse"}, nil)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx); err != nil || n != 26 {
		t.Errorf("count = %d, %v; want 26", n, err)
	}
	if s.DiskUsage() <= 0 {
		t.Errorf("disk usage = %d after reopening a store with data, want > 0", s.DiskUsage())
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestGCStopsAtClose(t *testing.T) {
	s := openBadger(t, t.TempDir(), store.Options{GCInterval: time.Millisecond})
	if _, err := s.Create(context.Background(), newMedallion("gc", []string{"repo:muse"}, nil)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two collector passes", func() bool { return store.GCPasses(s) >= 2 })
	if store.GCStopped(s) {
		t.Fatal("collector stopped before Close")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waits for the collector, so it is gone the moment Close returns.
	if !store.GCStopped(s) {
		t.Error("collector still running after Close")
	}
}

func TestGCDisabled(t *testing.T) {
	s := openBadger(t, t.TempDir(), store.Options{GCInterval: -1})
	if !store.GCStopped(s) || store.GCPasses(s) != 0 {
		t.Errorf("negative GCInterval: collector running=%v passes=%d, want none", !store.GCStopped(s), store.GCPasses(s))
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	s := openBadger(t, t.TempDir(), store.Options{})
	ctx := context.Background()
	for i := range 2 {
		if err := s.Close(); err != nil {
			t.Fatalf("close #%d: %v", i+1, err)
		}
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"create", func() error { _, err := s.Create(ctx, newMedallion("x", []string{"repo:muse"}, nil)); return err }},
		{"get", func() error { _, err := s.Get(ctx, "x"); return err }},
		{"latest for scope", func() error {
			_, err := s.LatestForScope(ctx, medallion.Scope{GraphNodes: []string{"repo:muse"}}, 1)
			return err
		}},
		{"count", func() error { _, err := s.Count(ctx); return err }},
	}
	for _, c := range calls {
		if err := c.call(); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("%s after close: err = %v, want a closed-store error", c.name, err)
		}
	}
	if got := s.DiskUsage(); got != 0 {
		t.Errorf("disk usage after close = %d, want 0", got)
	}
}

func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	first := openBadger(t, dir, store.Options{})
	second, err := store.Open(dir, store.Options{Logger: testLogger(t)})
	if err == nil {
		second.Close()
		t.Fatal("second Open of an open store succeeded")
	}
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Errorf("second Open: err = %q, want ErrLocked naming %s", err, dir)
	}
	// The failed Open must not have disturbed the first store.
	if _, err := first.Create(context.Background(), newMedallion("still-fine", []string{"repo:muse"}, nil)); err != nil {
		t.Errorf("first store after a failed second Open: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	third := openBadger(t, dir, store.Options{})
	if m, err := third.Get(context.Background(), "still-fine"); err != nil || m == nil {
		t.Errorf("reopen after Close: get = %v, %v", m, err)
	}
}

func TestInjectedClock(t *testing.T) {
	clock := time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)
	s := openBadger(t, t.TempDir(), store.Options{Now: func() time.Time { return clock }})
	ctx := context.Background()
	m, err := s.Create(ctx, newMedallion("clock", []string{"repo:muse"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := "2030-01-02T03:04:05.123456Z"; m.Meta.CreatedAt != want || m.Meta.UpdatedAt != want {
		t.Errorf("created_at, updated_at = %s, %s; want both %s", m.Meta.CreatedAt, m.Meta.UpdatedAt, want)
	}
	// The clock does not move: each update still gets a later updated_at.
	want := []string{"2030-01-02T03:04:05.123457Z", "2030-01-02T03:04:05.123458Z"}
	for _, w := range want {
		if m, err = s.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		if m.Meta.UpdatedAt != w {
			t.Errorf("updated_at = %s, want %s", m.Meta.UpdatedAt, w)
		}
	}
}

func TestLargeMedallions(t *testing.T) {
	s := openBadger(t, t.TempDir(), store.Options{})
	ctx := context.Background()
	// Below and above the value-log threshold, and above the batch size
	// that 8 MB memtables allow for values kept in the LSM tree.
	for _, size := range []int{1 << 10, 100 << 10, 2 << 20} {
		id := fmt.Sprintf("big-%d", size)
		m := newMedallion(id, []string{"repo:big"}, nil)
		m.Summary.HighLevel = strings.Repeat("x", size)
		created, err := s.Create(ctx, m)
		if err != nil {
			t.Fatalf("create %d bytes: %v", size, err)
		}
		created.Summary.HighLevel += "y"
		updated, err := s.Update(ctx, created)
		if err != nil {
			t.Fatalf("update %d bytes: %v", size, err)
		}
		if got, err := s.Get(ctx, id); err != nil || !reflect.DeepEqual(got, updated) {
			t.Errorf("get %d bytes: %v (equal: %v)", size, err, reflect.DeepEqual(got, updated))
		}
	}
}

// TestLatestForScopeMatchesBruteForce checks the planned index walks
// against a direct evaluation of the matching rules over every stored
// medallion, after random creates and scope-changing updates. Names are
// drawn with a skew so that the planner meets long and short lists, and
// some medallions carry scopes too big to copy into index entries.
func TestLatestForScopeMatchesBruteForce(t *testing.T) {
	dir := t.TempDir()
	s := openBadger(t, dir, store.Options{})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(prefix string, pool, max int) []string {
		n := rng.IntN(max + 1)
		var out []string
		for len(out) < n {
			v := fmt.Sprintf("%s%d", prefix, rng.IntN(1+rng.IntN(pool)))
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		return out
	}
	scope := func() medallion.Scope {
		for {
			sc := medallion.Scope{GraphNodes: pick("node:", 8, 3), Tags: pick("tag:", 5, 2)}
			if rng.IntN(20) == 0 {
				for i := range 100 {
					sc.Tags = append(sc.Tags, fmt.Sprintf("filler-tag-with-a-long-name-%03d", i))
				}
			}
			if len(sc.GraphNodes)+len(sc.Tags) > 0 {
				return sc
			}
		}
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 300
	for i := range n {
		m := newMedallion(fmt.Sprintf("id%03d", i), nil, nil)
		m.Scope = scope()
		// Coarse stamps make many ties, so the id order is exercised.
		m.Meta.CreatedAt = medallion.FormatTime(base.Add(time.Duration(rng.IntN(50)) * time.Hour))
		if _, err := s.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		m, err := s.Get(ctx, fmt.Sprintf("id%03d", rng.IntN(n)))
		if err != nil {
			t.Fatal(err)
		}
		m.Scope = scope()
		if _, err := s.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var all []*medallion.Medallion
	for i := range n {
		m, err := s.Get(ctx, fmt.Sprintf("id%03d", i))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, m)
	}
	slices.SortFunc(all, func(a, b *medallion.Medallion) int {
		ta, _ := medallion.ParseTime(a.Meta.UpdatedAt)
		tb, _ := medallion.ParseTime(b.Meta.UpdatedAt)
		if c := tb.Compare(ta); c != 0 {
			return c
		}
		return strings.Compare(a.Meta.MedallionID, b.Meta.MedallionID)
	})
	matches := func(m *medallion.Medallion, q medallion.Scope) bool {
		for _, n := range q.GraphNodes {
			if !slices.Contains(m.Scope.GraphNodes, n) {
				return false
			}
		}
		if len(q.Tags) == 0 {
			return true
		}
		for _, tag := range q.Tags {
			if slices.Contains(m.Scope.Tags, tag) {
				return true
			}
		}
		return false
	}
	for i := range 400 {
		q := medallion.Scope{GraphNodes: pick("node:", 9, 3), Tags: pick("tag:", 6, 3)}
		limit := 1 + rng.IntN(40)
		want := []string{}
		if len(q.GraphNodes)+len(q.Tags) > 0 {
			for _, m := range all {
				if len(want) < limit && matches(m, q) {
					want = append(want, m.Meta.MedallionID)
				}
			}
		}
		res, err := s.LatestForScope(ctx, q, limit)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, m := range res {
			got = append(got, m.Meta.MedallionID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("query %d nodes=%q tags=%q limit=%d:\n got %q\nwant %q", i, q.GraphNodes, q.Tags, limit, got, want)
		}
	}

	// The planner's list sizes, kept up to date on every write, equal
	// both the stored scopes and a fresh count at Open.
	wantSizes := map[string]int64{}
	for _, m := range all {
		for _, n := range m.Scope.GraphNodes {
			wantSizes["n/"+n]++
		}
		for _, tag := range m.Scope.Tags {
			wantSizes["t/"+tag]++
		}
	}
	if got := store.ListSizes(s); !reflect.DeepEqual(got, wantSizes) {
		t.Errorf("list sizes after writes:\n got %v\nwant %v", got, wantSizes)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openBadger(t, dir, store.Options{})
	if got := store.ListSizes(s); !reflect.DeepEqual(got, wantSizes) {
		t.Errorf("list sizes counted at Open:\n got %v\nwant %v", got, wantSizes)
	}
}

// TestDiskUsageOfANewStore: a store just created with one medallion in it
// does not report 0 B (Badger's own figure is a minute late).
func TestDiskUsageOfANewStore(t *testing.T) {
	s := openBadger(t, t.TempDir(), store.Options{})
	if _, err := s.Create(context.Background(), newMedallion("one", []string{"repo:muse"}, nil)); err != nil {
		t.Fatal(err)
	}
	if n := s.DiskUsage(); n <= 0 {
		t.Errorf("disk usage = %d with a medallion stored, want > 0", n)
	}
}

// TestOldVersionsKeepTheUsersHolds: a version stored as a delta from the
// next one reads back with its pins and forgotten items.
func TestOldVersionsKeepTheUsersHolds(t *testing.T) {
	s := openBadger(t, t.TempDir(), store.Options{})
	ctx := context.Background()
	m := newMedallion("held", []string{"repo:muse"}, nil)
	m.Decisions = []medallion.Decision{{ID: "D-001", Statement: "stream MIDI", Confidence: 0.9}}
	m.Pinned = []medallion.Pin{{Item: "D-001"}}
	m.Forget(medallion.KindDecision, "D-002", "buffer whole tracks")
	v1, err := s.Create(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	next := v1.Clone()
	next.Pinned = nil
	next.Forgotten = nil
	if _, err := s.Update(ctx, next); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetVersion(ctx, "held", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Pinned, m.Pinned) || !reflect.DeepEqual(got.Forgotten, m.Forgotten) {
		t.Errorf("version 1: pinned %+v forgotten %+v, want %+v %+v", got.Pinned, got.Forgotten, m.Pinned, m.Forgotten)
	}
}
