package medallion

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// marshalBinaryAs encodes m in format (binaryV4 or binaryV5).
func marshalBinaryAs(m *Medallion, format byte) []byte {
	e := encoder{}
	m.encodeAs(&e, format)
	return e.b
}

// realEvidence is evidence as Tier 0 writes it from real transcripts:
// runs of one session, list items' texts, and the ids Claude Code, Codex
// and the position-derived ids look like; and what must stay literal:
// a UUID in capitals, an odd or short hex tail, a text no list holds.
func realEvidence() *Medallion {
	m := full()
	m.Summary.Subsystems = []Subsystem{{Name: "internal/store", Status: SubsystemStable}, {Name: "cmd/x", Status: SubsystemInProgress, Notes: "n"}}
	m.Affordances.Invariants = []string{"never push to main", "run go generate first"}
	m.Affordances.AvoidRepeating = []string{"go test fails without go.sum: go mod download"}
	m.Affordances.RecommendedEntryPoints = []string{"cmd/x/main.go"}
	m.Evidence = []Evidence{
		{Item: "D-001", SessionID: "491e126e-1e71-469c-ade2-fcc8af567c74", EventIDs: []string{"cc:rec:79d208c7-34d5-4af0-9d7b-f1d477d256f2", "cc:rec:03ffd31e-6bc0-4899-9df7-9b484cfda8cf"}},
		{Item: ItemInvariant, Text: "run go generate first", SessionID: "491e126e-1e71-469c-ade2-fcc8af567c74", EventIDs: []string{"cc:call:toolu_014agb5uL5BwdxcLJpnS4JUd", "cc:rec:c3e4d9d7-4c50-4d9e-8a52-58d49da172c6"}},
		{Item: ItemSubsystem, Text: "cmd/x", SessionID: "019d7ecc-68b7-7783-b52d-6bb5efe46f26", EventIDs: []string{"cx:msg:af32ff43b8580a0b", "cx:msg:f3dfb82b0dd6062b"}},
		{Item: ItemEntryPoint, Text: "cmd/x/main.go", SessionID: "019d7ecc-68b7-7783-b52d-6bb5efe46f26", EventIDs: []string{"cc:msg:msg_01M6vNscvMpr7b1s2YSbXXaS:9baf88412dc5fb37"}},
		{Item: ItemAvoidRepeating, Text: "a remedy since dropped from the list", SessionID: "", EventIDs: []string{"gm:pos:0123456789abcdef"}},
		{Item: ItemAvoidRepeating, Text: "go test fails without go.sum: go mod download", SessionID: "s/sidechain", EventIDs: []string{
			"cc:rec:79D208C7-34D5-4AF0-9D7B-F1D477D256F2", "cx:msg:abc", "x:0123456789abcde", "0123456789abcdef", "79d208c7-34d5-4af0-9d7b-f1d477d256f2", "", "é:deadbeefdeadbeef"}},
		{Item: "Q-002", SessionID: "s/sidechain", EventIDs: []string{}},
		{Item: "unknown-list", Text: "cmd/x", SessionID: "s/sidechain", EventIDs: []string{"cc:rec:79d208c7-34d5-4af0-9d7b-f1d477d256f2"}},
	}
	return m
}

// fuzzSeeds are encodings that reach every path of both readers: the
// v5 evidence of realEvidence and of edgeEvidence (a two-byte id tag, a
// subsystem's text by reference, a session back to "", letters-and-digits
// tails of every length mod 4), and realEvidence as v4 wrote it.
func fuzzSeeds() [][]byte {
	edge := realEvidence()
	edge.Evidence = []Evidence{
		{Item: ItemSubsystem, Text: "cmd/x", SessionID: "s", EventIDs: []string{strings.Repeat("p", 130) + ":0123456789abcdef", "x_ABCDEFGHI", "x_ABCDEFGHIJ"}},
		{Item: ItemEntryPoint, Text: "cmd/x/main.go", EventIDs: []string{"x_ABCDEFGHIJK", "x_ABCDEFGHIJKL", strings.Repeat("p", 130) + ":0123456789abcdef"}},
	}
	return [][]byte{
		marshalBinaryAs(realEvidence(), binaryV5),
		marshalBinaryAs(edge, binaryV5),
		marshalBinaryAs(realEvidence(), binaryV4),
	}
}

// TestEvidenceV5RoundTrips: packed evidence decodes to what was encoded,
// its JSON is encoding/json's, and it encodes again to the same bytes (the
// store compares them before storing an old version as a delta).
func TestEvidenceV5RoundTrips(t *testing.T) {
	m := realEvidence()
	b := checkRoundTrips(t, "real evidence", m)
	v4 := marshalBinaryAs(m, binaryV4)
	t.Logf("evidence of %d entries: v4 %d bytes, v5 %d", len(m.Evidence), len(v4), len(b))
	if len(b) >= len(v4)-200 {
		t.Errorf("v5 is %d bytes, v4 %d: the packing saves too little", len(b), len(v4))
	}
}

// checkRoundTrips holds the encoding of m to what the store and the
// export rely on, and returns it: its units are MarshalBinary's bytes,
// cut in order; it decodes to m Normalized and encodes again to the same
// bytes; AppendJSON writes what encoding/json writes for the decoded
// medallion.
func checkRoundTrips(t *testing.T, name string, m *Medallion) []byte {
	t.Helper()
	b := mustMarshalBinary(t, m)
	units, ends := m.MarshalBinaryUnits()
	if !bytes.Equal(units, b) || len(ends) == 0 || ends[len(ends)-1] != len(b) {
		t.Fatalf("%s: MarshalBinaryUnits differs from MarshalBinary or ends short of it", name)
	}
	for i := 1; i < len(ends); i++ {
		if ends[i] <= ends[i-1] {
			t.Fatalf("%s: unit %d ends at %d, not after %d", name, i, ends[i], ends[i-1])
		}
	}
	var got Medallion
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !reflect.DeepEqual(&got, normalized(m)) {
		t.Fatalf("%s: round trip:\n got %q\nwant %q", name, got.Evidence, m.Evidence)
	}
	if again := mustMarshalBinary(t, &got); !bytes.Equal(again, b) {
		t.Fatalf("%s: the decoded medallion encodes to other bytes", name)
	}
	want, err := viaEncodingJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if js, err := AppendJSON(nil, b); err != nil || !bytes.Equal(js, want) {
		t.Fatalf("%s: AppendJSON = %s, %v\nwant %s", name, js, err, want)
	}
	return b
}

// TestEvidenceV5Edges: the packing's edges, all in one medallion and
// each entry and id alone (where every prefix is new): ids that are a
// UUID with or without a prefix (which may itself end in hex digits),
// hex and letters-and-digits tails of every length from 0 to 41 behind
// prefixes up to 400 bytes (multi-byte tags), invalid UTF-8 and what
// JSON escapes; texts that are empty, duplicated in their list, in
// another list only, or a subsystem named like the list; sessions that
// go back to "" after a non-empty one.
func TestEvidenceV5Edges(t *testing.T) {
	const uuid = "79d208c7-34d5-4af0-9d7b-f1d477d256f2"
	const alnum = "014agb5uL5BwdxcLJpnS4JUdZz09xyXY014agb5uL5Bwd"
	var ids []string
	prefixes := []string{"", ":", "a", "cc:rec:", "abc", "dead", "0", "x:dead", "é", "\xff", "\xc3", "\xe2\x80",
		"<&>", "\u2028", strings.Repeat("p", 127), strings.Repeat("q", 128), strings.Repeat("r:", 200), "cc:call:toolu_", "a-", "-", "_"}
	for _, p := range prefixes {
		ids = append(ids, p+uuid, p+strings.ToUpper(uuid), p+uuid[1:], p+"0"+uuid)
		for n := 0; n <= 41; n++ {
			ids = append(ids, p+strings.Repeat("ab", 21)[:n], p+alnum[:n], p+strings.Repeat("9", n))
		}
	}
	ids = append(ids, strings.Repeat("ab", 300), strings.Repeat("Zz", 300), strings.Repeat("é", 100)+uuid)
	kinds := map[uint64]bool{}
	for _, id := range ids {
		kind, _, _ := splitEventID(id)
		kinds[kind] = true
	}
	if len(kinds) != idKinds {
		t.Fatalf("the ids pack as %d kinds of %d", len(kinds), idKinds)
	}
	m := full()
	m.Summary.Subsystems = []Subsystem{{Name: "subsystem"}, {Name: "a"}, {Name: "a"}, {Name: ""}}
	m.Affordances.Invariants = []string{"", "dup", "dup", "x", "invariant"}
	m.Affordances.AvoidRepeating = []string{"x", "only here", "\xff"}
	m.Affordances.RecommendedEntryPoints = []string{}
	items := []string{ItemInvariant, ItemAvoidRepeating, ItemEntryPoint, ItemSubsystem, "D-001", "", "Invariant"}
	texts := []string{"", "dup", "x", "only here", "a", "subsystem", "invariant", "\xff", "not in any list"}
	sessions := []string{"", "s1", "", "s1", "s2", "", strings.Repeat("s", 300)}
	for k := 0; len(ids) > 0; k++ {
		v := Evidence{Item: items[k%len(items)], Text: texts[k%len(texts)], SessionID: sessions[k%len(sessions)]}
		n := min(len(ids), k%7)
		v.EventIDs, ids = ids[:n:n], ids[n:]
		if n == 0 && k%2 == 0 {
			v.EventIDs = nil
		}
		m.Evidence = append(m.Evidence, v)
	}
	checkRoundTrips(t, "all", m)
	for i, v := range m.Evidence {
		one := m.Clone()
		one.Evidence = []Evidence{v}
		checkRoundTrips(t, fmt.Sprint("entry ", i), one)
		for _, id := range v.EventIDs {
			one.Evidence = []Evidence{{Item: "D-001", EventIDs: []string{id}}, {Item: "D-001", EventIDs: []string{id, id}}}
			checkRoundTrips(t, fmt.Sprintf("id %q", id), one)
		}
	}
}

// TestBinaryV4StillDecodes: evidence stored spelled out by the builds
// before v5 decodes as it was written, and AppendJSON reads it too.
func TestBinaryV4StillDecodes(t *testing.T) {
	m := realEvidence()
	v4 := marshalBinaryAs(m, binaryV4)
	var got Medallion
	if err := got.UnmarshalBinary(v4); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, normalized(m)) {
		t.Fatalf("v4 decode:\n got %+v\nwant %+v", got.Evidence, m.Evidence)
	}
	want, err := viaEncodingJSON(v4)
	if err != nil {
		t.Fatal(err)
	}
	if js, err := AppendJSON(nil, v4); err != nil || !bytes.Equal(js, want) {
		t.Errorf("AppendJSON(v4) = %s, %v\nwant %s", js, err, want)
	}
}

// TestEvidenceV5RandomIDs: ids drawn to sit on the packing's edges (hex
// and UUID tails in either case, of every length, behind prefixes that
// change or repeat) round-trip through both readers.
func TestEvidenceV5RandomIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const hexDigits = "0123456789abcdefABCDEF_-zZ"
	randHex := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteByte(hexDigits[rng.IntN(16+10*rng.IntN(2))])
		}
		return sb.String()
	}
	prefixes := []string{"", "cc:rec:", "cx:msg:", "a:b:", ":", "cc:msg:msg_01M6:", "cc:call:toolu_", "x_", "é"}
	for seed := range 300 {
		m := full()
		m.Affordances.Invariants = []string{"a", "b", "c"}
		for i := range 1 + rng.IntN(20) {
			v := Evidence{Item: []string{"D-001", ItemInvariant, ItemSubsystem}[rng.IntN(3)], SessionID: fmt.Sprint("s", rng.IntN(3))}
			if v.Item == ItemInvariant {
				v.Text = []string{"a", "c", "z", ""}[rng.IntN(4)]
			}
			for range rng.IntN(5) {
				p := prefixes[rng.IntN(len(prefixes))]
				switch rng.IntN(3) {
				case 0:
					u := randHex(32)
					v.EventIDs = append(v.EventIDs, p+u[:8]+"-"+u[8:12]+"-"+u[12:16]+"-"+u[16:20]+"-"+u[20:])
				case 1:
					v.EventIDs = append(v.EventIDs, p+randHex(rng.IntN(30)))
				default:
					v.EventIDs = append(v.EventIDs, p+fmt.Sprint(i))
				}
			}
			m.Evidence = append(m.Evidence, v)
		}
		b := mustMarshalBinary(t, m)
		var got Medallion
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !reflect.DeepEqual(&got, normalized(m)) {
			t.Fatalf("seed %d:\n got %q\nwant %q", seed, got.Evidence, m.Evidence)
		}
		want, err := viaEncodingJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		if js, err := AppendJSON(nil, b); err != nil || !bytes.Equal(js, want) {
			t.Fatalf("seed %d: AppendJSON = %s, %v\nwant %s", seed, js, err, want)
		}
	}
}

// TestEvidenceV5Corrupt: a reference to an item the list does not have,
// and an unknown id kind, are errors in both readers, never a panic or
// a made-up text.
func TestEvidenceV5Corrupt(t *testing.T) {
	m := full()
	m.Affordances.Invariants = []string{"only"}
	m.Evidence = []Evidence{{Item: ItemInvariant, Text: "only", SessionID: "s", EventIDs: []string{"cx:msg:0123456789abcdef"}}}
	b := mustMarshalBinary(t, m)
	ref := bytes.Index(b, []byte("\x09invariant\x02"))
	if ref < 0 {
		t.Fatalf("no reference to item 0 in % x", b)
	}
	bad := bytes.Clone(b)
	bad[ref+10] = textItem + 1 // item 1 of a list of one
	for name, in := range map[string][]byte{"missing item": bad} {
		var got Medallion
		if err := got.UnmarshalBinary(in); err == nil || !strings.Contains(err.Error(), "missing item") {
			t.Errorf("%s: UnmarshalBinary = %v", name, err)
		}
		if _, err := AppendJSON(nil, in); err == nil {
			t.Errorf("%s: AppendJSON took it", name)
		}
	}
	// Letters and digits are 6 bits each; 62 and 63 are no character.
	m.Evidence[0].EventIDs = []string{"cc:call:toolu_014agb5uL5BwdxcLJpnS4JUd"}
	b = mustMarshalBinary(t, m)
	at := bytes.Index(b, []byte("toolu_")) + len("toolu_") + 1 // past the character count
	bad = bytes.Clone(b)
	bad[at] = 0xff
	var got Medallion
	if err := got.UnmarshalBinary(bad); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("packed characters out of range: UnmarshalBinary = %v", err)
	}
	if _, err := AppendJSON(nil, bad); err == nil {
		t.Error("packed characters out of range: AppendJSON took it")
	}
}

// TestEvidenceV5RepeatsBounded: a list item's text an entry refers to,
// and a prefix ids repeat, take a byte or two and stand for all of
// their bytes, so a few KB could stand for GB. The readers refuse more
// than maxRepeated bytes so repeated, and the writer spells the text or
// prefix out rather than write what they refuse.
func TestEvidenceV5RepeatsBounded(t *testing.T) {
	const size, count = 64 << 10, 20 // 1.25 MiB if all were repeated
	big := strings.Repeat("p", size-1) + ":"
	ids := make([]string, count)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%016x", big, i)
	}
	prefixes := normalized(&Medallion{})
	prefixes.Evidence = []Evidence{{Item: "D-001", EventIDs: ids}}
	texts := normalized(&Medallion{})
	texts.Affordances.Invariants = []string{big}
	sessions := normalized(&Medallion{})
	for range count {
		texts.Evidence = append(texts.Evidence, Evidence{Item: ItemInvariant, Text: big, EventIDs: []string{}})
		sessions.Evidence = append(sessions.Evidence, Evidence{Item: "D-001", SessionID: big, EventIDs: []string{}})
	}
	for _, c := range []struct {
		name string
		m    *Medallion
		// How often the writer spells big out: the first time, and
		// each time past the maxRepeated/size repeats it may make.
		spelled int
	}{
		{"a prefix", prefixes, 1 + count - 1 - maxRepeated/size},
		{"a list item's text", texts, 1 + count - maxRepeated/size},
		{"the session of the entry before", sessions, 1 + count - 1 - maxRepeated/size},
	} {
		// A writer with no bound, as a hostile encoding would be.
		e := encoder{repeated: -count * size}
		c.m.encodeAs(&e, binaryV5)
		var got Medallion
		if err := got.UnmarshalBinary(e.b); err == nil || !strings.Contains(err.Error(), "by reference") {
			t.Errorf("%s repeated in %d bytes: UnmarshalBinary = %v", c.name, len(e.b), err)
		}
		if _, err := AppendJSON(nil, e.b); err == nil {
			t.Errorf("%s repeated in %d bytes: AppendJSON took them", c.name, len(e.b))
		}
		b := checkRoundTrips(t, c.name+" repeated", c.m)
		if n := bytes.Count(b, []byte(big)); n != c.spelled {
			t.Errorf("%s is spelled out %d times, want %d", c.name, n, c.spelled)
		}
	}
}

// manyEvidence is a medallion with MaxEvidence entries as a long session
// leaves them: runs of a few sessions, Claude Code record and tool-call
// ids and Codex message ids, list items' texts.
func manyEvidence() *Medallion {
	m := realEvidence()
	m.Evidence = nil
	rng := rand.New(rand.NewPCG(3, 3))
	hexOf := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteByte("0123456789abcdef"[rng.IntN(16)])
		}
		return sb.String()
	}
	for i := range MaxEvidence {
		v := Evidence{Item: []string{"D-001", ItemInvariant, ItemAvoidRepeating, ItemEntryPoint}[i%4], SessionID: fmt.Sprintf("%s-1e71-469c-ade2-fcc8af567c74", hexOf(8)[:4]+fmt.Sprintf("%04d", i/25))}
		if l := m.List(v.Item); l != nil {
			v.Text = (*l)[0]
		}
		for range 1 + rng.IntN(4) {
			switch rng.IntN(3) {
			case 0:
				u := hexOf(32)
				v.EventIDs = append(v.EventIDs, "cc:rec:"+u[:8]+"-"+u[8:12]+"-"+u[12:16]+"-"+u[16:20]+"-"+u[20:])
			case 1:
				v.EventIDs = append(v.EventIDs, "cc:call:toolu_01"+strings.ToUpper(hexOf(11))+hexOf(11))
			default:
				v.EventIDs = append(v.EventIDs, "cx:msg:"+hexOf(16))
			}
		}
		m.Evidence = append(m.Evidence, v)
	}
	return m
}

// BenchmarkEvidence: decoding and writing as JSON a medallion of
// MaxEvidence entries, stored packed (v5) and spelled out (v4).
func BenchmarkEvidence(b *testing.B) {
	m := manyEvidence()
	for _, format := range []byte{binaryV4, binaryV5} {
		enc := marshalBinaryAs(m, format)
		b.Run(fmt.Sprintf("v%d/decode", format), func(b *testing.B) {
			b.ReportMetric(float64(len(enc)), "stored-B")
			b.ReportAllocs()
			for b.Loop() {
				var out Medallion
				if err := out.UnmarshalBinary(enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("v%d/decode-without-evidence", format), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var out Medallion
				if err := out.UnmarshalBinaryWithoutEvidence(enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("v%d/json", format), func(b *testing.B) {
			b.ReportAllocs()
			var dst []byte
			for b.Loop() {
				var err error
				if dst, err = AppendJSON(dst[:0], enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("v%d/encode", format), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.MarshalBinaryUnits()
			}
		})
	}
}

// BenchmarkAppendJSONReferences: AppendJSON of an encoding holding many
// references into a long list (no curator writes one; a corrupt or
// hostile record can). Each reference costs the same however long the
// list: the time grows with the input, not with entries × list length.
func BenchmarkAppendJSONReferences(b *testing.B) {
	for _, n := range []int{2_000, 8_000} {
		m := full()
		m.Affordances.Invariants = nil
		for i := range n {
			m.Affordances.Invariants = append(m.Affordances.Invariants, fmt.Sprint("i", i))
		}
		m.Evidence = nil
		for range n {
			m.Evidence = append(m.Evidence, Evidence{Item: ItemInvariant, Text: fmt.Sprint("i", n-1), SessionID: "s", EventIDs: []string{}})
		}
		enc := mustMarshalBinary(b, m)
		b.Run(fmt.Sprintf("%d-entries-%d-items", n, n), func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			var dst []byte
			for b.Loop() {
				var err error
				if dst, err = AppendJSON(dst[:0], enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestUnmarshalBinaryWithoutEvidence: every format's encoding decodes to
// what UnmarshalBinary gives, but for the evidence, which is left nil;
// an encoding cut inside the evidence is still an error.
func TestUnmarshalBinaryWithoutEvidence(t *testing.T) {
	check := func(name string, b []byte) {
		t.Helper()
		var whole, bare Medallion
		if err := whole.UnmarshalBinary(b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := bare.UnmarshalBinaryWithoutEvidence(b); err != nil {
			t.Fatalf("%s: without evidence: %v", name, err)
		}
		whole.Evidence = nil
		if !reflect.DeepEqual(bare, whole) {
			t.Errorf("%s: without evidence\n got %+v\nwant %+v", name, bare, whole)
		}
	}
	for _, m := range []*Medallion{realEvidence(), manyEvidence(), full()} {
		for _, format := range []byte{binaryV4, binaryV5} {
			check(fmt.Sprintf("%s v%d", m.Meta.MedallionID, format), marshalBinaryAs(m, format))
		}
	}
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 9))
		var m Medallion
		fill(t, rng, reflect.ValueOf(&m).Elem(), "Medallion")
		check(fmt.Sprint("seed ", seed), mustMarshalBinary(t, &m))
	}
	b := mustMarshalBinary(t, realEvidence())
	var m Medallion
	for cut := len(b) - 1; cut > 1; cut -= 7 {
		if err := m.UnmarshalBinaryWithoutEvidence(b[:cut]); err == nil {
			t.Fatalf("an encoding cut at %d of %d bytes decoded", cut, len(b))
		}
	}
}
