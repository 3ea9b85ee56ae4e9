package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/medallion"
)

// putRaw stores c as its latest version with the given value bytes, as an
// older build (or a corrupting one) would have written it.
func putRaw(t *testing.T, b *Badger, c *medallion.Medallion, value []byte) {
	t.Helper()
	index, entry, err := indexEntries(c)
	if err != nil {
		t.Fatal(err)
	}
	err = b.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(latestKey(c.Meta.MedallionID), versionValue(c.Meta.Version)); err != nil {
			return err
		}
		if err := txn.Set(versionKey(c.Meta.MedallionID, c.Meta.Version), value); err != nil {
			return err
		}
		for _, k := range index {
			if err := txn.Set(k, entry); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var d counts
	d.addMedallion(c, 1, true)
	b.counters.committed(&d)
}

func rawValue(t *testing.T, b *Badger, id string, version int) []byte {
	t.Helper()
	var v []byte
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(versionKey(id, version))
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// oldVersion is version 1 of the medallion "old" as an older build wrote
// it, with the summary high.
func oldVersion(high string) *medallion.Medallion {
	return &medallion.Medallion{
		Meta: medallion.Meta{MedallionID: "old", SchemaVersion: medallion.SchemaVersion, Model: "tier0",
			CreatedAt: "2025-01-01T00:00:00.000000Z", UpdatedAt: "2025-01-01T00:00:00.000000Z",
			Status: medallion.StatusActive, Version: 1},
		Scope:     medallion.Scope{GraphNodes: []string{"repo:x"}, Tags: []string{"t"}},
		Summary:   medallion.Summary{HighLevel: high},
		Decisions: []medallion.Decision{{ID: "D-1", Statement: "s", Confidence: 0.5}},
	}
}

// TestReadsJSONVersions: versions written as JSON before the store wrote
// the binary encoding stay readable by every call, and an update of one
// writes the binary encoding beside it.
func TestReadsJSONVersions(t *testing.T) {
	plain := func(c *medallion.Medallion) ([]byte, error) { return json.Marshal(c) }
	indented := func(c *medallion.Medallion) ([]byte, error) { return json.MarshalIndent(c, "\n ", "\t") }
	tests := []struct {
		name   string
		encode func(*medallion.Medallion) ([]byte, error)
	}{
		{"compact JSON", plain},
		{"JSON after whitespace", func(c *medallion.Medallion) ([]byte, error) {
			v, err := indented(c)
			return append([]byte("\r\n \t"), v...), err
		}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Open(t.TempDir(), Options{GCInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })

			old := oldVersion("written as JSON")
			old.Normalize()
			value, err := tt.encode(old)
			if err != nil {
				t.Fatal(err)
			}
			putRaw(t, b, old, value)

			got, err := b.Get(ctx, "old")
			if err != nil || !reflect.DeepEqual(got, old) {
				t.Fatalf("Get = %+v, %v; want %+v", got, err, old)
			}
			if got, err := b.GetVersion(ctx, "old", 1); err != nil || !reflect.DeepEqual(got, old) {
				t.Fatalf("GetVersion = %+v, %v; want %+v", got, err, old)
			}
			if ms, err := b.LatestForScope(ctx, medallion.Scope{GraphNodes: []string{"repo:x"}}, 10); err != nil || len(ms) != 1 || !reflect.DeepEqual(ms[0], old) {
				t.Fatalf("LatestForScope = %+v, %v; want [%+v]", ms, err, old)
			}

			got.Summary.HighLevel = "updated"
			updated, err := b.Update(ctx, got)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if v := rawValue(t, b, "old", 2); v[0] == '{' || bytes.Contains(v, []byte(`"meta"`)) {
				t.Errorf("version 2 was written as JSON: %q", v)
			}
			if !bytes.Equal(rawValue(t, b, "old", 1), value) {
				t.Error("the update rewrote version 1")
			}
			if again, err := b.Get(ctx, "old"); err != nil || !reflect.DeepEqual(again, updated) {
				t.Fatalf("Get after Update = %+v, %v; want %+v", again, err, updated)
			}
			hist, err := b.History(ctx, "old")
			if err != nil {
				t.Fatal(err)
			}
			want := []medallion.VersionInfo{
				{Version: 1, UpdatedAt: old.Meta.UpdatedAt, Model: "tier0", Status: medallion.StatusActive},
				{Version: 2, UpdatedAt: updated.Meta.UpdatedAt, Model: "tier0", Status: medallion.StatusActive},
			}
			if !reflect.DeepEqual(hist, want) {
				t.Errorf("History = %+v, want %+v", hist, want)
			}
		})
	}
}

// TestCorruptVersionIsAnError: a stored value that is neither encoding
// fails the read with the key and the reason, rather than yielding an
// empty medallion.
func TestCorruptVersionIsAnError(t *testing.T) {
	good := &medallion.Medallion{
		Meta: medallion.Meta{MedallionID: "bad", SchemaVersion: medallion.SchemaVersion, Model: "tier0",
			CreatedAt: "2025-01-01T00:00:00.000000Z", UpdatedAt: "2025-01-01T00:00:00.000000Z", Version: 1},
		Scope: medallion.Scope{GraphNodes: []string{"repo:x"}},
	}
	good.Normalize()
	bin, err := good.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		value []byte
		want  string
	}{
		{"unknown format", append([]byte{0x7f}, bin[1:]...), "unknown format byte 0x7f"},
		{"truncated binary", bin[:len(bin)-1], "truncated"},
		{"empty", []byte{}, "empty input"},
		{"broken JSON", []byte(`{"meta":`), "unexpected end of JSON input"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Open(t.TempDir(), Options{GCInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			putRaw(t, b, good, tt.value)
			calls := map[string]func() error{
				"Get":            func() error { _, err := b.Get(ctx, "bad"); return err },
				"GetVersion":     func() error { _, err := b.GetVersion(ctx, "bad", 1); return err },
				"History":        func() error { _, err := b.History(ctx, "bad"); return err },
				"LatestForScope": func() error { _, err := b.LatestForScope(ctx, good.Scope, 1); return err },
			}
			if tt.name == "truncated binary" {
				// History reads only the meta at the front of a version,
				// which is whole; reading the version finds the damage.
				delete(calls, "History")
			}
			for call, f := range calls {
				if err := f(); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "decode v/bad") {
					t.Errorf("%s = %v, want an error naming the key and %q", call, err, tt.want)
				}
			}
		})
	}
}

// TestReadsBinaryV4Versions: a version the build before the evidence
// packing wrote (testdata/medallion-v4.bin, made by that build's
// MarshalBinary: format byte 0x04, evidence spelled out) is read by every
// call; an update stores the next version in the current format and
// keeps the old record as it was (its bytes cannot be rebuilt from the
// current format's units), and both come back whole, also in an export.
func TestReadsBinaryV4Versions(t *testing.T) {
	value, err := os.ReadFile(filepath.Join("testdata", "medallion-v4.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if value[0] != 0x04 {
		t.Fatalf("the fixture's format byte is 0x%02x, want 0x04", value[0])
	}
	old := oldVersion("written in the fourth binary format")
	old.Affordances.Invariants = []string{"never push to main"}
	old.Evidence = []medallion.Evidence{
		{Item: "D-1", SessionID: "491e126e-1e71-469c-ade2-fcc8af567c74", EventIDs: []string{"cc:rec:79d208c7-34d5-4af0-9d7b-f1d477d256f2", "cc:call:toolu_014agb5uL5BwdxcLJpnS4JUd"}},
		{Item: "invariant", Text: "never push to main", SessionID: "491e126e-1e71-469c-ade2-fcc8af567c74", EventIDs: []string{"cx:msg:af32ff43b8580a0b"}},
	}
	old.Normalize()
	ctx := context.Background()
	b, err := Open(t.TempDir(), Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	putRaw(t, b, old, value)

	got, err := b.Get(ctx, "old")
	if err != nil || !reflect.DeepEqual(got, old) {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, old)
	}
	got.Evidence = append(got.Evidence, medallion.Evidence{Item: "invariant", Text: "never push to main", SessionID: "s2", EventIDs: []string{"cc:rec:03ffd31e-6bc0-4899-9df7-9b484cfda8cf"}})
	updated, err := b.Update(ctx, got)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if !bytes.Equal(rawValue(t, b, "old", 1), value) {
		t.Error("the update rewrote the v4 record")
	}
	if v := rawValue(t, b, "old", 2); v[0] == 0x04 {
		t.Error("version 2 was written in the old format")
	}
	for v, want := range map[int]*medallion.Medallion{1: old, 2: updated} {
		if m, err := b.GetVersion(ctx, "old", v); err != nil || !reflect.DeepEqual(m, want) {
			t.Errorf("GetVersion(%d) = %+v, %v; want %+v", v, m, err, want)
		}
	}
	var lines [][]byte
	if _, err := b.ExportJSON(ctx, func(line []byte) error {
		lines = append(lines, bytes.Clone(line))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []*medallion.Medallion{old, updated} {
		js, _ := json.Marshal(want)
		if i >= len(lines) || !bytes.Equal(lines[i], append(js, '\n')) {
			t.Errorf("export line %d = %s, want %s", i+1, lines[min(i, len(lines)-1)], js)
		}
	}
}

// TestLatestForScopeWithoutEvidence: the same answers as LatestForScope,
// in the same order, with the evidence left out, for versions stored in
// the current format, the fourth one and JSON.
func TestLatestForScopeWithoutEvidence(t *testing.T) {
	ctx := context.Background()
	b, err := Open(t.TempDir(), Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	v4, err := os.ReadFile(filepath.Join("testdata", "medallion-v4.bin"))
	if err != nil {
		t.Fatal(err)
	}
	var old medallion.Medallion
	if err := old.UnmarshalBinary(v4); err != nil {
		t.Fatal(err)
	}
	putRaw(t, b, &old, v4)
	asJSON := oldVersion("written as JSON")
	asJSON.Meta.MedallionID = "json"
	asJSON.Evidence = []medallion.Evidence{{Item: "D-1", SessionID: "s", EventIDs: []string{"cx:msg:0123456789abcdef"}}}
	asJSON.Normalize()
	js, err := json.Marshal(asJSON)
	if err != nil {
		t.Fatal(err)
	}
	putRaw(t, b, asJSON, js)
	for i := range 3 {
		m := oldVersion(fmt.Sprint("current ", i))
		m.Meta.MedallionID = fmt.Sprint("current-", i)
		m.Affordances.Invariants = []string{"run go generate first"}
		m.Evidence = []medallion.Evidence{{Item: "invariant", Text: "run go generate first", SessionID: "491e126e-1e71-469c-ade2-fcc8af567c74",
			EventIDs: []string{"cc:rec:79d208c7-34d5-4af0-9d7b-f1d477d256f2", "cc:call:toolu_014agb5uL5BwdxcLJpnS4JUd"}}}
		if _, err := b.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	scope := medallion.Scope{GraphNodes: []string{"repo:x"}}
	whole, err := b.LatestForScope(ctx, scope, 10)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := b.LatestForScopeWithoutEvidence(ctx, scope, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 5 || len(bare) != len(whole) {
		t.Fatalf("%d and %d answers, want 5 each", len(whole), len(bare))
	}
	for i := range whole {
		if len(whole[i].Evidence) == 0 {
			t.Errorf("%s: LatestForScope gave no evidence", whole[i].Meta.MedallionID)
		}
		want := *whole[i]
		want.Evidence = nil
		if !reflect.DeepEqual(*bare[i], want) {
			t.Errorf("answer %d without evidence:\n got %+v\nwant %+v", i, *bare[i], want)
		}
	}
}
