package medallion

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The binary encoding is how the store keeps medallions: decoding the JSON
// of a 1.5 KB medallion took about 15 µs, most of a scope query's time,
// and this encoding decodes it more than ten times faster. JSON stays
// the format of the API, the schema and every medallion stored before.
//
// Layout (binaryV1): one format byte, then every field in the order of
// codecFields, with no names and no padding:
//
//	string      uvarint byte length, then the bytes as they are
//	int         varint (zig-zag)
//	float64     8 bytes, IEEE 754 bits, little-endian
//	slice       uvarint element count, then the elements
//	struct      its fields in order
//
// The format byte can never begin JSON (which starts with '{' or
// whitespace), so a reader tells the two apart by the first byte. A change
// of layout takes a new format byte; readers keep decoding the old ones.

// binaryV1 is the first byte of version 1 of the binary encoding.
// binaryV2 appends Evidence after the affordances; version 1 encodings
// (written before evidence existed) still decode, with no evidence.
// binaryV3 appends Review after Evidence, binaryV4 Pinned and Forgotten
// after Review. binaryV5 packs the evidence (codec_evidence.go).
const (
	binaryV1 = 0x01
	binaryV2 = 0x02
	binaryV3 = 0x03
	binaryV4 = 0x04
	binaryV5 = 0x05
)

// codecFields lists every field the binary encoding carries, by Go path
// (a slice's element fields follow "[]"), in encoding order. A test checks
// it against the Medallion type by reflection: a field added to the schema
// must be added to MarshalBinary, UnmarshalBinary and this list together,
// or the store would silently drop it.
var codecFields = []string{
	"Meta.MedallionID",
	"Meta.SchemaVersion",
	"Meta.Model",
	"Meta.CreatedAt",
	"Meta.UpdatedAt",
	"Meta.KnowledgeMinTS",
	"Meta.KnowledgeMaxTS",
	"Meta.Status",
	"Meta.Version",
	"Scope.GraphNodes",
	"Scope.Tags",
	"Summary.HighLevel",
	"Summary.Subsystems[].Name",
	"Summary.Subsystems[].Status",
	"Summary.Subsystems[].Notes",
	"Decisions[].ID",
	"Decisions[].Statement",
	"Decisions[].Rationale",
	"Decisions[].Confidence",
	"OpenQuestions[].ID",
	"OpenQuestions[].Question",
	"OpenQuestions[].BlockedOn",
	"OpenQuestions[].Priority",
	"Affordances.RecommendedEntryPoints",
	"Affordances.AvoidRepeating",
	"Affordances.Invariants",
	"Evidence[].Item",
	"Evidence[].Text",
	"Evidence[].SessionID",
	"Evidence[].EventIDs",
	"Review[].Item",
	"Review[].Text",
	"Review[].Source",
	"Review[].State",
	"Pinned[].Item",
	"Pinned[].Text",
	"Forgotten[].Kind",
	"Forgotten[].Fingerprint",
	"Forgotten[].EventIDs",
}

// MarshalBinary encodes m in the store's compact binary form (see
// UnmarshalBinary). It never fails; the error is there for
// encoding.BinaryMarshaler.
func (m *Medallion) MarshalBinary() ([]byte, error) {
	e := encoder{b: make([]byte, 0, m.binarySizeHint())}
	m.encode(&e)
	return e.b, nil
}

// MarshalBinaryUnits is MarshalBinary that also says where the encoding's
// units end: ends[0] is the end of the format byte and the meta fields,
// then comes the end of every string, count and number after them, in
// order. The store stores an old version as the difference from the next
// one, unit by unit (a list item moved or kept is found whole).
func (m *Medallion) MarshalBinaryUnits() (b []byte, ends []int) {
	e := encoder{b: make([]byte, 0, m.binarySizeHint()), ends: make([]int, 0, 64)}
	m.encode(&e)
	return e.b, e.ends
}

func (m *Medallion) encode(e *encoder) { m.encodeAs(e, binaryV5) }

// encodeAs writes format, binaryV4 or binaryV5: the current encoding, or
// the one before it (to test reading what older builds stored).
func (m *Medallion) encodeAs(e *encoder, format byte) {
	e.b = append(e.b, format)

	e.string(m.Meta.MedallionID)
	e.string(m.Meta.SchemaVersion)
	e.string(m.Meta.Model)
	e.string(m.Meta.CreatedAt)
	e.string(m.Meta.UpdatedAt)
	e.string(m.Meta.KnowledgeMinTS)
	e.string(m.Meta.KnowledgeMaxTS)
	e.string(string(m.Meta.Status))
	e.b = binary.AppendVarint(e.b, int64(m.Meta.Version))
	e.ends = e.ends[:0] // the meta is one unit
	e.end()

	e.strings(m.Scope.GraphNodes)
	e.strings(m.Scope.Tags)

	e.string(m.Summary.HighLevel)
	e.count(len(m.Summary.Subsystems))
	for _, s := range m.Summary.Subsystems {
		e.string(s.Name)
		e.string(string(s.Status))
		e.string(s.Notes)
	}

	e.count(len(m.Decisions))
	for _, d := range m.Decisions {
		e.string(d.ID)
		e.string(d.Statement)
		e.string(d.Rationale)
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(d.Confidence))
		e.end()
	}

	e.count(len(m.OpenQuestions))
	for _, q := range m.OpenQuestions {
		e.string(q.ID)
		e.string(q.Question)
		e.strings(q.BlockedOn)
		e.string(string(q.Priority))
	}

	e.strings(m.Affordances.RecommendedEntryPoints)
	e.strings(m.Affordances.AvoidRepeating)
	e.strings(m.Affordances.Invariants)

	m.encodeEvidence(e, format)

	e.count(len(m.Review))
	for _, r := range m.Review {
		e.string(r.Item)
		e.string(r.Text)
		e.string(r.Source)
		e.string(string(r.State))
	}

	e.count(len(m.Pinned))
	for _, p := range m.Pinned {
		e.string(p.Item)
		e.string(p.Text)
	}
	e.count(len(m.Forgotten))
	for _, f := range m.Forgotten {
		e.string(f.Kind)
		e.string(f.Fingerprint)
		e.strings(f.EventIDs)
	}
}

// binarySizeHint is a capacity that holds most encodings without growing:
// the text plus two bytes of length or count per string and list.
func (m *Medallion) binarySizeHint() int {
	n := 64 + len(m.Meta.MedallionID) + len(m.Meta.SchemaVersion) + len(m.Meta.Model) +
		len(m.Meta.CreatedAt) + len(m.Meta.UpdatedAt) + len(m.Meta.KnowledgeMinTS) +
		len(m.Meta.KnowledgeMaxTS) + len(m.Meta.Status) + len(m.Summary.HighLevel)
	list := func(s []string) {
		for _, v := range s {
			n += 2 + len(v)
		}
	}
	list(m.Scope.GraphNodes)
	list(m.Scope.Tags)
	for _, s := range m.Summary.Subsystems {
		n += 6 + len(s.Name) + len(s.Status) + len(s.Notes)
	}
	for _, d := range m.Decisions {
		n += 14 + len(d.ID) + len(d.Statement) + len(d.Rationale)
	}
	for _, q := range m.OpenQuestions {
		n += 8 + len(q.ID) + len(q.Question) + len(q.Priority)
		list(q.BlockedOn)
	}
	list(m.Affordances.RecommendedEntryPoints)
	list(m.Affordances.AvoidRepeating)
	list(m.Affordances.Invariants)
	for _, v := range m.Evidence {
		n += 8 + len(v.Item) + len(v.Text) + len(v.SessionID)
		list(v.EventIDs)
	}
	return n
}

// encoder appends to b; when ends is non-nil it also records where each
// unit ends (see MarshalBinaryUnits).
type encoder struct {
	b        []byte
	ends     []int
	repeated int // bytes v5 evidence repeated by reference (maxRepeated)
}

func (e *encoder) end() {
	if e.ends != nil {
		e.ends = append(e.ends, len(e.b))
	}
}

func (e *encoder) count(n int) {
	e.uvarint(uint64(n))
	e.end()
}

// uvarint appends v, not ending a unit.
func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *encoder) string(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
	e.end()
}

func (e *encoder) strings(s []string) {
	e.count(len(s))
	for _, v := range s {
		e.string(v)
	}
}

// errTruncated reports an encoding that ends inside a field.
var errTruncated = errors.New("truncated")

// UnmarshalBinary decodes what MarshalBinary encoded into m, replacing all
// of m. A truncated, corrupt or unknown encoding is an error and leaves m
// unchanged.
//
// A round trip yields the Normalized form: every list decodes non-nil,
// empty when it was nil or empty (the store Normalizes before writing, so
// what it reads back equals what it wrote).
//
// b is copied once, into one string that every string field of m is a
// substring of, but for the event ids v5 packs: they unpack into a few
// shared chunks (codec_evidence.go). Keeping any one field keeps its
// whole string or chunk alive.
func (m *Medallion) UnmarshalBinary(b []byte) error { return m.unmarshalBinary(b, true) }

// UnmarshalBinaryWithoutEvidence is UnmarshalBinary for a reader that
// does not use the evidence (a save file shows none): it steps over the
// evidence, whose event ids are most of a decode's work since v5 packs
// them, and leaves m.Evidence nil. It checks that the evidence ends where
// the encoding says, not what its references refer to.
func (m *Medallion) UnmarshalBinaryWithoutEvidence(b []byte) error {
	return m.unmarshalBinary(b, false)
}

func (m *Medallion) unmarshalBinary(b []byte, evidence bool) error {
	if err := checkFormat(b); err != nil {
		return err
	}
	d := decoder{b: b, s: string(b), off: 1}
	var out Medallion

	out.Meta.MedallionID = d.string()
	out.Meta.SchemaVersion = d.string()
	out.Meta.Model = d.string()
	out.Meta.CreatedAt = d.string()
	out.Meta.UpdatedAt = d.string()
	out.Meta.KnowledgeMinTS = d.string()
	out.Meta.KnowledgeMaxTS = d.string()
	out.Meta.Status = Status(d.string())
	out.Meta.Version = d.int()

	out.Scope.GraphNodes = d.strings()
	out.Scope.Tags = d.strings()

	out.Summary.HighLevel = d.string()
	// Minimum encoded sizes bound each count by the bytes left, so a
	// corrupt count fails instead of allocating: three empty strings for
	// a Subsystem, three and a float for a Decision, three and an empty
	// list for an OpenQuestion.
	out.Summary.Subsystems = make([]Subsystem, d.count(3))
	for i := range out.Summary.Subsystems {
		s := &out.Summary.Subsystems[i]
		s.Name = d.string()
		s.Status = SubsystemStatus(d.string())
		s.Notes = d.string()
	}

	out.Decisions = make([]Decision, d.count(3+8))
	for i := range out.Decisions {
		x := &out.Decisions[i]
		x.ID = d.string()
		x.Statement = d.string()
		x.Rationale = d.string()
		x.Confidence = d.float64()
	}

	out.OpenQuestions = make([]OpenQuestion, d.count(4))
	for i := range out.OpenQuestions {
		q := &out.OpenQuestions[i]
		q.ID = d.string()
		q.Question = d.string()
		q.BlockedOn = d.strings()
		q.Priority = Priority(d.string())
	}

	out.Affordances.RecommendedEntryPoints = d.strings()
	out.Affordances.AvoidRepeating = d.strings()
	out.Affordances.Invariants = d.strings()

	switch {
	case b[0] >= binaryV2 && !evidence:
		d.skipEvidence(b[0])
	case b[0] >= binaryV5:
		d.evidenceV5(&out)
	case b[0] >= binaryV2:
		// Three empty strings and an empty list at least.
		if n := d.count(4); n > 0 {
			out.Evidence = make([]Evidence, n)
			for i := range out.Evidence {
				v := &out.Evidence[i]
				v.Item = d.string()
				v.Text = d.string()
				v.SessionID = d.string()
				v.EventIDs = d.strings()
			}
		}
	}
	if b[0] >= binaryV3 {
		// Four empty strings at least.
		if n := d.count(4); n > 0 {
			out.Review = make([]Review, n)
			for i := range out.Review {
				r := &out.Review[i]
				r.Item = d.string()
				r.Text = d.string()
				r.Source = d.string()
				r.State = ReviewState(d.string())
			}
		}
	}
	if b[0] >= binaryV4 {
		// Two empty strings at least.
		if n := d.count(2); n > 0 {
			out.Pinned = make([]Pin, n)
			for i := range out.Pinned {
				out.Pinned[i].Item = d.string()
				out.Pinned[i].Text = d.string()
			}
		}
		// Two empty strings and an empty list at least.
		if n := d.count(3); n > 0 {
			out.Forgotten = make([]Forgotten, n)
			for i := range out.Forgotten {
				f := &out.Forgotten[i]
				f.Kind = d.string()
				f.Fingerprint = d.string()
				if ids := d.strings(); len(ids) > 0 {
					f.EventIDs = ids
				}
			}
		}
	}

	if d.err == nil && d.off != len(b) {
		d.fail(fmt.Errorf("%d bytes after the last field", len(b)-d.off))
	}
	if d.err != nil {
		return fmt.Errorf("medallion binary: %w", d.err)
	}
	*m = out
	return nil
}

// checkFormat fails on an empty encoding or an unknown format byte. Every
// format begins with the same meta fields.
func checkFormat(b []byte) error {
	if len(b) == 0 {
		return errors.New("medallion binary: empty input")
	}
	if b[0] < binaryV1 || b[0] > binaryV5 {
		return fmt.Errorf("medallion binary: unknown format byte 0x%02x", b[0])
	}
	return nil
}

// UnmarshalBinaryMeta decodes only the meta fields at the start of an
// encoding: what a history listing shows, without decoding (or keeping
// alive) the rest. Its strings are copies, so they hold nothing of b.
// b may be cut short after the meta.
func UnmarshalBinaryMeta(b []byte) (Meta, error) {
	if err := checkFormat(b); err != nil {
		return Meta{}, err
	}
	d := decoder{b: b, off: 1, copy: true}
	var m Meta
	m.MedallionID = d.string()
	m.SchemaVersion = d.string()
	m.Model = d.string()
	m.CreatedAt = d.string()
	m.UpdatedAt = d.string()
	m.KnowledgeMinTS = d.string()
	m.KnowledgeMaxTS = d.string()
	m.Status = Status(d.string())
	m.Version = d.int()
	if d.err != nil {
		return Meta{}, fmt.Errorf("medallion binary: %w", d.err)
	}
	return m, nil
}

// decoder reads fields at off: numbers from b, strings sliced out of s
// (the same bytes as one string), or copied from b when copy is set. After
// the first error every read returns
// a zero value, so UnmarshalBinary checks err once at the end; counts
// are then zero and no loop runs.
type decoder struct {
	b    []byte
	s    string
	copy bool
	off  int
	err  error
	slab []string // backs the lists read so far (see strings)
	tail idTail   // the packed part of the event id read last
	// repeated counts the bytes v5 evidence repeated by reference
	// (maxRepeated).
	repeated int
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %w", d.off, err)
	}
	d.off = len(d.b)
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	switch {
	case n == 0:
		d.fail(errTruncated)
		return 0
	case n < 0:
		d.fail(errors.New("varint overflows 64 bits"))
		return 0
	}
	d.off += n
	return v
}

// count reads a list length and checks that the bytes left could hold
// that many elements of at least minSize bytes each.
func (d *decoder) count(minSize int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64((len(d.b)-d.off)/minSize) {
		d.fail(fmt.Errorf("count %d exceeds the %d bytes left", n, len(d.b)-d.off))
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail(fmt.Errorf("string of %d bytes exceeds the %d bytes left: %w", n, len(d.b)-d.off, errTruncated))
		return ""
	}
	var s string
	if d.copy {
		s = string(d.b[d.off : d.off+int(n)])
	} else {
		s = d.s[d.off : d.off+int(n)]
	}
	d.off += int(n)
	return s
}

// strings reads a list of strings. The lists of one medallion share a few
// larger arrays (d.slab) instead of one allocation each: a scope query's
// ten answers made six lists apiece, and an evidence entry makes one, so
// these were most of a decode's allocations. Each list is cut with its
// capacity at its length, so an append to one copies it rather than
// writing over the next.
func (d *decoder) strings() []string {
	n := d.count(1)
	if n == 0 {
		return []string{} // non-nil: JSON shows [], as for a decoded "[]"
	}
	l := d.list(n)
	for i := range l {
		l[i] = d.string()
	}
	return l
}

// list returns a list of n strings to fill, carved out of d.slab.
func (d *decoder) list(n int) []string {
	if len(d.slab)+n > cap(d.slab) {
		// Each new slab doubles the last, from 16, up to 1024 strings
		// (16 KiB); a longer list gets one of its own size.
		size := min(max(2*cap(d.slab), 16), 1024)
		d.slab = make([]string, 0, max(size, n))
	}
	start := len(d.slab)
	d.slab = d.slab[:start+n]
	return d.slab[start:len(d.slab):len(d.slab)]
}

// take reads n bytes, or fails when fewer are left.
func (d *decoder) take(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail(fmt.Errorf("%d bytes exceed the %d left: %w", n, len(d.b)-d.off, errTruncated))
		return nil
	}
	s := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return s
}

func (d *decoder) int() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	switch {
	case n == 0:
		d.fail(errTruncated)
		return 0
	case n < 0:
		d.fail(errors.New("varint overflows 64 bits"))
		return 0
	}
	if int64(int(v)) != v {
		d.fail(fmt.Errorf("integer %d overflows int", v))
		return 0
	}
	d.off += n
	return int(v)
}

func (d *decoder) float64() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.off < 8 {
		d.fail(errTruncated)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.off:]))
	d.off += 8
	return v
}
