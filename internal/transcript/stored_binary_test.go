package transcript

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// binNormal is e as a binary round trip gives it back: empty slices nil,
// the time as its own MarshalBinary round trip gives it (no monotonic
// reading; UTC for offset 0, else Local or a fixed zone with the same
// offset).
func binNormal(t *testing.T, e *Event) Event {
	t.Helper()
	out := *e
	if len(out.FilePaths) == 0 {
		out.FilePaths = nil
	}
	if len(out.Todos) == 0 {
		out.Todos = nil
	}
	if out.Time.IsZero() {
		out.Time = time.Time{}
	} else {
		tm := out.Time
		if _, off := tm.Zone(); off == 0 {
			tm = tm.UTC()
		}
		b, err := tm.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		out.Time = time.Time{}
		if err := out.Time.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkBinary round-trips e through AppendBinary (after a prefix, as the
// store appends to a chunk) and UnmarshalBinary, and, where the JSON the
// store wrote before holds e exactly (valid UTF-8, a time RFC 3339 writes
// whole), checks that both encodings give back the same event.
func checkBinary(t *testing.T, e *Event) {
	t.Helper()
	b, err := e.AppendBinary([]byte("prefix"))
	if err != nil {
		t.Fatalf("AppendBinary: %v", err)
	}
	if !strings.HasPrefix(string(b), "prefix") {
		t.Fatalf("AppendBinary lost what dst held")
	}
	var back Event
	if err := back.UnmarshalBinary(b[len("prefix"):]); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	if want := binNormal(t, e); !reflect.DeepEqual(back, want) {
		t.Fatalf("binary round trip:\n got %+v\nwant %+v", back, want)
	}
	js, err := AppendStored(nil, e)
	if err != nil || !jsonExact(e) {
		return
	}
	var viaJSON Event
	if err := UnmarshalStored(js, &viaJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, viaJSON) {
		t.Fatalf("binary and JSON round trips differ:\n binary %+v\n   JSON %+v", back, viaJSON)
	}
}

// jsonExact reports whether a JSON round trip gives e back as it is,
// slices and zones aside: its strings are valid UTF-8 and its time's zone
// offset is whole minutes (RFC 3339 drops the seconds).
func jsonExact(e *Event) bool {
	if _, off := e.Time.Zone(); off%60 != 0 {
		return false
	}
	ok := true
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			ok = ok && utf8.ValidString(v.String())
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			if v.Type() != reflect.TypeFor[time.Time]() {
				for i := range v.NumField() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(e).Elem())
	return ok
}

// TestEventBinaryEveryField fails when Event, Todo or Source gains a
// field the binary encoding does not carry: every field set survives.
func TestEventBinaryEveryField(t *testing.T) {
	var e Event
	n := 0
	fill(t, reflect.ValueOf(&e).Elem(), &n)
	checkBinary(t, &e)
	f, code := false, -1
	e.OK, e.ExitCode = &f, &code
	checkBinary(t, &e)
	checkBinary(t, &Event{})
}

// TestEventBinaryRandom round-trips the random events TestAppendStoredRandom
// draws: each field alone, each field missing, random mixes.
func TestEventBinaryRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2026))
	var leaves int
	randomize(t, rng, reflect.ValueOf(new(Event)).Elem(), &leaves, func(int) bool { return false })
	n := 10000
	if testing.Short() || raceBuild {
		n = 2000
	}
	for i := range n {
		k := 1 + (i/3)%leaves
		set := []func(int) bool{
			func(int) bool { return rng.IntN(2) == 0 },
			func(l int) bool { return l == k },
			func(l int) bool { return l != k },
		}[i%3]
		var e Event
		var leaf int
		randomize(t, rng, reflect.ValueOf(&e).Elem(), &leaf, set)
		checkBinary(t, &e)
	}
}

// TestEventBinaryDamaged: every cut of an encoding, and a byte more, is
// an error that says so, never a panic or a half-read event.
func TestEventBinaryDamaged(t *testing.T) {
	var e Event
	n := 0
	fill(t, reflect.ValueOf(&e).Elem(), &n)
	b, err := e.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	for cut := range len(b) {
		var got Event
		err := got.UnmarshalBinary(b[:cut])
		if !errors.Is(err, errBinary) {
			t.Fatalf("cut at %d of %d: %v", cut, len(b), err)
		}
		if !reflect.DeepEqual(got, Event{}) {
			t.Fatalf("cut at %d: a half-read event: %+v", cut, got)
		}
	}
	var got Event
	if err := got.UnmarshalBinary(append(b, 0)); !errors.Is(err, errBinary) || !strings.Contains(err.Error(), "after the event") {
		t.Fatalf("a byte more: %v", err)
	}
	if err := got.UnmarshalBinary([]byte{0x80}); !errors.Is(err, errBinary) || !strings.Contains(err.Error(), "flags") {
		t.Fatalf("unknown flags: %v", err)
	}
}

// FuzzEventBinary: any bytes decode to an event or an error; an event
// decoded encodes to bytes that decode to the same event.
func FuzzEventBinary(f *testing.F) {
	var e Event
	n := 0
	fill(&testing.T{}, reflect.ValueOf(&e).Elem(), &n)
	full, _ := e.AppendBinary(nil)
	f.Add(full)
	empty, _ := (&Event{}).AppendBinary(nil)
	f.Add(empty)
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Event
		if got.UnmarshalBinary(data) != nil {
			return
		}
		again, err := got.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		var back Event
		if err := back.UnmarshalBinary(again); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, binNormal(t, &got)) {
			t.Fatalf("decoded %+v, then %+v", got, back)
		}
	})
}

// BenchmarkStoredEncodings encodes and decodes the events the Claude Code
// adapter makes of ~8 MB of realistic lines, as JSON (AppendStored,
// UnmarshalStored) and binary.
func BenchmarkStoredEncodings(b *testing.B) {
	var events []Event
	p := NewClaudeCode(Options{})
	var offset int64
	for _, l := range genClaudeCode(8 << 20) {
		events = append(events, p.ParseLine(l, Position{File: "bench", Path: "/home/user/.claude/projects/x/s.jsonl", Offset: offset})...)
		offset += int64(len(l) + 1)
	}
	type codec struct {
		name string
		enc  func([]byte, *Event) ([]byte, error)
		dec  func([]byte, *Event) error
	}
	for _, c := range []codec{
		{"json", AppendStored, UnmarshalStored},
		{"binary", func(dst []byte, e *Event) ([]byte, error) { return e.AppendBinary(dst) },
			func(b []byte, e *Event) error { return e.UnmarshalBinary(b) }},
	} {
		var encoded [][]byte
		size := 0
		for i := range events {
			v, err := c.enc(nil, &events[i])
			if err != nil {
				b.Fatal(err)
			}
			encoded = append(encoded, v)
			size += len(v)
		}
		b.Run("enc="+c.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			var buf []byte
			for b.Loop() {
				for i := range events {
					buf, _ = c.enc(buf[:0], &events[i])
				}
			}
		})
		b.Run("dec="+c.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var e Event
			for b.Loop() {
				for _, v := range encoded {
					if err := c.dec(v, &e); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
