package medallion

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func marshal(t *testing.T, m *Medallion) []byte {
	t.Helper()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func unmarshal(t *testing.T, b []byte) *Medallion {
	t.Helper()
	var m Medallion
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode: %v\n%s", err, b)
	}
	return &m
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the marshalled medallion (go test -update rewrites it):\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	sparse := &Medallion{
		Meta:  Meta{MedallionID: "sparse", SchemaVersion: SchemaVersion, CreatedAt: "2025-01-01T00:00:00Z", UpdatedAt: "2025-01-01T00:00:00Z", Status: StatusStale},
		Scope: Scope{Tags: []string{"t"}},
	}
	normalized := sparse.Clone()
	normalized.Normalize()
	fullNormalized := full()
	fullNormalized.Normalize()

	tests := []struct {
		name   string
		m      *Medallion
		golden string
	}{
		{"full", full(), "full.json"},
		{"full normalized", fullNormalized, ""},
		{"sparse", sparse, ""},
		{"sparse normalized", normalized, "sparse_normalized.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := marshal(t, tt.m)
			if tt.golden != "" {
				golden(t, tt.golden, first)
			}
			back := unmarshal(t, first)
			if second := marshal(t, back); !bytes.Equal(first, second) {
				t.Errorf("marshal → unmarshal → marshal changed the bytes:\nfirst:\n%s\nsecond:\n%s", first, second)
			}
			back.Normalize()
			tt.m.Normalize()
			if a, b := marshal(t, tt.m), marshal(t, back); !bytes.Equal(a, b) {
				t.Errorf("after Normalize the round trip differs:\nbefore:\n%s\nafter:\n%s", a, b)
			}
			if err := back.Validate(); err != nil {
				t.Errorf("a valid medallion came back invalid: %v", err)
			}
		})
	}
}

func TestGoldenFilesAreValid(t *testing.T) {
	for _, name := range []string{"full.json", "sparse_normalized.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := unmarshal(t, b).Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNormalize(t *testing.T) {
	m := &Medallion{OpenQuestions: []OpenQuestion{{ID: "Q-1"}}}
	m.Normalize()
	b := marshal(t, m)
	if bytes.Contains(b, []byte("null")) {
		t.Errorf("a normalized medallion marshals a null:\n%s", b)
	}
	again := m.Clone()
	again.Normalize()
	if !reflect.DeepEqual(m, again) {
		t.Error("Normalize is not idempotent")
	}

	// On a full medallion Normalize only turns the one nil list into [].
	f := full()
	want := bytes.Replace(marshal(t, f), []byte(`"blocked_on": null`), []byte(`"blocked_on": []`), 1)
	f.Normalize()
	if got := marshal(t, f); !bytes.Equal(got, want) {
		t.Errorf("Normalize changed more than nil lists:\n got:\n%s\nwant:\n%s", got, want)
	}
}

func TestClone(t *testing.T) {
	orig := full()
	want := marshal(t, orig)
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatal("Clone is not equal to the original")
	}
	// Mutate every slice of the copy: the original must not change.
	c.Scope.GraphNodes[0] = "x"
	c.Scope.Tags[0] = "x"
	c.Summary.Subsystems[0].Name = "x"
	c.Decisions[0].Confidence = 0.1
	c.OpenQuestions[0].BlockedOn[0] = "x"
	c.OpenQuestions[1].Question = "x"
	c.Affordances.RecommendedEntryPoints[0] = "x"
	c.Affordances.AvoidRepeating[0] = "x"
	c.Affordances.Invariants[0] = "x"
	c.Meta.Version = 99
	if got := marshal(t, orig); !bytes.Equal(got, want) {
		t.Errorf("mutating the clone changed the original:\n%s", got)
	}
	// Nil stays nil, so a clone marshals like its original.
	sparse := &Medallion{}
	if got, want := marshal(t, sparse.Clone()), marshal(t, sparse); !bytes.Equal(got, want) {
		t.Errorf("clone of an empty medallion marshals as\n%s\nwant\n%s", got, want)
	}
}

func TestTimes(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2025, 11, 17, 9, 30, 0, 0, time.UTC), "2025-11-17T09:30:00.000000Z"},
		{time.Date(2025, 11, 17, 10, 30, 0, 123456789, paris), "2025-11-17T09:30:00.123456Z"},
		{time.Date(1999, 12, 31, 23, 59, 59, 1000, time.UTC), "1999-12-31T23:59:59.000001Z"},
	}
	for _, tt := range tests {
		got := FormatTime(tt.in)
		if got != tt.want {
			t.Errorf("FormatTime(%v) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := ParseTime(got)
		if err != nil {
			t.Fatalf("ParseTime(%q): %v", got, err)
		}
		if !back.Equal(tt.in.Truncate(time.Microsecond)) {
			t.Errorf("ParseTime(%q) = %v, want %v", got, back, tt.in.Truncate(time.Microsecond))
		}
		if FormatTime(back) != got {
			t.Errorf("FormatTime(ParseTime(%q)) = %q", got, FormatTime(back))
		}
	}
	for _, bad := range []string{"", "2025-11-17", "2025-11-17 09:30:00Z", "2025-11-17T09:30:00"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) succeeded, want an error", bad)
		}
	}
}
