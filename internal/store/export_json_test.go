package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

// exportEncoded is what writers of an export wrote before ExportJSON:
// every version Export hands out through json.Encoder.
func exportEncoded(t *testing.T, s *Badger) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := s.Export(context.Background(), func(m *medallion.Medallion) error { return enc.Encode(m) }); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// exportLines is what ExportJSON hands out, joined.
func exportLines(t *testing.T, s *Badger) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	_, err := s.ExportJSON(context.Background(), func(line []byte) error { buf.Write(line); return nil })
	return buf.Bytes(), err
}

// TestExportJSONAsEncodingJSON: ExportJSON writes byte for byte what
// json.Encoder wrote for every version Export hands out (an export is a
// backup users diff), over versions kept as deltas and keyframes, texts
// JSON escapes, versions stored as JSON by an older build (with null
// lists, which the binary encoding cannot hold) and in an older binary
// format.
func TestExportJSONAsEncodingJSON(t *testing.T) {
	prev := keyframeEvery
	keyframeEvery = 16
	t.Cleanup(func() { keyframeEvery = prev })
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	grow(t, s, "busy", 2*keyframeEvery+5)

	odd := growingMedallion("odd")
	odd.Summary.HighLevel = "<b>\"quoted\"</b> & \\ café\u2028\t日本 😀 \x7f"
	odd.Decisions = []medallion.Decision{{ID: "D-001", Statement: "tiny", Rationale: "user request", Confidence: 1e-7}}
	odd.Pinned = []medallion.Pin{{Item: "D-001"}}
	odd.Forgotten = []medallion.Forgotten{{Kind: medallion.KindDecision, Fingerprint: "abc"}}
	odd.Review = []medallion.Review{{Item: "D-001", Text: "tiny", Source: "tier1:m", State: medallion.ReviewPending}}
	if _, err := s.Create(ctx, odd); err != nil {
		t.Fatal(err)
	}

	legacy := growingMedallion("legacy")
	legacy.Meta.CreatedAt, legacy.Meta.UpdatedAt = "2025-01-01T00:00:00.000000Z", "2025-01-01T00:00:00.000000Z"
	legacy.Meta.Status, legacy.Meta.Version = medallion.StatusActive, 1
	legacy.Scope.Tags = nil // stored as null
	value, err := json.Marshal(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(value, []byte(`"tags":null`)) {
		t.Fatalf("the legacy record has no null list: %s", value)
	}
	putRaw(t, s, legacy, value)

	v1 := growingMedallion("v1")
	v1.Meta.CreatedAt, v1.Meta.UpdatedAt = legacy.Meta.CreatedAt, legacy.Meta.UpdatedAt
	v1.Meta.Status, v1.Meta.Version = medallion.StatusActive, 1
	v1.Normalize()
	bin, err := v1.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Format 1 ended before the evidence: a v4 encoding without evidence,
	// review, pins or forgotten items ends in their four zero counts.
	putRaw(t, s, v1, append([]byte{0x01}, bin[1:len(bin)-4]...))

	want := exportEncoded(t, s)
	got, err := exportLines(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(want, []byte("\n")); n != 2*keyframeEvery+5+3 {
		t.Fatalf("the export holds %d versions", n)
	}
	for _, must := range []string{`"tags":null`, `\u003cb\u003e`, `\u2028`, `1e-7`, `"pinned":[{"item":"D-001"}]`} {
		if !bytes.Contains(want, []byte(must)) {
			t.Errorf("the export lacks %s: the test misses a case", must)
		}
	}
	if !bytes.Equal(got, want) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d differs:\n got: %s\nwant: %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("ExportJSON gave %d lines, json.Encoder %d", len(gl), len(wl))
	}
}

// TestExportJSONCorrupt: a version that cannot be read fails ExportJSON
// as it fails Export, naming the key, and the error fn returns stops it.
func TestExportJSONCorrupt(t *testing.T) {
	s, err := Open(t.TempDir(), Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	grow(t, s, "a", 3)
	stop := errors.New("stop")
	n := 0
	if _, err := s.ExportJSON(context.Background(), func([]byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("ExportJSON after fn failed: %v, %d lines", err, n)
	}
	bad := growingMedallion("bad")
	bad.Meta.UpdatedAt, bad.Meta.Version = "2025-01-01T00:00:00.000000Z", 1
	putRaw(t, s, bad, []byte{0x04, 0xff})
	if _, err := exportLines(t, s); err == nil || !bytes.Contains([]byte(err.Error()), []byte("v/bad")) {
		t.Errorf("ExportJSON of a corrupt version: %v", err)
	}
}

// TestExportState: the state ExportJSON read its snapshot in is the one
// ExportState reads while nothing is written; it stays across a reopen
// and a write of anything but a medallion, and every medallion write
// (create, update, import) changes it.
func TestExportState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	state := func() ExportState {
		t.Helper()
		st, err := s.ExportState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	empty := state()
	if empty != (ExportState{}) {
		t.Errorf("state of an empty store %+v", empty)
	}
	versions := grow(t, s, "a", 3)
	exported, err := s.ExportJSON(ctx, func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if now := state(); now != exported || now.Versions != 3 {
		t.Fatalf("ExportState %+v, ExportJSON's %+v", now, exported)
	}
	if err := s.PutAux(ctx, "test/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{GCInterval: -1, Reserve: -1}); err != nil {
		t.Fatal(err)
	}
	if now := state(); now != exported {
		t.Fatalf("after another write and a reopen %+v, want %+v", now, exported)
	}
	last := exported
	write := func(what string, fn func() error) {
		t.Helper()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if now := state(); now == last || now.LastCommit <= last.LastCommit {
			t.Fatalf("%s: state %+v after %+v", what, now, last)
		}
		last = state()
	}
	write("update", func() error {
		m := versions[len(versions)-1].Clone()
		m.Summary.HighLevel = "again"
		_, err := s.Update(ctx, m)
		return err
	})
	write("create", func() error { _, err := s.Create(ctx, growingMedallion("b")); return err })
	write("import", func() error {
		return s.Import(ctx, []*medallion.Medallion{func() *medallion.Medallion { m := versions[0].Clone(); m.Meta.MedallionID = "c"; return m }()})
	})
}
