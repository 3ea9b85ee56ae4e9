package medallion

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Evidence in the binary encoding, from binaryV5 on. Evidence was most of
// a stored medallion: 64 % of the bytes of the medallions Tier 0 makes of
// the shared corpus's sessions, and 25 of the 42 KB of a medallion
// checkpointed 10,000 times (issue 12: evidence should not dominate the
// medallion). It repeats three things, which v5 writes once or packs:
//
//   - The session. Entries are newest last and a session leaves runs of
//     them; an entry of the session of the entry before names none.
//   - The text. A list item's entry repeats the item's text; while the item
//     is still in the list its Item names (the affordance lists, the
//     subsystems by name), the entry holds its position there instead.
//   - Event ids. The agents' ids end in a UUID, a hex hash or a tool call's
//     letters and digits ("cc:rec:" and a UUID, "cx:msg:" and 16 hex digits,
//     "cc:call:toolu_" and 24 letters and digits), kept as their 16 bytes,
//     4 or 6 bits a character; the part before is written only when it
//     differs from that of the id of the same kind before
//     (codec_eventid.go).
//
// Each field stays a unit of its own (MarshalBinaryUnits), so the delta of
// an old version still copies the entries the next version kept.
//
// A reference to a list item's text, the session of the entry before and
// a repeated id prefix take a byte or two and stand for all of the bytes
// they repeat, so a corrupt or
// hostile encoding could stand for about the square of its size (a 40 KB
// one made UnmarshalBinary allocate 118 MB of event ids, a 46 KB one made
// AppendJSON write 39 MB). The bytes repeated so are bounded by
// maxRepeated in one encoding: readers refuse more, and the writer spells
// a text or prefix out once the bound would be passed.
//
// Layout of one entry (the list is a count of entries, as before):
//
//	string  Item
//	uvarint text: 0 the empty text, 1 a string follows, k ≥ 2 item k-2
//	        of the list Item names
//	uvarint session: 0 the session of the entry before ("" before the
//	        first), n ≥ 1 a string of n-1 bytes follows
//	uvarint count of event ids, then each id (codec_eventid.go)
const (
	textEmpty   = 0
	textLiteral = 1
	textItem    = 2 // and up: the item's position plus textItem

	// maxRepeated is far above what real evidence repeats: MaxEvidence
	// entries with a list item's sentence and 20 ids with prefixes of a
	// dozen bytes are some 50 KB.
	maxRepeated = 1 << 20
)

// repeat reports whether n more bytes may be repeated by reference
// (maxRepeated), and counts them if so.
func (e *encoder) repeat(n int) bool {
	if e.repeated+n > maxRepeated {
		return false
	}
	e.repeated += n
	return true
}

// repeat counts n bytes repeated by reference, failing past maxRepeated.
func (d *decoder) repeat(n int) {
	if d.repeated += n; d.repeated > maxRepeated {
		d.fail(fmt.Errorf("evidence repeats more than %d bytes by reference", maxRepeated))
	}
}

// itemTexts finds the texts of the list an Evidence.Item names: an
// affordance list, or the subsystems' names (made once, into subsystems);
// nil for any other item.
func (m *Medallion) itemTexts(item string, subsystems *[]string) []string {
	if item != ItemSubsystem {
		if l := m.List(item); l != nil {
			return *l
		}
		return nil
	}
	if *subsystems == nil {
		*subsystems = make([]string, len(m.Summary.Subsystems))
		for i, s := range m.Summary.Subsystems {
			(*subsystems)[i] = s.Name
		}
	}
	return *subsystems
}

// encodeEvidence writes m.Evidence in the layout of format: packed (v5),
// or as v2 to v4 wrote it, every field spelled out (tests write the older
// formats with it).
func (m *Medallion) encodeEvidence(e *encoder, format byte) {
	e.count(len(m.Evidence))
	if format < binaryV5 {
		for _, v := range m.Evidence {
			e.string(v.Item)
			e.string(v.Text)
			e.string(v.SessionID)
			e.strings(v.EventIDs)
		}
		return
	}
	var subsystems []string // the subsystems' names, made once
	session := ""
	var prefixes idPrefixes
	for _, v := range m.Evidence {
		e.string(v.Item)

		item := -1
		if v.Text != "" {
			item = slices.Index(m.itemTexts(v.Item, &subsystems), v.Text)
		}
		switch {
		case v.Text == "":
			e.uvarint(textEmpty)
		case item >= 0 && e.repeat(len(v.Text)):
			e.uvarint(uint64(textItem + item))
		default:
			e.uvarint(textLiteral)
			e.uvarint(uint64(len(v.Text)))
			e.b = append(e.b, v.Text...)
		}
		e.end()

		if v.SessionID == session && e.repeat(len(session)) {
			e.uvarint(0)
		} else {
			e.uvarint(uint64(len(v.SessionID)) + 1)
			e.b = append(e.b, v.SessionID...)
			session = v.SessionID
		}
		e.end()

		e.count(len(v.EventIDs))
		for _, id := range v.EventIDs {
			prefixes.pack(e, id)
			e.end()
		}
	}
}

// evidenceText reads an entry's text reference: the text's bytes, or the
// position of the item in the list the entry's Item names (item ≥ 0).
func (d *decoder) evidenceText() (text []byte, item int) {
	switch r := d.uvarint(); {
	case d.err != nil || r == textEmpty:
		return nil, -1
	case r == textLiteral:
		return d.bytes(), -1
	case r-textItem > uint64(len(d.b)): // no list is that long
		d.fail(fmt.Errorf("evidence text refers to item %d", r-textItem))
		return nil, -1
	default:
		return nil, int(r - textItem)
	}
}

// evidenceSession reads an entry's session reference: the session's bytes
// and true, or false for the session of the entry before.
func (d *decoder) evidenceSession() ([]byte, bool) {
	n := d.uvarint()
	if n == 0 || d.err != nil {
		return nil, false
	}
	return d.take(n - 1), true
}

// skipEvidence steps over the evidence of an encoding of format (v2 on),
// reading its fields' lengths only.
func (d *decoder) skipEvidence(format byte) {
	var prefixes idPrefixesRead
	for range d.count(4) {
		d.bytes() // the item
		if format < binaryV5 {
			d.bytes()
			d.bytes()
			for range d.count(1) {
				d.bytes()
			}
			continue
		}
		d.evidenceText()
		d.evidenceSession()
		for range d.count(1) {
			d.packedID(&prefixes)
		}
	}
}

// errNoItem: an entry refers to a list item that is not there.
var errNoItem = errors.New("evidence text refers to a missing item")

// evidenceV5 decodes the evidence of a v5 encoding into out, whose lists
// before the evidence are decoded. The unpacked event ids share a few
// strings (ids): they are not in b as they read.
func (d *decoder) evidenceV5(out *Medallion) {
	n := d.count(4) // an item, a text, a session and a count: a byte each
	if n == 0 {
		return
	}
	out.Evidence = make([]Evidence, n)
	var subsystems []string
	// Packed ids unpack to about 2-2.5 times their bytes ("cc:rec:" and
	// a UUID's 36 characters from a tag and 16 bytes): one chunk holds
	// them unless the evidence is most of what is left.
	ids := arena{next: 3 * (len(d.b) - d.off)}
	var session string
	var prefixes idPrefixesRead
	var scratch []byte
	for i := range out.Evidence {
		v := &out.Evidence[i]
		v.Item = d.string()
		if text, item := d.evidenceText(); item >= 0 {
			list := out.itemTexts(v.Item, &subsystems)
			if item >= len(list) {
				d.fail(errNoItem)
				return
			}
			v.Text = list[item]
			d.repeat(len(v.Text))
		} else if len(text) > 0 {
			v.Text = d.s[d.off-len(text) : d.off]
		}
		if s, ok := d.evidenceSession(); ok {
			session = d.s[d.off-len(s) : d.off]
		} else {
			d.repeat(len(session))
		}
		v.SessionID = session
		count := d.count(1)
		if count == 0 {
			v.EventIDs = []string{}
			continue
		}
		v.EventIDs = d.list(count)
		for j := range v.EventIDs {
			id, inB := d.eventID(scratch, &prefixes)
			if inB {
				v.EventIDs[j] = d.s[d.off-len(id) : d.off]
			} else {
				scratch = id[:0]
				v.EventIDs[j] = ids.string(id)
			}
		}
	}
}

// arena hands out strings copied into shared chunks: the unpacked event
// ids of one medallion make a few allocations, not one each. A string
// keeps its whole chunk alive.
type arena struct {
	chunk strings.Builder
	next  int // the size of the next chunk
}

func (a *arena) string(b []byte) string {
	if a.chunk.Cap()-a.chunk.Len() < len(b) {
		a.chunk = strings.Builder{}
		a.chunk.Grow(max(a.next, len(b)))
		a.next *= 2
	}
	start := a.chunk.Len()
	a.chunk.Write(b)
	return a.chunk.String()[start:]
}
