// Package storetest is the contract suite every store.Store implementation
// must pass: the rules of store.Store's doc comments and of seed 002,
// checked through the interface only.
//
// An implementation's test calls Run with a factory:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, dir string) store.Store {
//			s, err := store.Open(dir, store.Options{})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// Factory opens the store kept in dir. The suite calls it once per subtest
// with a fresh t.TempDir(), and again with the same dir after Close to
// check that data survives a reopen. The suite closes what it opens.
//
// Fixtures are stamped 2025-11-17, and some tests expect an update to move
// a medallion ahead of them, so the store's clock must read later than that.
type Factory func(t *testing.T, dir string) store.Store

// Run runs the contract suite against the stores open returns.
func Run(t *testing.T, open Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Factory)
	}{
		{"CreateFillsDefaults", testCreateFillsDefaults},
		{"CreateDuplicate", testCreateDuplicate},
		{"CreateConcurrentSameID", testCreateConcurrentSameID},
		{"Validation", testValidation},
		{"UpdateAbsent", testUpdateAbsent},
		{"UpdateStaleVersion", testUpdateStaleVersion},
		{"UpdateInvalid", testUpdateInvalid},
		{"Versions", testVersions},
		{"Absent", testAbsent},
		{"FreshCopies", testFreshCopies},
		{"Count", testCount},
		{"ScopeQueries", testScopeQueries},
		{"SeedGraphNodes", testSeedGraphNodes},
		{"SeedTags", testSeedTags},
		{"UpdateMovesIndex", testUpdateMovesIndex},
		{"UpdateReorders", testUpdateReorders},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"Reopen", testReopen},
		{"CancelledContext", testCancelledContext},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

// openIn opens the store in dir and closes it when the test ends; Close is
// idempotent, so tests may close it earlier.
func openIn(t *testing.T, open Factory, dir string) store.Store {
	t.Helper()
	s := open(t, dir)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func openNew(t *testing.T, open Factory) store.Store {
	t.Helper()
	return openIn(t, open, t.TempDir())
}

// base is the time the fixtures are stamped from.
var base = time.Date(2025, 11, 17, 9, 30, 0, 0, time.UTC)

func stamp(minutes int) string {
	return medallion.FormatTime(base.Add(time.Duration(minutes) * time.Minute))
}

// sample is a valid medallion with some content in every section, so
// round trips exercise the whole schema.
func sample(id string, nodes, tags []string) *medallion.Medallion {
	return &medallion.Medallion{
		Meta: medallion.Meta{
			MedallionID:   id,
			SchemaVersion: medallion.SchemaVersion,
			Model:         "tier0",
		},
		Scope: medallion.Scope{GraphNodes: nodes, Tags: tags},
		Summary: medallion.Summary{
			HighLevel: "CLI for the muse music tool.",
			Subsystems: []medallion.Subsystem{
				{Name: "cli", Status: medallion.SubsystemStable, Notes: "cobra commands"},
			},
		},
		Decisions: []medallion.Decision{
			{ID: "D-001", Statement: "Use cobra", Rationale: "user said so", Confidence: 0.9},
		},
		OpenQuestions: []medallion.OpenQuestion{
			{ID: "Q-001", Question: "Keep the v1 flags?", BlockedOn: []string{"owner"}, Priority: medallion.PriorityMedium},
		},
		Affordances: medallion.Affordances{
			RecommendedEntryPoints: []string{"cmd/muse/main.go"},
			AvoidRepeating:         []string{"go test ./... without -short takes 10 minutes"},
			Invariants:             []string{"never write to ~/.muse directly"},
		},
	}
}

// stamped is sample with both timestamps set to stamp(minutes).
func stamped(id string, minutes int, nodes, tags []string) *medallion.Medallion {
	m := sample(id, nodes, tags)
	m.Meta.CreatedAt = stamp(minutes)
	m.Meta.UpdatedAt = m.Meta.CreatedAt
	return m
}

func mustCreate(t *testing.T, s store.Store, m *medallion.Medallion) *medallion.Medallion {
	t.Helper()
	got, err := s.Create(context.Background(), m)
	if err != nil {
		t.Fatalf("create %s: %v", m.Meta.MedallionID, err)
	}
	return got
}

func mustUpdate(t *testing.T, s store.Store, m *medallion.Medallion) *medallion.Medallion {
	t.Helper()
	got, err := s.Update(context.Background(), m)
	if err != nil {
		t.Fatalf("update %s: %v", m.Meta.MedallionID, err)
	}
	return got
}

func mustGet(t *testing.T, s store.Store, id string) *medallion.Medallion {
	t.Helper()
	got, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return got
}

func mustTime(t *testing.T, field, s string) time.Time {
	t.Helper()
	tm, err := medallion.ParseTime(s)
	if err != nil {
		t.Fatalf("%s %q: %v", field, s, err)
	}
	return tm
}

func ids(ms []*medallion.Medallion) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Meta.MedallionID
	}
	return out
}

func query(t *testing.T, s store.Store, nodes, tags []string, limit int) []string {
	t.Helper()
	got, err := s.LatestForScope(context.Background(), medallion.Scope{GraphNodes: nodes, Tags: tags}, limit)
	if err != nil {
		t.Fatalf("latest for scope nodes=%q tags=%q limit=%d: %v", nodes, tags, limit, err)
	}
	if got == nil {
		t.Fatalf("latest for scope nodes=%q tags=%q limit=%d: nil list, want a non-nil (maybe empty) one", nodes, tags, limit)
	}
	return ids(got)
}

func testCreateFillsDefaults(t *testing.T, open Factory) {
	s := openNew(t, open)
	tests := []struct {
		name                     string
		created, updated, status string
		// want: "" means "set by the store", checked for consistency
		wantCreated, wantUpdated string
		wantStatus               medallion.Status
	}{
		{name: "all empty", wantStatus: medallion.StatusActive},
		{name: "both given", created: stamp(0), updated: stamp(5), wantCreated: stamp(0), wantUpdated: stamp(5), wantStatus: medallion.StatusActive},
		{name: "updated defaults to created", created: stamp(1), wantCreated: stamp(1), wantUpdated: stamp(1), wantStatus: medallion.StatusActive},
		{name: "status kept", status: "stale", wantStatus: medallion.StatusStale},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := sample(fmt.Sprintf("defaults-%d", i), []string{"repo:muse"}, nil)
			in.Meta.CreatedAt, in.Meta.UpdatedAt, in.Meta.Status = tt.created, tt.updated, medallion.Status(tt.status)
			in.Meta.Version = 7
			before := in.Clone()

			got := mustCreate(t, s, in)
			if !reflect.DeepEqual(in, before) {
				t.Errorf("create changed its argument:\n got %+v\nwant %+v", in.Meta, before.Meta)
			}
			if got.Meta.Version != 1 {
				t.Errorf("version = %d, want 1 (input version is ignored)", got.Meta.Version)
			}
			if got.Meta.Status != tt.wantStatus {
				t.Errorf("status = %q, want %q", got.Meta.Status, tt.wantStatus)
			}
			mustTime(t, "created_at", got.Meta.CreatedAt)
			mustTime(t, "updated_at", got.Meta.UpdatedAt)
			if tt.wantCreated != "" && got.Meta.CreatedAt != tt.wantCreated {
				t.Errorf("created_at = %q, want %q", got.Meta.CreatedAt, tt.wantCreated)
			}
			wantUpdated := tt.wantUpdated
			if wantUpdated == "" {
				wantUpdated = got.Meta.CreatedAt
			}
			if got.Meta.UpdatedAt != wantUpdated {
				t.Errorf("updated_at = %q, want %q", got.Meta.UpdatedAt, wantUpdated)
			}
			if got.Scope.Tags == nil || got.Decisions == nil {
				t.Errorf("nil slices not normalized: %+v", got)
			}
			if stored := mustGet(t, s, in.Meta.MedallionID); !reflect.DeepEqual(stored, got) {
				t.Errorf("get after create:\n got %+v\nwant %+v", stored, got)
			}
		})
	}
}

func testCreateDuplicate(t *testing.T, open Factory) {
	s := openNew(t, open)
	first := mustCreate(t, s, stamped("dup", 0, []string{"repo:muse"}, nil))
	second := stamped("dup", 5, []string{"repo:other"}, []string{"x"})
	_, err := s.Create(context.Background(), second)
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("create duplicate: err = %v, want ErrExists", err)
	}
	if got := mustGet(t, s, "dup"); !reflect.DeepEqual(got, first) {
		t.Errorf("duplicate create changed the stored medallion:\n got %+v\nwant %+v", got, first)
	}
	if got := query(t, s, []string{"repo:other"}, nil, 10); len(got) != 0 {
		t.Errorf("duplicate create left index entries: %q", got)
	}
	if n, err := s.Count(context.Background()); err != nil || n != 1 {
		t.Errorf("count = %d, %v; want 1", n, err)
	}
}

func testCreateConcurrentSameID(t *testing.T, open Factory) {
	s := openNew(t, open)
	const writers = 8
	errs := make([]error, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			<-start
			_, errs[i] = s.Create(context.Background(), stamped("race", i, []string{fmt.Sprintf("repo:r%d", i)}, nil))
		})
	}
	close(start)
	wg.Wait()
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrExists):
			t.Errorf("writer %d: err = %v, want nil or ErrExists", i, err)
		}
	}
	if wins != 1 {
		t.Errorf("%d creates of one id succeeded, want exactly 1", wins)
	}
	if n, err := s.Count(context.Background()); err != nil || n != 1 {
		t.Errorf("count = %d, %v; want 1", n, err)
	}
	// Only the winner's graph node is indexed.
	found := 0
	for i := range writers {
		found += len(query(t, s, []string{fmt.Sprintf("repo:r%d", i)}, nil, 10))
	}
	if found != 1 {
		t.Errorf("%d index hits across the racers' nodes, want 1", found)
	}
}

func testValidation(t *testing.T, open Factory) {
	s := openNew(t, open)
	tests := []struct {
		name       string
		mutate     func(m *medallion.Medallion)
		wantFields []string
	}{
		{"missing schema version", func(m *medallion.Medallion) { m.Meta.SchemaVersion = "" }, []string{"meta.schema_version"}},
		{"bad id", func(m *medallion.Medallion) { m.Meta.MedallionID = "has space" }, []string{"meta.medallion_id"}},
		{"empty scope", func(m *medallion.Medallion) { m.Scope = medallion.Scope{} }, []string{"scope"}},
		{"control char in tag", func(m *medallion.Medallion) { m.Scope.Tags = []string{"a\x00b"} }, []string{"scope.tags[0]"}},
		{"several fields", func(m *medallion.Medallion) {
			m.Decisions[0].Confidence = 2
			m.OpenQuestions[0].Priority = "urgent"
			m.Meta.Status = "gone"
		}, []string{"decisions[0].confidence", "open_questions[0].priority", "meta.status"}},
		{"updated before created", func(m *medallion.Medallion) {
			m.Meta.CreatedAt, m.Meta.UpdatedAt = stamp(5), stamp(0)
		}, []string{"meta.updated_at"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprintf("invalid-%d", i)
			m := sample(id, []string{"repo:muse"}, []string{"t"})
			tt.mutate(m)
			got, err := s.Create(context.Background(), m)
			var verr *medallion.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("create: err = %v (%T), want *medallion.ValidationError", err, err)
			}
			if got != nil {
				t.Errorf("create returned %+v alongside the error", got)
			}
			var fields []string
			for _, p := range verr.Problems {
				fields = append(fields, p.Field)
			}
			for _, f := range tt.wantFields {
				if !slices.Contains(fields, f) {
					t.Errorf("problems %q do not name %s", fields, f)
				}
			}
			if got := mustGet(t, s, m.Meta.MedallionID); got != nil {
				t.Errorf("invalid medallion was stored: %+v", got)
			}
		})
	}
	if n, err := s.Count(context.Background()); err != nil || n != 0 {
		t.Errorf("count = %d, %v; want 0", n, err)
	}
	if got := query(t, s, []string{"repo:muse"}, nil, 10); len(got) != 0 {
		t.Errorf("invalid medallions were indexed: %q", got)
	}
}

func testUpdateAbsent(t *testing.T, open Factory) {
	s := openNew(t, open)
	m := stamped("absent", 0, []string{"repo:muse"}, nil)
	m.Meta.Status = medallion.StatusActive
	m.Meta.Version = 1
	_, err := s.Update(context.Background(), m)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update absent: err = %v, want ErrNotFound", err)
	}
	if got := mustGet(t, s, "absent"); got != nil {
		t.Errorf("update of an absent id stored %+v", got)
	}
}

func testUpdateStaleVersion(t *testing.T, open Factory) {
	s := openNew(t, open)
	v1 := mustCreate(t, s, stamped("stale", 0, []string{"repo:muse"}, nil))
	v2 := v1.Clone()
	v2.Summary.HighLevel = "second"
	v2 = mustUpdate(t, s, v2)

	for _, version := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("based on %d", version), func(t *testing.T) {
			m := v2.Clone()
			m.Meta.Version = version
			m.Summary.HighLevel = "lost?"
			m.Scope.GraphNodes = []string{"repo:moved"}
			_, err := s.Update(context.Background(), m)
			if !errors.Is(err, store.ErrConflict) {
				t.Fatalf("update based on version %d of 2: err = %v, want ErrConflict", version, err)
			}
			if got := mustGet(t, s, "stale"); !reflect.DeepEqual(got, v2) {
				t.Errorf("conflicting update changed the medallion:\n got %+v\nwant %+v", got, v2)
			}
			if got := query(t, s, []string{"repo:moved"}, nil, 10); len(got) != 0 {
				t.Errorf("conflicting update was indexed: %q", got)
			}
			h, err := s.History(context.Background(), "stale")
			if err != nil || len(h) != 2 {
				t.Errorf("history = %+v, %v; want 2 versions", h, err)
			}
		})
	}
}

func testUpdateInvalid(t *testing.T, open Factory) {
	s := openNew(t, open)
	v1 := mustCreate(t, s, stamped("upd-invalid", 0, []string{"repo:muse"}, nil))
	m := v1.Clone()
	m.Decisions[0].Statement = " "
	_, err := s.Update(context.Background(), m)
	var verr *medallion.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("invalid update: err = %v, want *medallion.ValidationError", err)
	}
	if len(verr.Problems) != 1 || verr.Problems[0].Field != "decisions[0].statement" {
		t.Errorf("problems = %+v, want only decisions[0].statement", verr.Problems)
	}
	if got := mustGet(t, s, "upd-invalid"); !reflect.DeepEqual(got, v1) {
		t.Errorf("invalid update changed the medallion:\n got %+v\nwant %+v", got, v1)
	}
}

func testVersions(t *testing.T, open Factory) {
	s := openNew(t, open)
	const n = 6
	want := []*medallion.Medallion{mustCreate(t, s, stamped("versions", 0, []string{"repo:muse"}, []string{"project_state"}))}
	for i := 2; i <= n; i++ {
		m := want[len(want)-1].Clone()
		m.Summary.HighLevel = fmt.Sprintf("understanding #%d", i)
		m.Meta.CreatedAt = stamp(-100) // ignored: created_at is kept
		m.Meta.UpdatedAt = stamp(100)  // ignored: updated_at is set by the store
		m.Meta.Model = fmt.Sprintf("model-%d", i)
		got := mustUpdate(t, s, m)
		if got.Meta.Version != i {
			t.Fatalf("update %d: version = %d, want %d", i, got.Meta.Version, i)
		}
		want = append(want, got)
	}

	created := want[0].Meta.CreatedAt
	var prev time.Time
	for i, w := range want {
		v := i + 1
		got, err := s.GetVersion(context.Background(), "versions", v)
		if err != nil || got == nil {
			t.Fatalf("get version %d: %v, %v", v, got, err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("version %d:\n got %+v\nwant %+v", v, got, w)
		}
		if got.Meta.Version != v {
			t.Errorf("version %d has meta.version %d", v, got.Meta.Version)
		}
		if got.Meta.CreatedAt != created {
			t.Errorf("version %d created_at = %q, want %q (kept from version 1)", v, got.Meta.CreatedAt, created)
		}
		updated := mustTime(t, "updated_at", got.Meta.UpdatedAt)
		if i > 0 && !updated.After(prev) {
			t.Errorf("version %d updated_at %s is not after version %d's %s", v, got.Meta.UpdatedAt, v-1, prev.Format(time.RFC3339Nano))
		}
		prev = updated
	}
	if got := mustGet(t, s, "versions"); !reflect.DeepEqual(got, want[n-1]) {
		t.Errorf("get = %+v, want the latest version %+v", got, want[n-1])
	}

	h, err := s.History(context.Background(), "versions")
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	var wantH []medallion.VersionInfo
	for _, w := range want {
		wantH = append(wantH, medallion.VersionInfo{Version: w.Meta.Version, UpdatedAt: w.Meta.UpdatedAt, Model: w.Meta.Model, Status: w.Meta.Status})
	}
	if !reflect.DeepEqual(h, wantH) {
		t.Errorf("history:\n got %+v\nwant %+v", h, wantH)
	}
	if got := query(t, s, []string{"repo:muse"}, nil, 10); !slices.Equal(got, []string{"versions"}) {
		t.Errorf("after %d updates the node index holds %q, want one entry", n, got)
	}
}

func testAbsent(t *testing.T, open Factory) {
	s := openNew(t, open)
	mustCreate(t, s, stamped("present", 0, []string{"repo:muse"}, nil))
	ctx := context.Background()

	if got, err := s.Get(ctx, "missing"); got != nil || err != nil {
		t.Errorf("get missing = %+v, %v; want nil, nil", got, err)
	}
	versions := []struct {
		id      string
		version int
	}{{"missing", 1}, {"present", 0}, {"present", -1}, {"present", 2}}
	for _, v := range versions {
		if got, err := s.GetVersion(ctx, v.id, v.version); got != nil || err != nil {
			t.Errorf("get %s version %d = %+v, %v; want nil, nil", v.id, v.version, got, err)
		}
	}
	// "pres" is a prefix of a stored id: it must not see that id's data.
	for _, id := range []string{"missing", "pres"} {
		if h, err := s.History(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("history %s = %+v, %v; want ErrNotFound", id, h, err)
		}
	}
}

func testFreshCopies(t *testing.T, open Factory) {
	s := openNew(t, open)
	in := stamped("copies", 0, []string{"repo:muse"}, []string{"t"})
	created := mustCreate(t, s, in)
	want := created.Clone()

	// Scribble over everything the caller holds.
	in.Scope.GraphNodes[0] = "repo:scribbled"
	created.Scope.GraphNodes[0] = "repo:scribbled"
	created.Decisions[0].Statement = "scribbled"
	got := mustGet(t, s, "copies")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("store shares memory with its callers:\n got %+v\nwant %+v", got, want)
	}
	got.Affordances.Invariants[0] = "scribbled"
	listed, err := s.LatestForScope(context.Background(), medallion.Scope{GraphNodes: []string{"repo:muse"}}, 1)
	if err != nil || len(listed) != 1 {
		t.Fatalf("latest for scope: %v, %v", listed, err)
	}
	listed[0].Summary.HighLevel = "scribbled"
	if again := mustGet(t, s, "copies"); !reflect.DeepEqual(again, want) {
		t.Errorf("store shares memory with its callers:\n got %+v\nwant %+v", again, want)
	}
}

func testCount(t *testing.T, open Factory) {
	s := openNew(t, open)
	ctx := context.Background()
	count := func() int {
		t.Helper()
		n, err := s.Count(ctx)
		if err != nil {
			t.Fatalf("count: %v", err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Errorf("empty store count = %d", n)
	}
	a := mustCreate(t, s, stamped("a", 0, []string{"repo:muse"}, nil))
	mustCreate(t, s, stamped("b", 0, []string{"repo:muse"}, nil))
	mustUpdate(t, s, a)
	_, _ = s.Create(ctx, stamped("a", 0, []string{"repo:muse"}, nil)) // ErrExists
	if n := count(); n != 2 {
		t.Errorf("count = %d, want 2 (updates and failed creates add nothing)", n)
	}
}

// scopeFixture is stored by testScopeQueries. The minute is both created_at
// and updated_at; e and f tie so that the id breaks the tie.
var scopeFixture = []struct {
	id     string
	minute int
	nodes  []string
	tags   []string
}{
	{"a", 1, []string{"repo:muse"}, nil},
	{"b", 2, []string{"repo:muse", "module:cli"}, []string{"project_state"}},
	{"c", 3, []string{"repo:other"}, []string{"project_state", "refactor"}},
	{"d", 4, nil, []string{"project_state"}},
	{"f", 5, []string{"repo:muse"}, []string{"project_state", "refactor"}},
	{"e", 5, []string{"repo:muse"}, []string{"other_tag"}},
	{"g", 6, []string{"module:cli", "repo:muse", "lang:go"}, []string{"refactor"}},
}

func testScopeQueries(t *testing.T, open Factory) {
	s := openNew(t, open)
	for _, f := range scopeFixture {
		mustCreate(t, s, stamped(f.id, f.minute, f.nodes, f.tags))
	}
	tests := []struct {
		name  string
		nodes []string
		tags  []string
		limit int
		want  []string
	}{
		{"one node, newest first, ties by id", []string{"repo:muse"}, nil, 10, []string{"g", "e", "f", "b", "a"}},
		{"node subset", []string{"repo:muse", "module:cli"}, nil, 10, []string{"g", "b"}},
		{"node order does not matter", []string{"module:cli", "repo:muse"}, nil, 10, []string{"g", "b"}},
		{"three nodes", []string{"lang:go", "module:cli", "repo:muse"}, nil, 10, []string{"g"}},
		{"duplicate nodes", []string{"repo:muse", "repo:muse"}, nil, 10, []string{"g", "e", "f", "b", "a"}},
		{"unknown node", []string{"repo:nope"}, nil, 10, []string{}},
		{"known and unknown node", []string{"repo:muse", "repo:nope"}, nil, 10, []string{}},
		{"node and tag", []string{"repo:muse"}, []string{"project_state"}, 10, []string{"f", "b"}},
		{"node and tag overlap", []string{"repo:muse"}, []string{"project_state", "other_tag"}, 10, []string{"e", "f", "b"}},
		{"node and tags both held", []string{"repo:muse"}, []string{"project_state", "refactor"}, 10, []string{"g", "f", "b"}},
		{"tags only", nil, []string{"project_state"}, 10, []string{"f", "d", "c", "b"}},
		{"tags only union", nil, []string{"project_state", "other_tag"}, 10, []string{"e", "f", "d", "c", "b"}},
		{"tags only, medallion with both tags once", nil, []string{"refactor", "project_state"}, 10, []string{"g", "f", "d", "c", "b"}},
		{"duplicate tags", nil, []string{"refactor", "refactor"}, 10, []string{"g", "f", "c"}},
		{"unknown tag", nil, []string{"nope"}, 10, []string{}},
		{"node with unknown tag", []string{"repo:muse"}, []string{"nope"}, 10, []string{}},
		{"limit honoured", []string{"repo:muse"}, nil, 2, []string{"g", "e"}},
		{"huge limit", []string{"repo:muse"}, nil, math.MaxInt, []string{"g", "e", "f", "b", "a"}},
		{"limit honoured with tags", nil, []string{"project_state", "refactor"}, 3, []string{"g", "f", "d"}},
		{"limit inside a tie", []string{"repo:muse"}, []string{"other_tag", "refactor"}, 2, []string{"g", "e"}},
		{"empty scope", nil, nil, 10, []string{}},
		{"empty but non-nil scope", []string{}, []string{}, 10, []string{}},
		{"limit 0", []string{"repo:muse"}, nil, 0, []string{}},
		{"limit -1", []string{"repo:muse"}, nil, -1, []string{}},
		{"node with a NUL", []string{"repo:muse\x00"}, nil, 10, []string{}},
		{"tag with a NUL", nil, []string{"refactor\x00"}, 10, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := query(t, s, tt.nodes, tt.tags, tt.limit)
			if !slices.Equal(got, tt.want) {
				t.Errorf("nodes=%q tags=%q limit=%d: got %q, want %q", tt.nodes, tt.tags, tt.limit, got, tt.want)
			}
		})
	}
}

// matchCase is one stored scope of a seed 002 example and whether the
// example's request matches it.
type matchCase struct {
	nodes, tags []string
	match       bool
}

// checkMatches stores one medallion per case and checks which the request
// returns.
func checkMatches(t *testing.T, open Factory, reqNodes, reqTags []string, cases []matchCase) {
	t.Helper()
	s := openNew(t, open)
	var want []string
	for i, c := range cases {
		id := fmt.Sprintf("m%d", i)
		// Newer cases first in the answer: stamp later.
		mustCreate(t, s, stamped(id, i, c.nodes, c.tags))
		if c.match {
			want = append([]string{id}, want...)
		}
	}
	if want == nil {
		want = []string{}
	}
	got := query(t, s, reqNodes, reqTags, 100)
	if !slices.Equal(got, want) {
		for i, c := range cases {
			t.Logf("m%d: nodes=%q tags=%q match=%v", i, c.nodes, c.tags, c.match)
		}
		t.Errorf("request nodes=%q tags=%q: got %q, want %q", reqNodes, reqTags, got, want)
	}
}

// testSeedGraphNodes: seed 002, "graph_nodes Matching".
func testSeedGraphNodes(t *testing.T, open Factory) {
	checkMatches(t, open, []string{"repo:muse"}, nil, []matchCase{
		{nodes: []string{"repo:muse"}, match: true},
		{nodes: []string{"repo:muse", "module:cli"}, match: true},
		{nodes: []string{"repo:other"}},
		{nodes: []string{}, tags: []string{"project_state"}}, // [] needs a tag to be valid
		{nodes: []string{"module:cli", "repo:muse"}, tags: []string{"x"}, match: true},
	})
}

// testSeedTags: seed 002, "tags Matching", with and without graph nodes.
func testSeedTags(t *testing.T, open Factory) {
	cases := []matchCase{
		{nodes: []string{"repo:muse"}, tags: []string{"project_state"}, match: true},
		{nodes: []string{"repo:muse"}, tags: []string{"project_state", "refactor"}, match: true},
		{nodes: []string{"repo:muse"}, tags: []string{}},
		{nodes: []string{"repo:muse"}, tags: []string{"other_tag"}},
	}
	t.Run("tags only", func(t *testing.T) { checkMatches(t, open, nil, []string{"project_state"}, cases) })
	t.Run("with node", func(t *testing.T) { checkMatches(t, open, []string{"repo:muse"}, []string{"project_state"}, cases) })
	// An empty requested tag list matches any tags, none included.
	anyTags := make([]matchCase, len(cases))
	for i, c := range cases {
		c.match = true
		anyTags[i] = c
	}
	t.Run("empty request tags", func(t *testing.T) { checkMatches(t, open, []string{"repo:muse"}, []string{}, anyTags) })
}

func testUpdateMovesIndex(t *testing.T, open Factory) {
	s := openNew(t, open)
	m := mustCreate(t, s, stamped("mover", 0, []string{"repo:a", "module:x"}, []string{"t1", "shared"}))
	m.Scope = medallion.Scope{GraphNodes: []string{"repo:b", "module:x"}, Tags: []string{"t2", "shared"}}
	mustUpdate(t, s, m)

	tests := []struct {
		nodes, tags []string
		want        []string
	}{
		{[]string{"repo:a"}, nil, []string{}},
		{nil, []string{"t1"}, []string{}},
		{[]string{"repo:b"}, nil, []string{"mover"}},
		{nil, []string{"t2"}, []string{"mover"}},
		// Kept node and tag: one entry, not a stale one beside the new.
		{[]string{"module:x"}, nil, []string{"mover"}},
		{nil, []string{"shared"}, []string{"mover"}},
		{nil, []string{"t1", "t2", "shared"}, []string{"mover"}},
		{[]string{"repo:a", "module:x"}, nil, []string{}},
		{[]string{"repo:b", "module:x"}, []string{"t1"}, []string{}},
		{[]string{"repo:b", "module:x"}, []string{"t2"}, []string{"mover"}},
	}
	for _, tt := range tests {
		if got := query(t, s, tt.nodes, tt.tags, 10); !slices.Equal(got, tt.want) {
			t.Errorf("after moving, nodes=%q tags=%q: got %q, want %q", tt.nodes, tt.tags, got, tt.want)
		}
	}
}

func testUpdateReorders(t *testing.T, open Factory) {
	s := openNew(t, open)
	// Stamped in the past, so the store's "now" on update is newer.
	old := mustCreate(t, s, stamped("old", 0, []string{"repo:muse"}, []string{"t"}))
	mustCreate(t, s, stamped("new", 1, []string{"repo:muse"}, []string{"t"}))
	if got := query(t, s, []string{"repo:muse"}, nil, 10); !slices.Equal(got, []string{"new", "old"}) {
		t.Fatalf("before update: %q", got)
	}
	mustUpdate(t, s, old)
	for _, q := range []struct{ nodes, tags []string }{{[]string{"repo:muse"}, nil}, {nil, []string{"t"}}, {[]string{"repo:muse"}, []string{"t"}}} {
		if got := query(t, s, q.nodes, q.tags, 10); !slices.Equal(got, []string{"old", "new"}) {
			t.Errorf("after updating old, nodes=%q tags=%q: got %q, want [old new]", q.nodes, q.tags, got)
		}
	}
}

func testConcurrentUpdates(t *testing.T, open Factory) {
	s := openNew(t, open)
	const writers, rounds = 6, 8
	cur := mustCreate(t, s, stamped("contended", 0, []string{"repo:muse"}, []string{"t"}))
	successes := 0
	for round := range rounds {
		errs := make([]error, writers)
		results := make([]*medallion.Medallion, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range writers {
			m := cur.Clone()
			m.Summary.HighLevel = fmt.Sprintf("round %d writer %d", round, w)
			wg.Go(func() {
				<-start
				results[w], errs[w] = s.Update(context.Background(), m)
			})
		}
		close(start)
		wg.Wait()
		wins := 0
		for w, err := range errs {
			switch {
			case err == nil:
				wins++
				cur = results[w]
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d writer %d: err = %v, want nil or ErrConflict", round, w, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d of %d writers racing from one version won, want exactly 1", round, wins, writers)
		}
		successes += wins
		if got := mustGet(t, s, "contended"); !reflect.DeepEqual(got, cur) {
			t.Fatalf("round %d: stored %+v, want the winner's %+v", round, got, cur)
		}
	}
	if cur.Meta.Version != 1+successes {
		t.Errorf("final version = %d, want %d (1 + successful updates)", cur.Meta.Version, 1+successes)
	}
	h, err := s.History(context.Background(), "contended")
	if err != nil || len(h) != 1+successes {
		t.Errorf("history has %d versions (%v), want %d", len(h), err, 1+successes)
	}
	if got := query(t, s, []string{"repo:muse"}, []string{"t"}, 10); !slices.Equal(got, []string{"contended"}) {
		t.Errorf("index after races: %q, want one entry", got)
	}
}

func testReopen(t *testing.T, open Factory) {
	dir := t.TempDir()
	s := openIn(t, open, dir)
	a := mustCreate(t, s, stamped("a", 0, []string{"repo:muse"}, []string{"t"}))
	a.Summary.HighLevel = "second"
	a = mustUpdate(t, s, a)
	b := mustCreate(t, s, stamped("b", 1, []string{"repo:muse", "module:cli"}, nil))
	hist, err := s.History(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	s = openIn(t, open, dir)
	ctx := context.Background()
	if got := mustGet(t, s, "a"); !reflect.DeepEqual(got, a) {
		t.Errorf("a after reopen:\n got %+v\nwant %+v", got, a)
	}
	if got := mustGet(t, s, "b"); !reflect.DeepEqual(got, b) {
		t.Errorf("b after reopen:\n got %+v\nwant %+v", got, b)
	}
	if got, err := s.History(ctx, "a"); err != nil || !reflect.DeepEqual(got, hist) {
		t.Errorf("history after reopen = %+v, %v; want %+v", got, err, hist)
	}
	if got := query(t, s, []string{"repo:muse"}, nil, 10); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("scope query after reopen: %q, want [a b]", got)
	}
	if n, err := s.Count(ctx); err != nil || n != 2 {
		t.Errorf("count after reopen = %d, %v; want 2", n, err)
	}
	// The reopened store keeps working: versions continue.
	a.Summary.HighLevel = "third"
	if got := mustUpdate(t, s, a); got.Meta.Version != 3 {
		t.Errorf("update after reopen: version %d, want 3", got.Meta.Version)
	}
}

func testCancelledContext(t *testing.T, open Factory) {
	s := openNew(t, open)
	stored := mustCreate(t, s, stamped("ctx", 0, []string{"repo:muse"}, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	update := stored.Clone()
	update.Summary.HighLevel = "cancelled"
	calls := []struct {
		name string
		call func() error
	}{
		{"create", func() error { _, err := s.Create(ctx, stamped("ctx2", 0, []string{"repo:muse"}, nil)); return err }},
		{"update", func() error { _, err := s.Update(ctx, update); return err }},
		{"get", func() error { _, err := s.Get(ctx, "ctx"); return err }},
		{"get version", func() error { _, err := s.GetVersion(ctx, "ctx", 1); return err }},
		{"history", func() error { _, err := s.History(ctx, "ctx"); return err }},
		{"latest for scope", func() error {
			_, err := s.LatestForScope(ctx, medallion.Scope{GraphNodes: []string{"repo:muse"}}, 10)
			return err
		}},
		{"count", func() error { _, err := s.Count(ctx); return err }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v, want context.Canceled", c.name, err)
		}
	}
	if got := mustGet(t, s, "ctx"); !reflect.DeepEqual(got, stored) {
		t.Errorf("a cancelled update changed the medallion: %+v", got)
	}
	if got := mustGet(t, s, "ctx2"); got != nil {
		t.Errorf("a cancelled create stored %+v", got)
	}
}
