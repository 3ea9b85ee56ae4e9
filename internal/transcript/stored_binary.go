package transcript

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// An event's binary encoding is how the store buffers events until a
// checkpoint clears them (AppendStored's JSON is what older builds wrote,
// and is still read). Every event written is read back once, whole, by
// the checkpoint. Against the JSON it skips escaping every newline and
// tab of a tool's output on the way in and unescaping it on the way out,
// a sixth of a generated backfill's storing and reading back (issue 12).
//
// It has no field tags: adding a field makes a new encoding, which the
// store tells apart by its chunk format. In order:
//
//	flags         a byte (binHasTime, …)
//	time          when binHasTime: its MarshalBinary, after its length in a byte
//	exit code     when binHasExitCode: a varint
//	text bytes, source offset, source index: varints
//	paths, todos  their counts, uvarints
//	short strings the length of all of them (uvarint), then each as its
//	              length (uvarint) and bytes: the ids, kind, agent, cwd,
//	              paths, command, query, url, todos and source names, in
//	              Event's order
//	text          its length (uvarint) and bytes
//
// The short strings sit together so that a decoded event's are cut from
// one string (one allocation instead of a dozen), and the text apart so
// that keeping an id does not keep the text alive.

// Flag bits of the encoding's first byte.
const (
	binHasTime = 1 << iota
	binHasOK
	binOK
	binHasExitCode
	binBoilerplate
	binFlagsKnown = binHasTime | binHasOK | binOK | binHasExitCode | binBoilerplate
)

// errBinary is wrapped by UnmarshalBinary's errors.
var errBinary = errors.New("bad binary event")

// AppendBinary appends e's binary encoding to dst (encoding.BinaryAppender).
// It fails only for a time MarshalBinary refuses (a zone offset that is
// not a whole minute), returning dst as it was.
func (e *Event) AppendBinary(dst []byte) ([]byte, error) {
	n0 := len(dst)
	var flags byte
	if !e.Time.IsZero() {
		flags |= binHasTime
	}
	if e.OK != nil {
		flags |= binHasOK
		if *e.OK {
			flags |= binOK
		}
	}
	if e.ExitCode != nil {
		flags |= binHasExitCode
	}
	if e.Boilerplate {
		flags |= binBoilerplate
	}
	dst = append(dst, flags)
	if flags&binHasTime != 0 {
		t := e.Time
		if _, off := t.Zone(); off == 0 {
			// Read back as UTC, as its JSON ("Z") is, not as Local
			// where Local is UTC.
			t = t.UTC()
		}
		b, err := t.MarshalBinary()
		if err != nil {
			return dst[:n0], fmt.Errorf("encode event %s: %w", e.ID, err)
		}
		dst = append(dst, byte(len(b)))
		dst = append(dst, b...)
	}
	if flags&binHasExitCode != 0 {
		dst = binary.AppendVarint(dst, int64(*e.ExitCode))
	}
	dst = binary.AppendVarint(dst, int64(e.TextBytes))
	dst = binary.AppendVarint(dst, e.Source.Offset)
	dst = binary.AppendVarint(dst, int64(e.Source.Index))
	dst = binary.AppendUvarint(dst, uint64(len(e.FilePaths)))
	dst = binary.AppendUvarint(dst, uint64(len(e.Todos)))
	size := 0
	e.eachShort(func(s *string) { size += uvarintLen(len(*s)) + len(*s) })
	dst = binary.AppendUvarint(dst, uint64(size))
	e.eachShort(func(s *string) { dst = appendBinString(dst, *s) })
	return appendBinString(dst, e.Text), nil
}

// eachShort calls fn with a pointer to each short string of e, in the
// encoding's order: the encoder reads them, the decoder sets them (its
// slices sized already), so the two cannot disagree on the order.
func (e *Event) eachShort(fn func(*string)) {
	for _, p := range [...]*string{&e.ID, (*string)(&e.Kind), &e.Subtype, &e.SessionID, &e.ParentSessionID,
		&e.AgentID, &e.Agent, &e.CWD, &e.GitBranch, &e.MessageID, &e.Tool, &e.ToolCallID} {
		fn(p)
	}
	for i := range e.FilePaths {
		fn(&e.FilePaths[i])
	}
	fn(&e.Command)
	fn(&e.Query)
	fn(&e.URL)
	for i := range e.Todos {
		t := &e.Todos[i]
		fn(&t.Content)
		fn(&t.Status)
		fn(&t.ActiveForm)
	}
	fn(&e.Source.File)
	fn(&e.Source.Path)
	fn(&e.Source.Record)
}

func uvarintLen(n int) int {
	return len(binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64), uint64(n)))
}

func appendBinString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// UnmarshalBinary sets e to the event AppendBinary encoded in data
// (encoding.BinaryUnmarshaler). Anything else, a byte too few or too many
// included, is an error, and leaves e zero.
func (e *Event) UnmarshalBinary(data []byte) error {
	*e = Event{}
	d := binDecoder{rest: data}
	flags := d.byte()
	if flags&^binFlagsKnown != 0 {
		return fmt.Errorf("%w: flags %#x", errBinary, flags)
	}
	if flags&binHasTime != 0 {
		if err := e.Time.UnmarshalBinary(d.bytes(int(d.byte()))); err != nil && d.err == nil {
			d.fail("time: " + err.Error())
		}
	}
	if flags&binHasOK != 0 {
		ok := flags&binOK != 0
		e.OK = &ok
	}
	if flags&binHasExitCode != 0 {
		code := d.int()
		e.ExitCode = &code
	}
	e.Boilerplate = flags&binBoilerplate != 0
	e.TextBytes = d.int()
	e.Source.Offset = d.varint()
	e.Source.Index = d.int()
	if n := d.count(); n > 0 {
		e.FilePaths = make([]string, n)
	}
	if n := d.count(); n > 0 {
		e.Todos = make([]Todo, n)
	}
	if short := d.bytes(d.count()); d.err == nil {
		d.err = e.setShortFrom(short)
	}
	e.Text = d.string()
	if d.err == nil && len(d.rest) > 0 {
		d.fail(fmt.Sprintf("%d bytes after the event", len(d.rest)))
	}
	if d.err != nil {
		*e = Event{}
	}
	return d.err
}

// setShortFrom sets e's short strings from their part of the encoding,
// each cut from one copy of it.
func (e *Event) setShortFrom(short []byte) error {
	all := string(short)
	d := binDecoder{rest: short}
	e.eachShort(func(s *string) {
		n := d.count()
		at := len(all) - len(d.rest)
		d.rest = d.rest[n:]
		*s = all[at : at+n]
	})
	if d.err == nil && len(d.rest) > 0 {
		d.fail("short strings longer than their fields")
	}
	return d.err
}

// binDecoder reads an encoding's fields in order; after its first error
// every read returns a zero value, and err says what went wrong.
type binDecoder struct {
	rest []byte
	err  error
}

func (d *binDecoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errBinary, what)
		d.rest = nil
	}
}

func (d *binDecoder) byte() byte {
	if len(d.rest) == 0 {
		d.fail("truncated")
		return 0
	}
	b := d.rest[0]
	d.rest = d.rest[1:]
	return b
}

func (d *binDecoder) bytes(n int) []byte {
	if n > len(d.rest) {
		d.fail("truncated")
		return nil
	}
	b := d.rest[:n]
	d.rest = d.rest[n:]
	return b
}

func (d *binDecoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.rest)
	if k <= 0 {
		d.fail("bad length")
		return 0
	}
	d.rest = d.rest[k:]
	return v
}

func (d *binDecoder) varint() int64 {
	v, k := binary.Varint(d.rest)
	if k <= 0 {
		d.fail("bad integer")
		return 0
	}
	d.rest = d.rest[k:]
	return v
}

// int is a varint that fits an int.
func (d *binDecoder) int() int {
	v := d.varint()
	if int64(int(v)) != v {
		d.fail("integer out of range")
		return 0
	}
	return int(v)
}

// count is a length in bytes, or a count of things that take a byte at
// least: beyond what is left it is damage, not a reason to allocate.
func (d *binDecoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.rest)) {
		d.fail("truncated")
		return 0
	}
	return int(n)
}

func (d *binDecoder) string() string {
	return string(d.bytes(d.count()))
}
