package medallion

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func withEvidence() *Medallion {
	m := full()
	m.Evidence = []Evidence{
		{Item: "D-001", SessionID: "s1", EventIDs: []string{"e1", "e2"}},
		{Item: "invariant", Text: "never push to main", SessionID: "s1", EventIDs: []string{"e3"}},
	}
	return m
}

func TestEvidenceRoundTrips(t *testing.T) {
	m := withEvidence()
	b := mustMarshalBinary(t, m)
	var got Medallion
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	if !slices.EqualFunc(got.Evidence, m.Evidence, func(a, b Evidence) bool {
		return a.Item == b.Item && a.Text == b.Text && a.SessionID == b.SessionID && slices.Equal(a.EventIDs, b.EventIDs)
	}) {
		t.Errorf("evidence = %+v, want %+v", got.Evidence, m.Evidence)
	}
	j, err := json.Marshal(full())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(j), `"evidence"`) {
		t.Errorf("a medallion without evidence marshals an evidence key: %s", j)
	}
}

// TestBinaryV1StillDecodes: medallions stored before evidence existed
// (format byte 0x01, nothing after the invariants) decode without it.
func TestBinaryV1StillDecodes(t *testing.T) {
	m := full()
	b := mustMarshalBinary(t, m)
	// A v4 encoding without evidence, review, pins or forgotten items
	// ends in four zero counts: drop them and mark the rest as v1, which
	// is exactly what v1 wrote.
	if !bytes.Equal(b[len(b)-4:], []byte{0, 0, 0, 0}) {
		t.Fatalf("v4 encoding without evidence and review ends in % x, want four zero counts", b[len(b)-4:])
	}
	v1 := append([]byte{binaryV1}, b[1:len(b)-4]...)
	var got Medallion
	if err := got.UnmarshalBinary(v1); err != nil {
		t.Fatalf("UnmarshalBinary(v1): %v", err)
	}
	if got.Meta.MedallionID != m.Meta.MedallionID || len(got.Evidence) != 0 || !slices.Equal(got.Affordances.Invariants, m.Affordances.Invariants) {
		t.Errorf("v1 decode = %+v", got)
	}
}

// TestBinaryV2StillDecodes: medallions stored before review existed
// (format byte 0x02, nothing after the evidence) decode without it, and a
// review round-trips.
func TestBinaryV2StillDecodes(t *testing.T) {
	m := full()
	m.Evidence = []Evidence{{Item: "D-001", SessionID: "s1", EventIDs: []string{"e1"}}}
	b := marshalBinaryAs(m, binaryV4) // v2's evidence, spelled out
	v2 := append([]byte{binaryV2}, b[1:len(b)-3]...)
	var got Medallion
	if err := got.UnmarshalBinary(v2); err != nil {
		t.Fatalf("UnmarshalBinary(v2): %v", err)
	}
	if len(got.Evidence) != 1 || len(got.Review) != 0 {
		t.Errorf("v2 decode: evidence %v review %v", got.Evidence, got.Review)
	}
	m.Review = []Review{{Item: "D-001", Text: "use X", Source: "tier1:m", State: ReviewPending}}
	if err := got.UnmarshalBinary(mustMarshalBinary(t, m)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Review, m.Review) {
		t.Errorf("review round trip: %+v", got.Review)
	}
	m.Review[0].State = "maybe"
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "review[0].state") {
		t.Errorf("Validate of a bad review state = %v", err)
	}
}

func TestValidateEvidence(t *testing.T) {
	tests := []struct {
		name string
		edit func(m *Medallion)
		want []string
	}{
		{"valid", func(*Medallion) {}, nil},
		{"item required", func(m *Medallion) { m.Evidence[1].Item = " " }, []string{"evidence[1].item: required"}},
		{"bounded", func(m *Medallion) {
			for len(m.Evidence) <= MaxEvidence {
				m.Evidence = append(m.Evidence, Evidence{Item: "subsystem", Text: "x"})
			}
		}, []string{"evidence: at most 100 entries (got 101)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := withEvidence()
			tt.edit(m)
			assertProblems(t, problemsOf(t, m), tt.want)
		})
	}
}

func TestJSONSchemaEvidence(t *testing.T) {
	b, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			MaxItems *int `json:"maxItems"`
			Items    struct {
				Required []string `json:"required"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	ev, ok := s.Properties["evidence"]
	switch {
	case !ok:
		t.Fatal("schema has no evidence property")
	case slices.Contains(s.Required, "evidence"):
		t.Error("evidence is required; it is optional")
	case !slices.Contains(ev.Items.Required, "item") || slices.Contains(ev.Items.Required, "text"):
		t.Errorf("evidence[] required = %q, want item but not text", ev.Items.Required)
	case ev.MaxItems == nil || *ev.MaxItems != MaxEvidence:
		t.Errorf("evidence maxItems = %v, want %d", ev.MaxItems, MaxEvidence)
	}
	// A medallion with evidence validates against the schema too.
	if err := resolvedSchema(t).Validate(instance(t, withEvidence())); err != nil {
		t.Errorf("schema rejects a medallion with evidence: %v", err)
	}
}
