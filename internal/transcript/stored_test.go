package transcript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fill sets every field of v (a struct, recursively) to a value that is
// not its zero, so that an encoding of it holds every key.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.String:
		// Quotes, escapes, non-ASCII, a line separator, HTML.
		v.SetString(strings.Repeat("x", *n) + " \"q\" \\ é 🙂 \u2028 <a&b>\n\t")
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(-*n * 1000))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), n)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 25, 23, 59, 1, 123456789, time.FixedZone("x", 3600))))
			return
		}
		for i := range v.NumField() {
			fill(t, v.Field(i), n)
		}
	default:
		t.Fatalf("fill: a field of kind %s: teach fill and decodeStored about it", v.Kind())
	}
}

// TestUnmarshalStoredEveryField: an event with every field set is read
// back by the fast path (a field added to Event and not to decodeStored
// fails here) and equals what json.Unmarshal makes of it.
func TestUnmarshalStoredEveryField(t *testing.T) {
	var e Event
	n := 0
	fill(t, reflect.ValueOf(&e).Elem(), &n)
	checkStored(t, &e, true)
	// The false and negative values too.
	f, code := false, -1
	e.OK, e.ExitCode = &f, &code
	checkStored(t, &e, true)
	checkStored(t, &Event{}, true)
}

// checkStored encodes e as the store does and checks that UnmarshalStored
// gives what json.Unmarshal gives, by the fast path when fast is set.
func checkStored(t *testing.T, e *Event, fast bool) {
	t.Helper()
	js, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var want, got, direct Event
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	if err := UnmarshalStored(js, &got); err != nil {
		t.Fatalf("UnmarshalStored: %v\n%s", err, js)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UnmarshalStored differs from json.Unmarshal:\n got %+v\nwant %+v\n%s", got, want, js)
	}
	if fast && !decodeStored(js, &direct) {
		t.Errorf("the fast path refused the store's own encoding:\n%s", js)
	}
}

// TestUnmarshalStoredParsed: every event the parsers make of our
// transcript fixtures (and of the shared corpus, when present) reads back
// by the fast path as json.Unmarshal reads it, AppendStored encodes it as
// encoding/json does, and its binary encoding gives it back as its JSON
// does.
func TestUnmarshalStoredParsed(t *testing.T) {
	paths, _ := filepath.Glob("testdata/transcripts/*/*.jsonl")
	corpus, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "corpus", "claude-code", "*.jsonl"))
	if len(corpus) > 8 {
		corpus = corpus[:8]
	}
	events := 0
	for _, path := range append(paths, corpus...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		format := Detect(data)
		if format == "" {
			continue
		}
		p, err := New(format, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.SplitAfter(string(data), "\n") {
			for _, e := range p.ParseLine([]byte(line), Position{Path: path, Offset: int64(i)}) {
				checkStored(t, &e, true)
				checkAppendStored(t, &e)
				if !jsonExact(&e) {
					t.Fatalf("%s: a parser made an event JSON does not hold: %+v", path, e)
				}
				checkBinary(t, &e)
				events++
			}
		}
	}
	if events == 0 {
		t.Fatal("no events parsed")
	}
	t.Logf("%d events", events)
}

// TestUnmarshalStoredOtherShapes: what the store's encoding never holds
// goes to json.Unmarshal: the same event, or an error where it errs.
func TestUnmarshalStoredOtherShapes(t *testing.T) {
	for _, js := range []string{
		`{"id":"a","kind":"user_prompt","agent":"x","source":{"offset":1},"new_field":{"x":[1,2]}}`,
		`{"ID":"a","Kind":"user_prompt","agent":"x","source":{"offset":1}}`,
		`{"id":"a","ok":null,"exit_code":null,"file_paths":null,"todos":null,"source":null}`,
		`{"id":"a","text_bytes":1e3}`,
		`{"id":"a","exit_code":99999999999999999999}`,
		`{"id":"a",}`,
		`{"id":"a"} trailing`,
		`{"id":1}`,
		`[]`,
		``,
		`{"id":"a","file_paths":["x",2]}`,
		`{"id":"a","todos":[{"content":"c","status":"s","priority":"high"}]}`,
		` {"id" : "a" , "source" : { "offset" : 3 } } `,
	} {
		var want, got Event
		werr := json.Unmarshal([]byte(js), &want)
		gerr := UnmarshalStored([]byte(js), &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: UnmarshalStored error %v, json.Unmarshal %v", js, gerr, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", js, got, want)
		}
	}
}
