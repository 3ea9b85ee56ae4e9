package medallion

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// viaEncodingJSON is what AppendJSON must equal: the medallion b decodes
// to, through encoding/json.
func viaEncodingJSON(b []byte) ([]byte, error) {
	var m Medallion
	if err := m.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return json.Marshal(&m)
}

// awkward are strings encoding/json treats specially: escapes by name
// and by number, HTML characters, invalid UTF-8, the JavaScript line
// separators, multi-byte runes.
var awkward = []string{
	"", "plain", `"quoted" \back\slash/`, "<a href='x'>&amp;</a>", "\b\f\n\r\t\x00\x01\x1f\x7f",
	"\xff\xfe bad \xc3 utf-8 \xe2\x80", "line\u2028para\u2029", "café 日本 😀", "\u2027\u202a",
}

// vary empties or replaces some of what fill set, so that omitempty,
// empty lists, the special strings and the float formats are met:
// encoding/json writes a field differently when it is empty.
func vary(rng *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		switch rng.IntN(4) {
		case 0:
			v.SetString("")
		case 1:
			v.SetString(awkward[rng.IntN(len(awkward))])
		}
	case reflect.Float64:
		specials := []float64{0, math.Copysign(0, -1), 1, 0.8, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789e13, math.SmallestNonzeroFloat64, math.MaxFloat64, -2.5e-9}
		if rng.IntN(2) == 0 {
			v.SetFloat(specials[rng.IntN(len(specials))])
		}
	case reflect.Slice:
		switch rng.IntN(5) {
		case 0:
			v.Set(reflect.Zero(v.Type()))
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			for i := range v.Len() {
				vary(rng, v.Index(i))
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			vary(rng, v.Field(i))
		}
	}
}

// TestAppendJSONMatchesEncodingJSON: AppendJSON writes the very bytes
// encoding/json writes for the decoded medallion, for medallions with
// every field filled by reflection (a field added to Medallion and the
// binary codec but not to AppendJSON fails here), some of them emptied or
// set to what JSON escapes or formats specially.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	for seed := range uint64(2000) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var m Medallion
		fill(t, rng, reflect.ValueOf(&m).Elem(), "Medallion")
		if seed%4 != 0 {
			vary(rng, reflect.ValueOf(&m).Elem())
		}
		b := mustMarshalBinary(t, &m)
		want, err := viaEncodingJSON(b)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		prefix := []byte("kept ")
		got, err := AppendJSON(prefix, b)
		if err != nil {
			t.Fatalf("seed %d: AppendJSON: %v", seed, err)
		}
		if !bytes.Equal(got[len(prefix):], want) || !bytes.Equal(got[:len(prefix)], prefix) {
			t.Fatalf("seed %d: AppendJSON differs from encoding/json (update codec_json.go):\n got: %s\nwant: %s", seed, got[len(prefix):], want)
		}
	}
}

// TestAppendJSONOlderFormats: encodings of the older format bytes, which
// end before the evidence (v1), the review (v2) or the pins (v3), give
// what encoding/json gives for what they decode to.
func TestAppendJSONOlderFormats(t *testing.T) {
	m := full()
	b := mustMarshalBinary(t, m)
	for format, cut := range map[byte]int{binaryV1: 4, binaryV2: 3, binaryV3: 2} {
		old := append([]byte{format}, b[1:len(b)-cut]...)
		want, err := viaEncodingJSON(old)
		if err != nil {
			t.Fatalf("format %d: %v", format, err)
		}
		got, err := AppendJSON(nil, old)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("format %d: AppendJSON = %s, %v\nwant %s", format, got, err, want)
		}
	}
}

// TestAppendJSONErrors: what UnmarshalBinary refuses (every cut of an
// encoding, a bad format byte) AppendJSON refuses, leaving dst as it
// was, and so does a confidence encoding/json cannot write.
func TestAppendJSONErrors(t *testing.T) {
	m := full()
	m.Evidence = []Evidence{{Item: "D-001", SessionID: "s1", EventIDs: []string{"e1"}}}
	m.Forgotten = []Forgotten{{Kind: KindDecision, Fingerprint: "f", EventIDs: []string{"e2"}}}
	b := mustMarshalBinary(t, m)
	for n := range len(b) {
		if got, err := AppendJSON([]byte("x"), b[:n]); err == nil || string(got) != "x" {
			t.Fatalf("cut at %d of %d: AppendJSON = %q, %v; want an error and dst unchanged", n, len(b), got, err)
		}
	}
	if _, err := AppendJSON(nil, append([]byte{0x7b}, b[1:]...)); err == nil {
		t.Error("a bad format byte was accepted")
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		m.Decisions[0].Confidence = f
		if _, err := AppendJSON(nil, mustMarshalBinary(t, m)); err == nil {
			t.Errorf("confidence %v was written", f)
		}
	}
}

// FuzzAppendJSON: for any input, AppendJSON fails exactly when decoding
// or encoding/json fails, and otherwise writes the same bytes.
func FuzzAppendJSON(f *testing.F) {
	for _, m := range []*Medallion{full(), normalized(&Medallion{}), withEvidence()} {
		f.Add(mustMarshalBinary(f, m))
	}
	for _, b := range fuzzSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, wantErr := viaEncodingJSON(in)
		got, err := AppendJSON(nil, in)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("AppendJSON error %v, decode/encoding/json error %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON differs from encoding/json:\n got: %s\nwant: %s", got, want)
		}
	})
}

// BenchmarkAppendJSON compares AppendJSON with decoding and encoding/json
// on the same medallion.
func BenchmarkAppendJSON(b *testing.B) {
	bin := mustMarshalBinary(b, withEvidence())
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = AppendJSON(buf[:0], bin); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			out, err := viaEncodingJSON(bin)
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		b.SetBytes(int64(n))
	})
}

// TestJSONStringEveryByte: str, which skips eight plain bytes at a time,
// escapes every byte value at every place of a string (either side of
// each eight-byte boundary) as encoding/json does.
func TestJSONStringEveryByte(t *testing.T) {
	plain := []byte("abcdefghijklmnopqrstu")
	for c := range 256 {
		for at := range len(plain) {
			s := append([]byte(nil), plain...)
			s[at] = byte(c)
			for _, in := range [][]byte{s, s[at:], s[:at+1]} {
				want, err := json.Marshal(string(in))
				if err != nil {
					t.Fatal(err)
				}
				var w jsonWriter
				if w.str(in); !bytes.Equal(w.b, want) {
					t.Fatalf("byte %#x at %d of %q: str = %s, want %s", c, at, in, w.b, want)
				}
			}
		}
	}
}

// BenchmarkJSONString times str on texts as medallions hold them: event
// ids and sentences, nothing to escape.
func BenchmarkJSONString(b *testing.B) {
	for _, s := range []string{"0b5c6f2e-3c1d-4b7a-9f1e-2a6d8c4e9b10", "invariant text number 17 that the user stated in a long sentence with code and a path/to/file.go"} {
		b.Run(strconv.Itoa(len(s)), func(b *testing.B) {
			in := []byte(s)
			var w jsonWriter
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				w.b = w.b[:0]
				w.str(in)
			}
		})
	}
}

// TestAppendJSONAllocs: with room in dst, AppendJSON allocates nothing
// (an export writes every version through one buffer).
func TestAppendJSONAllocs(t *testing.T) {
	bin := mustMarshalBinary(t, withEvidence())
	buf := make([]byte, 0, 64<<10)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := AppendJSON(buf[:0], bin); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("AppendJSON allocates %v times", n)
	}
}
