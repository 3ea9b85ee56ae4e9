package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
)

// checkpointed returns the next version of m as a busy curator would write
// it: evidence for new events (the oldest dropped past MaxEvidence), now
// and then a new or reworded decision, an invariant, a resolved question.
func checkpointed(rng *rand.Rand, m *medallion.Medallion, n int) *medallion.Medallion {
	c := m.Clone()
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()>>16)
	}
	session := fmt.Sprintf("%08x-3c1d-4b7a-9f1e-2a6d8c4e9b10", n/50)
	for range 1 + rng.IntN(2) {
		ev := medallion.Evidence{Item: "invariant", Text: fmt.Sprintf("invariant text number %d that the user stated in a long sentence", rng.IntN(40)), SessionID: session}
		for range 1 + rng.IntN(4) {
			ev.EventIDs = append(ev.EventIDs, uuid())
		}
		c.Evidence = append(c.Evidence, ev)
	}
	if len(c.Evidence) > medallion.MaxEvidence {
		c.Evidence = slices.Clone(c.Evidence[len(c.Evidence)-medallion.MaxEvidence:])
	}
	switch rng.IntN(8) {
	case 0:
		c.Decisions = append(c.Decisions, medallion.Decision{ID: fmt.Sprintf("D-%04d", n),
			Statement: fmt.Sprintf("decision %d: keep the offsets in the same transaction as the events", n), Rationale: "never lose an event", Confidence: 0.8})
		if len(c.Decisions) > 40 { // the curator's lists are bounded too
			c.Decisions = c.Decisions[1:]
		}
	case 1:
		if len(c.Decisions) > 0 {
			c.Decisions[rng.IntN(len(c.Decisions))].Rationale = fmt.Sprintf("reworded at checkpoint %d", n)
		}
	case 2:
		c.Affordances.Invariants = append(c.Affordances.Invariants, fmt.Sprintf("invariant %d from checkpoint %d", len(c.Affordances.Invariants), n))
		if len(c.Affordances.Invariants) > 30 {
			c.Affordances.Invariants = c.Affordances.Invariants[1:]
		}
	case 3:
		c.Summary.HighLevel = fmt.Sprintf("The store keeps sessions and medallions; rewritten at checkpoint %d.", n)
	}
	c.Meta.KnowledgeMaxTS = medallion.FormatTime(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute))
	return c
}

// growingMedallion is version 1 of the medallion checkpointed grows.
func growingMedallion(id string) *medallion.Medallion {
	return &medallion.Medallion{
		Meta:  medallion.Meta{MedallionID: id, SchemaVersion: medallion.SchemaVersion, Model: "tier0"},
		Scope: medallion.Scope{GraphNodes: []string{"repo:muse"}, Tags: []string{"project_state"}},
		Summary: medallion.Summary{HighLevel: "The store keeps sessions and medallions.", Subsystems: []medallion.Subsystem{
			{Name: "ingest", Status: medallion.SubsystemStable, Notes: "tails transcripts and stores their events with the file offsets, in one transaction"},
			{Name: "store", Status: medallion.SubsystemInProgress, Notes: "keeps old versions as differences from the next one"},
			{Name: "history", Status: medallion.SubsystemStable, Notes: "lists versions from their meta and diffs two of them"},
		}},
		Affordances: medallion.Affordances{Invariants: []string{
			"offsets advance only with the events they cover, never ahead of them",
			"transcript content is never logged above Debug, and secrets never leave the machine",
		}},
	}
}

// grow stores n versions of id through Update and returns each as the
// store returned it.
func grow(t testing.TB, s *Badger, id string, n int) []*medallion.Medallion {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 5))
	m, err := s.Create(ctx, growingMedallion(id))
	if err != nil {
		t.Fatal(err)
	}
	out := []*medallion.Medallion{m}
	for i := 2; i <= n; i++ {
		if m, err = s.Update(ctx, checkpointed(rng, m, i)); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// records reads every version record of id as stored.
func records(t testing.TB, s *Badger, id string) [][]byte {
	t.Helper()
	var out [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		prefix := versionPrefix(id)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVersionsAsDeltas: every version but the latest and the keyframes is
// stored as a delta, far smaller than the version; every version reads
// back exactly as it was written, through GetVersion, History, Export
// into Import, and Salvage.
func TestVersionsAsDeltas(t *testing.T) {
	prev := keyframeEvery
	keyframeEvery = 16
	t.Cleanup(func() { keyframeEvery = prev })
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	n := 2*keyframeEvery + 10
	want := grow(t, s, "busy", n)

	recs := records(t, s, "busy")
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	var stored, whole int
	for i, r := range recs {
		v := i + 1
		enc, _ := want[i].MarshalBinary()
		stored, whole = stored+len(r), whole+len(enc)
		wantDelta := v != n && v%keyframeEvery != 0
		if isDelta(r) != wantDelta {
			t.Errorf("version %d: delta %v, want %v (%d bytes whole, %d stored)", v, isDelta(r), wantDelta, len(enc), len(r))
		}
	}
	t.Logf("%d versions: %d bytes stored, %d whole (%.1f%%); latest %d bytes", n, stored, whole, 100*float64(stored)/float64(whole), len(recs[n-1]))
	if stored*3 > whole {
		t.Errorf("the versions take %d bytes stored against %d whole: deltas do not pay", stored, whole)
	}

	for i, w := range want {
		got, err := s.GetVersion(ctx, "busy", i+1)
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Fatalf("GetVersion(%d) = %v; differs from what Update returned", i+1, err)
		}
	}
	hist, err := s.History(ctx, "busy")
	if err != nil || len(hist) != n {
		t.Fatalf("History: %d entries, %v", len(hist), err)
	}
	for i, h := range hist {
		if w := want[i].Meta; h != (medallion.VersionInfo{Version: w.Version, UpdatedAt: w.UpdatedAt, Model: w.Model, Status: w.Status}) {
			t.Fatalf("History[%d] = %+v, want the meta of %+v", i, h, w)
		}
	}

	// Export hands out whole versions; Import stores them as deltas again.
	var exported []*medallion.Medallion
	if err := s.Export(ctx, func(m *medallion.Medallion) error { exported = append(exported, m); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(exported, want) {
		t.Fatal("Export differs from the versions written")
	}
	other, err := Open(t.TempDir(), Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Import(ctx, exported); err != nil {
		t.Fatal(err)
	}
	if got := records(t, other, "busy"); !reflect.DeepEqual(got, recs) {
		t.Error("Import stored other records than the updates did")
	}
	for _, v := range []int{1, keyframeEvery - 1, keyframeEvery, n - 1, n} {
		if got, err := other.GetVersion(ctx, "busy", v); err != nil || !reflect.DeepEqual(got, want[v-1]) {
			t.Errorf("imported version %d: %v", v, err)
		}
	}

	// Salvage rebuilds every version from what the store holds.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var salvaged []*medallion.Medallion
	res, err := Salvage(dir, filepath.Join(t.TempDir(), "scratch"), nil, func(m *medallion.Medallion) error {
		salvaged = append(salvaged, m)
		return nil
	})
	if err != nil || res.Unreadable != 0 || !reflect.DeepEqual(salvaged, want) {
		t.Fatalf("salvage: %+v, %v; %d versions, equal %v", res, err, len(salvaged), reflect.DeepEqual(salvaged, want))
	}
}

// TestDeltaRoundTrip: a delta rebuilds its target exactly, whatever the
// two versions hold, including versions sharing nothing.
func TestDeltaRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m := growingMedallion("x")
	m.Normalize()
	for i := range 300 {
		next := checkpointed(rng, m, i)
		next.Meta.Version = m.Meta.Version + 1
		if i%50 == 0 {
			next = growingMedallion("y") // nothing in common
		}
		base, baseEnds := next.MarshalBinaryUnits()
		target, targetEnds := m.MarshalBinaryUnits()
		d := makeDelta(7, base, baseEnds, target, targetEnds)
		got, err := applyDelta(nil, base, mustOps(t, d, 7))
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("step %d: rebuilt %d bytes, want %d: %v", i, len(got), len(target), err)
		}
		if meta, err := recordMeta(d); err != nil || meta != m.Meta {
			t.Fatalf("step %d: meta of the delta %+v, %v", i, meta, err)
		}
		m = next
	}
	for _, bad := range [][]byte{{deltaFormat}, {deltaFormat, 0}, {deltaFormat, 1, 0x05}, {deltaFormat, 1, 0x08, 0x7f}} {
		if base, ops, err := parseDelta(bad); err == nil {
			if _, err := applyDelta(nil, []byte("base"), ops); err == nil {
				t.Errorf("%x (base %d) applied without an error", bad, base)
			}
		}
	}
}

func mustOps(t *testing.T, d []byte, base int) []byte {
	t.Helper()
	b, ops, err := parseDelta(d)
	if err != nil || b != base {
		t.Fatalf("delta header: base %d, %v", b, err)
	}
	return ops
}

// TestDeltaOverOlderFormats: a version an older build stored (JSON) stays
// as it is when a newer one follows; the new versions are deltas again.
func TestDeltaOverOlderFormats(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := growingMedallion("legacy")
	old.Normalize()
	old.Meta.CreatedAt, old.Meta.UpdatedAt, old.Meta.Status, old.Meta.Version = "2025-01-01T00:00:00.000000Z", "2025-01-01T00:00:00.000000Z", medallion.StatusActive, 1
	js, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	putRaw(t, s, old, js)
	rng := rand.New(rand.NewPCG(1, 1))
	m, err := s.Get(ctx, "legacy")
	if err != nil {
		t.Fatal(err)
	}
	want := []*medallion.Medallion{m}
	for i := 2; i <= 4; i++ {
		if m, err = s.Update(ctx, checkpointed(rng, m, i)); err != nil {
			t.Fatal(err)
		}
		want = append(want, m)
	}
	recs := records(t, s, "legacy")
	if !bytes.Equal(recs[0], js) || !isDelta(recs[1]) || !isDelta(recs[2]) || isDelta(recs[3]) {
		t.Errorf("records: JSON kept %v, deltas %v %v %v", bytes.Equal(recs[0], js), isDelta(recs[1]), isDelta(recs[2]), isDelta(recs[3]))
	}
	for i, w := range want {
		if got, err := s.GetVersion(ctx, "legacy", i+1); err != nil || !reflect.DeepEqual(got, w) {
			t.Errorf("version %d: %v", i+1, err)
		}
	}
}
