package medallion

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustMarshalBinary(t testing.TB, m *Medallion) []byte {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary: %v", err)
	}
	return b
}

func normalized(m *Medallion) *Medallion {
	c := m.Clone()
	c.Normalize()
	return c
}

func TestBinaryRoundTrip(t *testing.T) {
	odd := full()
	odd.Meta.Version = -1 << 62
	odd.Meta.MedallionID = "\x00\xff not UTF-8 \xc3"
	odd.Summary.HighLevel = strings.Repeat("long text ", 100)
	odd.Decisions[0].Confidence = math.Inf(-1)
	odd.Decisions[1].Confidence = math.SmallestNonzeroFloat64
	odd.Decisions[2].Confidence = math.Copysign(0, -1)
	odd.Scope.Tags = []string{"", "", "x"}

	tests := []struct {
		name string
		m    *Medallion
	}{
		{"full", full()},
		{"full normalized", normalized(full())},
		{"zero", &Medallion{}},
		{"zero normalized", normalized(&Medallion{})},
		{"odd values", odd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustMarshalBinary(t, tt.m)
			// The store tells the encodings apart by the first byte.
			if json.Valid(b) || b[0] == '{' || bytes.ContainsRune([]byte(" \t\r\n"), rune(b[0])) {
				t.Fatalf("the encoding could be taken for JSON: first byte %q", b[0])
			}
			var got Medallion
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			// Decoding yields the Normalized form: empty lists, never nil.
			if want := normalized(tt.m); !reflect.DeepEqual(&got, want) {
				t.Errorf("round trip changed the medallion:\n got: %#v\nwant: %#v", &got, want)
			}
			// Bytes catch what DeepEqual cannot: -0 == 0.
			if again := mustMarshalBinary(t, &got); !bytes.Equal(again, b) {
				t.Errorf("encoding the decoded medallion gave other bytes:\n got: %q\nwant: %q", again, b)
			}
		})
	}
}

// fill sets every field reachable from v to a random non-zero value, and
// fails the test on a kind it cannot fill, so that a new kind of field is
// noticed here rather than silently skipped by the codec.
func fill(t *testing.T, rng *rand.Rand, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		b := make([]byte, 1+rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.UintN(256)) // any bytes, not only UTF-8
		}
		v.SetString(string(b))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var n int64
		for n == 0 || v.OverflowInt(n) {
			n = rng.Int64() >> rng.UintN(63)
			if rng.IntN(2) == 0 {
				n = -n
			}
		}
		v.SetInt(n)
	case reflect.Float32, reflect.Float64:
		var f float64
		for f == 0 || v.OverflowFloat(f) {
			f = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		}
		v.SetFloat(f)
	case reflect.Slice:
		n := 1 + rng.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(t, rng, s.Index(i), path+"[]")
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				t.Fatalf("fill: %s.%s is unexported: the codec (codec.go) and this test must learn to handle it", path, f.Name)
			}
			fill(t, rng, v.Field(i), path+"."+f.Name)
		}
	default:
		t.Fatalf("fill: %s is of kind %s, which this test cannot fill: teach fill that kind and make sure MarshalBinary/UnmarshalBinary (codec.go) encode the field", path, v.Kind())
	}
}

// TestBinaryRoundTripEveryField guards against a field the codec drops:
// every field of Medallion, however deep, gets a random non-zero value and
// must survive the round trip.
func TestBinaryRoundTripEveryField(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var m Medallion
		fill(t, rng, reflect.ValueOf(&m).Elem(), "Medallion")
		b := mustMarshalBinary(t, &m)
		var got Medallion
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("seed %d: UnmarshalBinary: %v", seed, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("seed %d: a field did not survive MarshalBinary → UnmarshalBinary (update codec.go):\n got: %#v\nwant: %#v", seed, got, m)
		}
	}
}

// fieldPaths lists the leaf fields of typ as codecFields spells them.
func fieldPaths(typ reflect.Type, prefix string) []string {
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		path := prefix + f.Name
		switch {
		case f.Type.Kind() == reflect.Struct:
			out = append(out, fieldPaths(f.Type, path+".")...)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			out = append(out, fieldPaths(f.Type.Elem(), path+"[].")...)
		default:
			out = append(out, path)
		}
	}
	return out
}

// TestCodecFieldsMatchSchema makes a schema change touch codec.go: the
// fields the codec lists must be exactly the fields of Medallion, in order.
func TestCodecFieldsMatchSchema(t *testing.T) {
	got := fieldPaths(reflect.TypeFor[Medallion](), "")
	if !slices.Equal(got, codecFields) {
		var missing, extra []string
		for _, p := range got {
			if !slices.Contains(codecFields, p) {
				missing = append(missing, p)
			}
		}
		for _, p := range codecFields {
			if !slices.Contains(got, p) {
				extra = append(extra, p)
			}
		}
		t.Errorf("Medallion's fields differ from codecFields: update MarshalBinary, UnmarshalBinary and codecFields in codec.go together.\nnot in codecFields: %q\nno longer in Medallion: %q\nMedallion's fields in order: %q", missing, extra, got)
	}
}

func TestUnmarshalBinaryErrors(t *testing.T) {
	good := mustMarshalBinary(t, full())
	jsonText, err := json.Marshal(full())
	if err != nil {
		t.Fatal(err)
	}
	// A header with an empty id, then a count claiming 2^62 graph nodes.
	hugeCount := []byte{binaryV1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "empty input"},
		{"JSON", jsonText, "unknown format byte 0x7b"},
		{"next format", append([]byte{0x06}, good[1:]...), "unknown format byte 0x06"},
		{"format byte only", []byte{binaryV1}, "truncated"},
		{"trailing byte", append(slices.Clone(good), 0), "1 bytes after the last field"},
		{"string past the end", []byte{binaryV1, 0x7f, 'a'}, "string of 127 bytes exceeds the 1 bytes left"},
		{"huge count", hugeCount, "exceeds the 0 bytes left"},
		{"varint overflow", append([]byte{binaryV1}, bytes.Repeat([]byte{0xff}, 11)...), "varint overflows 64 bits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := full()
			err := m.UnmarshalBinary(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("UnmarshalBinary = %v, want an error containing %q", err, tt.want)
			}
			if !reflect.DeepEqual(m, full()) {
				t.Error("a failed UnmarshalBinary changed the medallion")
			}
		})
	}
}

// TestUnmarshalBinaryTruncated cuts a good encoding at every byte: each
// prefix must fail, none may panic.
func TestUnmarshalBinaryTruncated(t *testing.T) {
	good := mustMarshalBinary(t, full())
	for n := range len(good) {
		var m Medallion
		if err := m.UnmarshalBinary(good[:n]); err == nil {
			t.Errorf("the first %d of %d bytes decoded without error", n, len(good))
		}
	}
}

// TestUnmarshalBinaryAllocs checks the design that makes decoding cheap:
// one allocation for all the text, one per non-empty list of items, and
// the string lists of one medallion carved out of a few shared arrays (one
// while they hold at most 16 strings in all). A scope query decodes every
// answer, so each allocation here is ten a query.
func TestUnmarshalBinaryAllocs(t *testing.T) {
	m := full()
	b := mustMarshalBinary(t, m)
	lists := 0
	for _, n := range []int{len(m.Summary.Subsystems), len(m.Decisions), len(m.OpenQuestions)} {
		if n > 0 {
			lists++
		}
	}
	want := float64(1 + lists + 1)
	var got Medallion
	if allocs := testing.AllocsPerRun(100, func() {
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
	}); allocs != want {
		t.Errorf("UnmarshalBinary made %v allocations, want %v (one string, one per non-empty list of items, one for the string lists)", allocs, want)
	}

	// Evidence makes a list of event ids per entry: 300 of them share
	// arrays that double from 16 strings to 1,024.
	m.Evidence = nil
	for i := range 300 {
		m.Evidence = append(m.Evidence, Evidence{Item: "D-001", SessionID: "s1", EventIDs: []string{fmt.Sprint("e", i), "x", "y"}})
	}
	b = mustMarshalBinary(t, m)
	if allocs := testing.AllocsPerRun(20, func() {
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
	}); allocs > want+1+8 {
		t.Errorf("UnmarshalBinary of 300 evidence entries made %v allocations, want at most %v", allocs, want+1+8)
	}
}

// TestUnmarshalBinaryListsApart: the string lists share arrays (see
// TestUnmarshalBinaryAllocs), yet appending to or changing one never shows
// in another.
func TestUnmarshalBinaryListsApart(t *testing.T) {
	var m Medallion
	if err := m.UnmarshalBinary(mustMarshalBinary(t, full())); err != nil {
		t.Fatal(err)
	}
	want := full()
	m.Scope.GraphNodes = append(m.Scope.GraphNodes, "repo:other")
	m.Scope.Tags[0] = "changed"
	m.Affordances.RecommendedEntryPoints = append(m.Affordances.RecommendedEntryPoints, "x.go", "y.go")
	if !slices.Equal(m.Scope.GraphNodes, append(want.Scope.GraphNodes, "repo:other")) ||
		!slices.Equal(m.Scope.Tags, []string{"changed", want.Scope.Tags[1]}) ||
		!slices.Equal(m.Affordances.AvoidRepeating, want.Affordances.AvoidRepeating) ||
		!slices.Equal(m.Affordances.Invariants, want.Affordances.Invariants) ||
		!slices.Equal(m.OpenQuestions[0].BlockedOn, want.OpenQuestions[0].BlockedOn) {
		t.Errorf("lists changed one another: %+v %+v %+v", m.Scope, m.Affordances, m.OpenQuestions)
	}
}

// FuzzUnmarshalBinary feeds arbitrary bytes to the decoder: it must never
// panic, and whatever it accepts must encode and decode to the same bytes.
// Seeds are in testdata/fuzz/FuzzUnmarshalBinary.
func FuzzUnmarshalBinary(f *testing.F) {
	for _, m := range []*Medallion{full(), normalized(&Medallion{})} {
		f.Add(mustMarshalBinary(f, m))
	}
	for _, b := range fuzzSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var m Medallion
		if err := m.UnmarshalBinary(in); err != nil {
			return
		}
		b := mustMarshalBinary(t, &m)
		var again Medallion
		if err := again.UnmarshalBinary(b); err != nil {
			t.Fatalf("the encoding of an accepted input does not decode: %v", err)
		}
		// Bytes rather than DeepEqual: a NaN confidence is not equal to
		// itself but must keep its bits.
		if b2 := mustMarshalBinary(t, &again); !bytes.Equal(b, b2) {
			t.Fatalf("re-encoding changed the bytes:\n%q\n%q", b, b2)
		}
		// The evidence (no floats) compares whole: the v5 packing must
		// give back every id and text the decoded medallion had.
		if !reflect.DeepEqual(again.Evidence, m.Evidence) {
			t.Fatalf("evidence changed in a round trip:\n%q\n%q", m.Evidence, again.Evidence)
		}
		// What decodes whole decodes without its evidence to the same
		// medallion but for the evidence (bytes again, for NaNs).
		var bare Medallion
		if err := bare.UnmarshalBinaryWithoutEvidence(in); err != nil {
			t.Fatalf("decodes whole but not without its evidence: %v", err)
		}
		m.Evidence = nil
		if !bytes.Equal(mustMarshalBinary(t, &bare), mustMarshalBinary(t, &m)) {
			t.Fatalf("decoded without its evidence:\n%+v\nwant\n%+v", bare, m)
		}
	})
}

// BenchmarkCodec compares the binary encoding with encoding/json on the
// same medallion; MB/s is of each encoding's own size.
func BenchmarkCodec(b *testing.B) {
	m := normalized(full())
	bin := mustMarshalBinary(b, m)
	js, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("binary %d bytes, JSON %d bytes", len(bin), len(js))
	b.Run("decode/binary", func(b *testing.B) {
		b.SetBytes(int64(len(bin)))
		b.ReportAllocs()
		for b.Loop() {
			var out Medallion
			if err := out.UnmarshalBinary(bin); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/json", func(b *testing.B) {
		b.SetBytes(int64(len(js)))
		b.ReportAllocs()
		for b.Loop() {
			var out Medallion
			if err := json.Unmarshal(js, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/binary", func(b *testing.B) {
		b.SetBytes(int64(len(bin)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.MarshalBinary(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/json", func(b *testing.B) {
		b.SetBytes(int64(len(js)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestMarshalBinaryUnits: the units cover the same bytes MarshalBinary
// writes, end to end, the meta first; UnmarshalBinaryMeta reads that meta
// back as copies, also from an encoding cut right after it.
func TestMarshalBinaryUnits(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var m Medallion
		fill(t, rng, reflect.ValueOf(&m).Elem(), "Medallion")
		b, ends := m.MarshalBinaryUnits()
		if want := mustMarshalBinary(t, &m); !bytes.Equal(b, want) {
			t.Fatalf("seed %d: MarshalBinaryUnits wrote other bytes than MarshalBinary", seed)
		}
		if len(ends) < 2 || ends[len(ends)-1] != len(b) || !slices.IsSorted(ends) || ends[0] <= 1 {
			t.Fatalf("seed %d: ends %v over %d bytes", seed, ends, len(b))
		}
		meta, err := UnmarshalBinaryMeta(b[:ends[0]])
		if err != nil || meta != m.Meta {
			t.Fatalf("seed %d: meta %+v, %v; want %+v", seed, meta, err, m.Meta)
		}
		clear(b)
		if meta != m.Meta {
			t.Fatalf("seed %d: the meta shares bytes with its input", seed)
		}
	}
	if _, err := UnmarshalBinaryMeta([]byte{binaryV3, 5, 'a'}); err == nil {
		t.Error("truncated meta decoded")
	}
	if _, err := UnmarshalBinaryMeta([]byte("{}")); err == nil {
		t.Error("JSON decoded as binary meta")
	}
}
