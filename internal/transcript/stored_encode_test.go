package transcript

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// encodeStd is what the store wrote before AppendStored: a json.Encoder
// with HTML escaping off, its newline cut.
func encodeStd(e *Event) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checkAppendStored checks that AppendStored writes what encodeStd writes,
// or fails as it fails, after a prefix it must keep; and that the result
// reads back by UnmarshalStored's fast path as json.Unmarshal reads it.
// It returns the JSON (nil when encoding failed).
func checkAppendStored(t *testing.T, e *Event) []byte {
	t.Helper()
	want, werr := encodeStd(e)
	prefix := []byte("prefix")
	got, gerr := AppendStored(slices.Clip(prefix), e)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("AppendStored error %v, encoding/json %v, for %+v", gerr, werr, e)
	}
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("AppendStored lost its dst: %q", got)
	}
	if werr != nil {
		return nil
	}
	got = got[len(prefix):]
	if !bytes.Equal(got, want) {
		i := mismatchAt(got, want)
		t.Fatalf("AppendStored differs from encoding/json at byte %d of %d:\n got …%q…\nwant …%q…", i, len(want), around(got, i), around(want, i))
	}
	var back, std Event
	if !decodeStored(got, &back) {
		t.Fatalf("the fast path refused AppendStored's output:\n%s", got)
	}
	if err := json.Unmarshal(got, &std); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, std) {
		t.Fatalf("UnmarshalStored gives %+v, json.Unmarshal %+v", back, std)
	}
	return got
}

func mismatchAt(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// around is the part of b near i, for messages about long JSON.
func around(b []byte, i int) []byte {
	return b[max(0, i-60):min(len(b), i+60)]
}

// storedPool holds the strings the random events are made of: everything
// encoding/json escapes or replaces, and what it leaves alone.
var storedPool = func() []string {
	long := strings.Repeat("func main() {\n\tfmt.Println(\"héllo <wörld> & 🙂\")\n}\n", 200)
	return []string{
		"a", "user_prompt", "/home/dev/muse/internal/stock/stock.go", "go test ./... -run 'TestX$'",
		`"quoted" \back\slash/ 'single'`, "<script>alert(1)</script> & &amp;",
		"\u2028", "\u2029", "line\u2028sep\u2029para", "\u2027\u202a", // neighbours stay as they are
		"\x00\x01\x02\x07\x1b\x1f", "\b\f\n\r\t\v", "\x7f", "del\x7fend",
		"é ñ ü 日本語 Ελληνικά", "🙂👍🏽🇫🇷 family 👨‍👩‍👧", "\ufffd", "\uFEFFbom",
		"\xff", "\xfe\xff", "a\xc3", "\xc3(", "\xe2\x80", "\xe2\x80\xa8\xe2\x80", // truncated sequences
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\xf8\x88\x80\x80\x80", // surrogate, too large, overlong
		long, long[:4097] + "\n[… 12345 bytes elided …]\n" + long[len(long)-4096:],
	}
}()

// randString draws a string from the pool, a concatenation of pool
// strings, or random bytes.
func randString(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(storedPool[rng.IntN(len(storedPool))])
		}
		return b.String()
	case 1:
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return string(b)
	}
	return storedPool[rng.IntN(len(storedPool))]
}

var storedInts = []int64{1, -1, 7, 1 << 31, -(1 << 31), math.MaxInt64, math.MinInt64}

var storedTimes = func() []time.Time {
	return []time.Time{
		time.Date(2026, 2, 11, 20, 31, 53, 375000000, time.UTC),
		time.Date(2026, 2, 11, 20, 31, 53, 0, time.UTC),
		time.Date(2026, 11, 25, 23, 59, 1, 123456789, time.FixedZone("x", 3600)),
		time.Date(2026, 11, 25, 23, 59, 1, 100, time.FixedZone("y", -(9*3600+30*60))),
		time.Date(2026, 11, 25, 23, 59, 1, 1, time.FixedZone("z", 3600+17)), // seconds in the offset
		time.Date(2026, 3, 29, 1, 30, 0, 0, time.Local),
		time.Now(), // with a monotonic reading
		time.Unix(0, 0),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Time{}.In(time.FixedZone("zero", 7200)), // zero, so omitted, in another zone
		// encoding/json refuses these.
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 24*3600)),
	}
}()

// randomize sets each field of v (recursively) either to its zero value
// or to a random one, as set decides for that field's leaf number.
func randomize(t *testing.T, rng *rand.Rand, v reflect.Value, leaf *int, set func(int) bool) {
	t.Helper()
	if v.Kind() == reflect.Struct && v.Type() != reflect.TypeFor[time.Time]() {
		for i := range v.NumField() {
			randomize(t, rng, v.Field(i), leaf, set)
		}
		return
	}
	*leaf++
	if !set(*leaf) {
		v.SetZero()
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randString(rng))
	case reflect.Int, reflect.Int64:
		n := storedInts[rng.IntN(len(storedInts))]
		if rng.IntN(2) == 0 {
			n = rng.Int64N(1<<20) - 1<<10
		}
		v.SetInt(n)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		switch e := v.Elem(); e.Kind() {
		case reflect.Bool:
			e.SetBool(rng.IntN(2) == 0)
		case reflect.Int:
			e.SetInt(storedInts[rng.IntN(len(storedInts))])
		default:
			t.Fatalf("randomize: a pointer to %s: teach randomize and AppendStored about it", e.Kind())
		}
	case reflect.Slice:
		// Empty but not nil too: omitempty drops both.
		v.Set(reflect.MakeSlice(v.Type(), rng.IntN(4), 3))
		for i := range v.Len() {
			var l int
			randomize(t, rng, v.Index(i), &l, func(int) bool { return rng.IntN(3) > 0 })
		}
	case reflect.Struct: // time.Time
		v.Set(reflect.ValueOf(storedTimes[rng.IntN(len(storedTimes))]))
	default:
		t.Fatalf("randomize: a field of kind %s: teach randomize and AppendStored about it", v.Kind())
	}
}

// TestAppendStoredRandom holds AppendStored to encoding/json over many
// random events: each field in turn alone, each field in turn missing,
// and random mixes, of strings with every kind of escape.
func TestAppendStoredRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 2026))
	var leaves int
	randomize(t, rng, reflect.ValueOf(new(Event)).Elem(), &leaves, func(int) bool { return false })
	n := 10000
	if testing.Short() || raceBuild {
		n = 2000
	}
	var encoded, failed int
	for i := range n {
		var set func(int) bool
		k := 1 + (i/4)%leaves
		switch i % 4 {
		case 0:
			set = func(int) bool { return rng.IntN(2) == 0 }
		case 1:
			set = func(l int) bool { return l == k }
		case 2:
			set = func(l int) bool { return l != k }
		default:
			set = func(int) bool { return rng.IntN(10) > 0 }
		}
		var e Event
		var leaf int
		randomize(t, rng, reflect.ValueOf(&e).Elem(), &leaf, set)
		js := checkAppendStored(t, &e)
		if js == nil {
			failed++
			continue
		}
		encoded++
		// And back to the event itself, once normalised as JSON
		// normalises it.
		var back Event
		if err := UnmarshalStored(js, &back); err != nil {
			t.Fatal(err)
		}
		if want := storedNormal(&e); !reflect.DeepEqual(back, want) {
			t.Fatalf("round trip:\n got %+v\nwant %+v\n%s", back, want, js)
		}
	}
	if failed == 0 || encoded < n/2 {
		t.Fatalf("%d events encoded, %d refused: the generator misses a case", encoded, failed)
	}
	t.Logf("%d events, %d refused by encoding/json as by AppendStored", encoded, failed)
}

// storedNormal is e as a JSON round trip gives it back: invalid UTF-8
// replaced byte by byte, empty slices nil, the time as RFC 3339 reads it.
func storedNormal(e *Event) Event {
	str := func(s string) string {
		if utf8.ValidString(s) {
			return s
		}
		var b strings.Builder
		for _, r := range s { // an invalid byte is one RuneError
			b.WriteRune(r)
		}
		return b.String()
	}
	var out Event
	var norm func(dst, src reflect.Value)
	norm = func(dst, src reflect.Value) {
		switch src.Kind() {
		case reflect.String:
			dst.SetString(str(src.String()))
		case reflect.Slice:
			if src.Len() == 0 {
				return
			}
			dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
			for i := range src.Len() {
				norm(dst.Index(i), src.Index(i))
			}
		case reflect.Struct:
			if tm, ok := src.Interface().(time.Time); ok {
				if !tm.IsZero() {
					back, err := time.Parse(time.RFC3339Nano, tm.Format(time.RFC3339Nano))
					if err != nil {
						panic(err)
					}
					dst.Set(reflect.ValueOf(back))
				}
				return
			}
			for i := range src.NumField() {
				norm(dst.Field(i), src.Field(i))
			}
		default:
			dst.Set(src)
		}
	}
	norm(reflect.ValueOf(&out).Elem(), reflect.ValueOf(e).Elem())
	return out
}

// TestAppendStoredEveryField fails when Event, Todo or Source gains a
// field AppendStored does not write: with every field set, the keys it
// writes must be the JSON names of every field, at every level.
func TestAppendStoredEveryField(t *testing.T) {
	var e Event
	n := 0
	fill(t, reflect.ValueOf(&e).Elem(), &n)
	js := checkAppendStored(t, &e)

	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				got[prefix+k] = true
				walk(prefix+k+".", x)
			}
		case []any:
			for _, x := range v {
				walk(prefix, x)
			}
		}
	}
	walk("", doc)

	want := map[string]bool{}
	var fields func(prefix string, typ reflect.Type)
	fields = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Fatalf("%s.%s has no JSON name: teach this test and AppendStored", typ, f.Name)
			}
			want[prefix+name] = true
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]() {
				fields(prefix+name+".", ft)
			}
		}
	}
	fields("", reflect.TypeFor[Event]())
	for k := range want {
		if !got[k] {
			t.Errorf("AppendStored does not write %q", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("AppendStored writes %q, which is no field", k)
		}
	}
	if len(want) < 30 {
		t.Fatalf("only %d fields found", len(want))
	}
}

// TestAppendStoredCases pins the cases most likely to go wrong.
func TestAppendStoredCases(t *testing.T) {
	f, code := false, 0
	for _, e := range []Event{
		{},
		{ID: "a", Kind: KindToolResult, Agent: "x", OK: &f, ExitCode: &code}, // false and 0 behind pointers are kept
		{FilePaths: []string{}, Todos: []Todo{}},                             // empty, not nil: dropped
		{FilePaths: []string{""}, Todos: []Todo{{}}},                         // one empty element: kept
		{Source: Source{Path: "p", Offset: -3, Index: -1}},                   // first Source field omitted
		{Source: Source{Record: "r"}},
		{Text: "<a href=\"x\">&amp;</a>\u2028\u2029\x00\x1f\x7f\xff\xc3"},
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, // an error, as encoding/json's
	} {
		checkAppendStored(t, &e)
	}
	// The error leaves dst as it was.
	dst := []byte("keep")
	out, err := AppendStored(dst, &Event{ID: "x", Time: time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err == nil || string(out) != "keep" {
		t.Fatalf("got %q, %v; want the dst back and an error", out, err)
	}
}

// FuzzAppendStored holds AppendStored to encoding/json over arbitrary
// strings in every kind of string field.
func FuzzAppendStored(f *testing.F) {
	f.Add("id", "text", "cmd", "/a/b", int64(1), true)
	f.Add("\u2028", "<&>", "\x00\x1f\"\\", "\xff\xc3", int64(-1), false)
	f.Add("🙂", "é\ufffd", "\xe2\x80\xa9", "\xed\xa0\x80", int64(math.MinInt64), true)
	f.Fuzz(func(t *testing.T, a, b, c, d string, n int64, ok bool) {
		code := int(n)
		e := Event{
			ID: a, Kind: Kind(b), Subtype: c, SessionID: d, ParentSessionID: a, AgentID: b,
			Agent: c, CWD: d, GitBranch: a, MessageID: b, Tool: c, ToolCallID: d,
			FilePaths: []string{a, b, c, d}, Command: a, Query: b, URL: c, Text: d,
			Todos:  []Todo{{Content: a, Status: b, ActiveForm: c}, {Content: d}},
			Source: Source{File: a, Path: b, Offset: n, Index: code, Record: c},
		}
		if ok {
			e.OK, e.ExitCode, e.TextBytes, e.Boilerplate = &ok, &code, code, true
			e.Time = time.Unix(n>>16, n&0xffff).UTC()
		}
		checkAppendStored(t, &e)
		if ok {
			// The omitempty fields empty, Source's first ones included.
			checkAppendStored(t, &Event{ID: a, Agent: b, Source: Source{Offset: n, Record: d}})
		}
	})
}

// BenchmarkAppendStored encodes the events the Claude Code adapter makes
// of ~8 MB of realistic lines, by AppendStored and by the json.Encoder the
// store used before it, into one reused buffer as the store does.
func BenchmarkAppendStored(b *testing.B) {
	var events []Event
	p := NewClaudeCode(Options{})
	var offset int64
	for _, l := range genClaudeCode(8 << 20) {
		events = append(events, p.ParseLine(l, Position{File: "bench", Path: "/home/user/.claude/projects/x/s.jsonl", Offset: offset})...)
		offset += int64(len(l) + 1)
	}
	size := 0
	for i := range events {
		js, err := encodeStd(&events[i])
		if err != nil {
			b.Fatal(err)
		}
		size += len(js)
	}
	b.Run("enc=AppendStored", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			for i := range events {
				var err error
				if buf, err = AppendStored(buf[:0], &events[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(events)), "events/op")
	})
	b.Run("enc=json.Encoder", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			for i := range events {
				buf.Reset()
				if err := enc.Encode(&events[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(events)), "events/op")
	})
}
