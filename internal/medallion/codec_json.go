package medallion

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/medallionhq/medallion/internal/jsonstr"
)

// AppendJSON appends to dst the JSON that encoding/json writes for the
// medallion b (a binary encoding of any format) decodes to: the same
// bytes as json.Marshal after UnmarshalBinary, without building the
// medallion or reflecting over it. The export writes every version of
// every medallion with it: through encoding/json, reflection and the
// decode's allocations were most of an export's CPU (issue 12: the
// minute holding the daemon's daily export was the only one above
// 0.1 % idle CPU). A corrupt encoding is an error, as for
// UnmarshalBinary, and so is a confidence JSON cannot hold (NaN, ±Inf),
// as for encoding/json.
//
// It walks the layout of UnmarshalBinary (codec.go) and writes the
// fields in the order and under the names of Medallion's JSON tags;
// TestAppendJSONMatchesEncodingJSON holds it to encoding/json over every
// field.
func AppendJSON(dst, b []byte) ([]byte, error) {
	if err := checkFormat(b); err != nil {
		return dst, err
	}
	w := jsonWriter{b: dst, d: decoder{b: b, off: 1}}
	d := &w.d

	w.field(`{"meta":{"medallion_id":`)
	w.field(`,"schema_version":`)
	w.field(`,"model":`)
	w.field(`,"created_at":`)
	w.field(`,"updated_at":`)
	w.optField(`,"knowledge_min_ts":`)
	w.optField(`,"knowledge_max_ts":`)
	w.field(`,"status":`)
	w.raw(`,"version":`)
	w.b = strconv.AppendInt(w.b, int64(d.int()), 10)

	w.raw(`},"scope":{"graph_nodes":`)
	w.strs()
	w.raw(`,"tags":`)
	w.strs()

	w.field(`},"summary":{"high_level":`)
	w.raw(`,"subsystems":`)
	w.items[listSubsystems].mark(d.off, 3) // name, status, notes
	w.list(3, func() {
		w.field(`{"name":`)
		w.field(`,"status":`)
		w.field(`,"notes":`)
		w.raw(`}`)
	})

	w.raw(`},"decisions":`)
	w.list(3+8, func() {
		w.field(`{"id":`)
		w.field(`,"statement":`)
		w.field(`,"rationale":`)
		w.raw(`,"confidence":`)
		if err := w.float(d.float64()); err != nil {
			d.fail(err)
		}
		w.raw(`}`)
	})

	w.raw(`,"open_questions":`)
	w.list(4, func() {
		w.field(`{"id":`)
		w.field(`,"question":`)
		w.raw(`,"blocked_on":`)
		w.strs()
		w.field(`,"priority":`)
		w.raw(`}`)
	})

	w.raw(`,"affordances":{"recommended_entry_points":`)
	w.items[listEntryPoints].mark(d.off, 1)
	w.strs()
	w.raw(`,"avoid_repeating":`)
	w.items[listAvoidRepeating].mark(d.off, 1)
	w.strs()
	w.raw(`,"invariants":`)
	w.items[listInvariants].mark(d.off, 1)
	w.strs()
	w.raw(`}`)

	// The lists after the affordances are omitempty, and absent from the
	// older formats.
	if b[0] >= binaryV5 {
		w.evidenceV5()
	} else if b[0] >= binaryV2 {
		w.optList(`,"evidence":`, 4, func() {
			w.field(`{"item":`)
			w.optField(`,"text":`)
			w.field(`,"session_id":`)
			w.raw(`,"event_ids":`)
			w.strs()
			w.raw(`}`)
		})
	}
	if b[0] >= binaryV3 {
		w.optList(`,"review":`, 4, func() {
			w.field(`{"item":`)
			w.field(`,"text":`)
			w.field(`,"source":`)
			w.field(`,"state":`)
			w.raw(`}`)
		})
	}
	if b[0] >= binaryV4 {
		w.optList(`,"pinned":`, 2, func() {
			w.field(`{"item":`)
			w.optField(`,"text":`)
			w.raw(`}`)
		})
		w.optList(`,"forgotten":`, 3, func() {
			w.field(`{"kind":`)
			w.field(`,"fingerprint":`)
			w.optList(`,"event_ids":`, 1, func() { w.str(d.bytes()) })
			w.raw(`}`)
		})
	}
	w.raw(`}`)

	if d.err == nil && d.off != len(b) {
		d.fail(fmt.Errorf("%d bytes after the last field", len(b)-d.off))
	}
	if d.err != nil {
		return dst, fmt.Errorf("medallion binary: %w", d.err)
	}
	return w.b, nil
}

// bytes reads a string field as the bytes it is stored as.
func (d *decoder) bytes() []byte { return d.take(d.uvarint()) }

// jsonWriter appends to b the JSON of what it reads from d.
type jsonWriter struct {
	b []byte
	d decoder
	// The lists v5 evidence refers to, by listSubsystems and the rest.
	items [4]listItems
}

// The lists an evidence entry's text can refer to (jsonWriter.items).
const (
	listSubsystems = iota
	listEntryPoints
	listAvoidRepeating
	listInvariants
)

// listItems is where one list is in the encoding: its count at, per
// strings an element, and once an entry refers to it (found), where its
// n items begin: in small, or in large when there are more.
type listItems struct {
	at, per int
	found   bool
	n       int
	small   [64]int32
	large   []int32
}

// mark records that the list's count is at off, and its elements are per
// strings each.
func (at *listItems) mark(off, per int) { at.at, at.per = off, per }

func (at *listItems) start(k int) int {
	if at.large != nil {
		return int(at.large[k])
	}
	return int(at.small[k])
}

// evidenceV5 writes the evidence of a v5 encoding (codec_evidence.go),
// each entry as encoding/json writes an Evidence.
func (w *jsonWriter) evidenceV5() {
	d := &w.d
	var session []byte
	var prefixes idPrefixesRead
	w.optList(`,"evidence":`, 4, func() {
		item := d.bytes()
		w.raw(`{"item":`)
		w.str(item)
		text, k := d.evidenceText()
		if k >= 0 {
			var ok bool
			if text, ok = w.listItem(item, k); !ok {
				d.fail(errNoItem)
				return
			}
			d.repeat(len(text))
		}
		if len(text) > 0 {
			w.raw(`,"text":`)
			w.str(text)
		}
		if s, ok := d.evidenceSession(); ok {
			session = s
		} else {
			d.repeat(len(session))
		}
		w.raw(`,"session_id":`)
		w.str(session)
		w.raw(`,"event_ids":`)
		w.list(1, func() {
			head, tail := d.packedID(&prefixes)
			w.str(head)
			if tail != nil {
				// The rest goes inside the quotes: it needs no escape.
				w.b = tail.unpack(d, w.b[:len(w.b)-1])
				w.raw(`"`)
			}
		})
		w.raw(`}`)
	})
}

// listItem returns the text of item k of the list an evidence entry's
// item names, read again from the encoding; false when there is none.
// The first reference into a list finds where each of its items begins
// (find), so every reference costs the same however long the list: a
// corrupt encoding of many references into a long list must not take
// time in their product.
func (w *jsonWriter) listItem(item []byte, k int) ([]byte, bool) {
	var l int
	switch string(item) {
	case ItemSubsystem:
		l = listSubsystems
	case ItemEntryPoint:
		l = listEntryPoints
	case ItemAvoidRepeating:
		l = listAvoidRepeating
	case ItemInvariant:
		l = listInvariants
	default:
		return nil, false
	}
	at := &w.items[l]
	if !at.found {
		at.find(w.d.b)
	}
	if k >= at.n {
		return nil, false
	}
	d := decoder{b: w.d.b, off: at.start(k)}
	text := d.bytes()
	return text, d.err == nil
}

// find finds where the list's items begin in b. Lists of up to
// len(at.small) items, all a curator keeps, take no allocation.
func (at *listItems) find(b []byte) {
	d := decoder{b: b, off: at.at}
	n := d.count(at.per)
	starts := at.small[:]
	if n > len(at.small) {
		at.large = make([]int32, n)
		starts = at.large
	}
	for i := range n {
		starts[i] = int32(d.off)
		for range at.per {
			d.bytes()
		}
	}
	at.found = true
	if d.err == nil {
		at.n = n
	}
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

// field writes name and the string field read next.
func (w *jsonWriter) field(name string) {
	w.raw(name)
	w.str(w.d.bytes())
}

// optField writes an omitempty string field: nothing when it is empty.
func (w *jsonWriter) optField(name string) {
	if s := w.d.bytes(); len(s) > 0 {
		w.raw(name)
		w.str(s)
	}
}

// list writes the list read next, each element by elem; its count is
// checked against minSize bytes an element, as UnmarshalBinary does. The
// binary encoding never holds a nil list (UnmarshalBinary decodes every
// list non-nil), so an empty one is [].
func (w *jsonWriter) list(minSize int, elem func()) {
	w.elems(w.d.count(minSize), elem)
}

// optList is list for an omitempty field named name: nothing when the
// list is empty.
func (w *jsonWriter) optList(name string, minSize int, elem func()) {
	if n := w.d.count(minSize); n > 0 {
		w.raw(name)
		w.elems(n, elem)
	}
}

// elems writes a list of n elements, each by elem.
func (w *jsonWriter) elems(n int, elem func()) {
	w.raw(`[`)
	for i := range n {
		if i > 0 {
			w.raw(`,`)
		}
		elem()
	}
	w.raw(`]`)
}

// strs writes a list of strings.
func (w *jsonWriter) strs() {
	w.list(1, func() { w.str(w.d.bytes()) })
}

// float writes f as encoding/json does (ES6 number formatting, exponent
// unpadded), and refuses what JSON cannot hold.
func (w *jsonWriter) float(f float64) error {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return errors.New("json: unsupported value: " + strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		if n := len(w.b); n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
	return nil
}

// str writes s as a JSON string exactly as encoding/json does with its
// default HTML escaping.
func (w *jsonWriter) str(s []byte) {
	w.b = jsonstr.Append(w.b, s, true)
}
