package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// This file edits JSON as text: integrate and integrate --remove change one
// value of a user's settings file and leave every other byte as it was (key
// order, indentation, spacing, number spelling), so that removing what was
// added gives back the original file exactly. Decoding into a map and
// encoding it again would sort the keys and reformat the whole file.

// jsonNode is one JSON value of a text and where it is.
type jsonNode struct {
	kind       byte // '{', '[', '"', or 0 for a number, true, false or null
	start, end int  // text[start:end] is the value
	members    []jsonMember
	elems      []*jsonNode
}

// jsonMember is one member of an object: text[keyStart:value.end] is the
// whole member, key and value.
type jsonMember struct {
	key      string
	keyStart int
	value    *jsonNode
}

// member returns the value of the last member named key (the one a JSON
// decoder keeps), or nil.
func (n *jsonNode) member(key string) *jsonNode {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].value
		}
	}
	return nil
}

// memberIndex is the index of the last member named key, or -1.
func (n *jsonNode) memberIndex(key string) int {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return i
		}
	}
	return -1
}

// span is the text of one item of a container: a member or an element.
type span struct{ start, end int }

// items returns the spans of an object's members or an array's elements.
func (n *jsonNode) items() []span {
	var s []span
	for _, m := range n.members {
		s = append(s, span{m.keyStart, m.value.end})
	}
	for _, e := range n.elems {
		s = append(s, span{e.start, e.end})
	}
	return s
}

// parseJSONText parses text, which must be one valid JSON value (checked
// with json.Valid first), into nodes that know their offsets.
func parseJSONText(text []byte) (*jsonNode, error) {
	if !json.Valid(text) {
		// Let the decoder say where and why.
		var v any
		if err := json.Unmarshal(text, &v); err != nil {
			return nil, err
		}
		return nil, errors.New("invalid JSON")
	}
	p := &jsonParser{text: text}
	p.space()
	return p.value()
}

type jsonParser struct {
	text []byte
	pos  int
}

func (p *jsonParser) space() {
	for p.pos < len(p.text) && strings.IndexByte(" \t\r\n", p.text[p.pos]) >= 0 {
		p.pos++
	}
}

// value parses the value at pos; the text is valid JSON, so every branch
// can trust what it finds.
func (p *jsonParser) value() (*jsonNode, error) {
	n := &jsonNode{start: p.pos}
	switch c := p.text[p.pos]; c {
	case '{':
		n.kind = '{'
		p.pos++
		p.space()
		for p.text[p.pos] != '}' {
			keyStart := p.pos
			p.str()
			var key string
			if err := json.Unmarshal(p.text[keyStart:p.pos], &key); err != nil {
				return nil, err
			}
			p.space()
			p.pos++ // ':'
			p.space()
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, jsonMember{key: key, keyStart: keyStart, value: v})
			p.space()
			if p.text[p.pos] == ',' {
				p.pos++
				p.space()
			}
		}
		p.pos++
	case '[':
		n.kind = '['
		p.pos++
		p.space()
		for p.text[p.pos] != ']' {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			p.space()
			if p.text[p.pos] == ',' {
				p.pos++
				p.space()
			}
		}
		p.pos++
	case '"':
		n.kind = '"'
		p.str()
	default:
		for p.pos < len(p.text) && strings.IndexByte(",]} \t\r\n", p.text[p.pos]) < 0 {
			p.pos++
		}
	}
	n.end = p.pos
	return n, nil
}

// str skips the string at pos.
func (p *jsonParser) str() {
	p.pos++ // opening quote
	for p.text[p.pos] != '"' {
		if p.text[p.pos] == '\\' {
			p.pos++
		}
		p.pos++
	}
	p.pos++
}

// jsonStyle is how a file is laid out, so that added text looks like the
// rest of it.
type jsonStyle struct {
	compact bool   // the whole value on one line
	unit    string // one level of indentation
	spaced  bool   // ": " and ", " rather than ":" and "," on one line
}

// styleOf infers the layout of text from its root value.
func styleOf(text []byte, root *jsonNode) jsonStyle {
	st := jsonStyle{unit: "  ", spaced: true}
	if len(root.members) > 0 {
		m := root.members[0]
		st.spaced = bytes.ContainsAny(text[m.keyStart+len(keyText(text, m)):m.value.start], " \t\n")
	}
	// An empty object tells nothing: lay it out as Claude Code does.
	if len(root.members) > 0 && !bytes.Contains(text[root.start:root.end], []byte("\n")) {
		st.compact = true
		return st
	}
	// The indentation of the first nested line, relative to its parent's.
	var find func(n *jsonNode) bool
	find = func(n *jsonNode) bool {
		items := n.items()
		if len(items) == 0 {
			return false
		}
		between := text[n.start+1 : items[0].start]
		if i := bytes.LastIndexByte(between, '\n'); i >= 0 {
			inner := string(between[i+1:])
			outer := lineIndent(text, n.start)
			if strings.HasPrefix(inner, outer) && len(inner) > len(outer) {
				st.unit = inner[len(outer):]
				return true
			}
		}
		for _, m := range n.members {
			if find(m.value) {
				return true
			}
		}
		for _, e := range n.elems {
			if find(e) {
				return true
			}
		}
		return false
	}
	find(root)
	return st
}

// keyText is the quoted key of m as written.
func keyText(text []byte, m jsonMember) string {
	p := &jsonParser{text: text, pos: m.keyStart}
	p.str()
	return string(text[m.keyStart:p.pos])
}

// lineIndent is the leading whitespace of the line that holds pos.
func lineIndent(text []byte, pos int) string {
	start := bytes.LastIndexByte(text[:pos], '\n') + 1
	end := start
	for end < len(text) && (text[end] == ' ' || text[end] == '\t') {
		end++
	}
	return string(text[start:end])
}

// render encodes v as it will sit in the file: indented with the file's
// unit, its continuation lines starting with indent, or on one line.
func (st jsonStyle) render(v any, indent string, oneLine bool) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if oneLine {
		// One value per line, to be joined below (with "" the encoder
		// would not break lines at all, nor put spaces after colons).
		enc.SetIndent("", "\t")
	} else {
		enc.SetIndent(indent, st.unit)
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	out := strings.TrimSuffix(buf.String(), "\n")
	if !oneLine {
		return out, nil
	}
	// Join the unindented lines (a string never holds a raw newline):
	// nothing inside brackets, a space after ":" and "," when spaced.
	lines := strings.Split(out, "\n")
	var b strings.Builder
	for i, l := range lines {
		l = strings.TrimLeft(l, "\t") // a string holds "\t", never a tab
		lines[i] = l
		if i > 0 && st.spaced && !strings.HasSuffix(lines[i-1], "{") && !strings.HasSuffix(lines[i-1], "[") &&
			!strings.HasPrefix(l, "}") && !strings.HasPrefix(l, "]") {
			b.WriteByte(' ')
		}
		if !st.spaced && strings.HasPrefix(l, `"`) {
			// A member's line: its key ends at the first unescaped quote.
			p := &jsonParser{text: []byte(l)}
			p.str()
			if strings.HasPrefix(l[p.pos:], ": ") {
				l = l[:p.pos+1] + l[p.pos+2:]
			}
		}
		b.WriteString(l)
	}
	return b.String(), nil
}

// appendItem inserts a new last item into container c of text: a member
// `"key": value` when c is an object, an element value when c is an array.
// The new item is separated from the previous one as the previous one is
// from its own predecessor, so removeItem of it restores text exactly.
func appendItem(text []byte, st jsonStyle, c *jsonNode, key string, v any) ([]byte, error) {
	items := c.items()
	var at int
	var sep, indent string
	switch {
	case len(items) >= 2:
		prev, last := items[len(items)-2], items[len(items)-1]
		between := text[prev.end:last.start] // `,` and whitespace
		sep = string(between[bytes.IndexByte(between, ',')+1:])
		at = last.end
	case len(items) == 1:
		sep = string(text[c.start+1 : items[0].start])
		at = items[0].end
		if !strings.Contains(sep, "\n") {
			// `[x]` or `[ x ]` says nothing about what follows a comma.
			sep = ""
			if st.spaced {
				sep = " "
			}
		}
	}
	if len(items) > 0 {
		// Items on one line stay on one line, whatever the file does.
		oneLine := true
		if i := strings.LastIndexByte(sep, '\n'); i >= 0 {
			indent, oneLine = sep[i+1:], false
		}
		item, err := st.item(key, v, indent, oneLine)
		if err != nil {
			return nil, err
		}
		return splice(text, at, at, ","+sep+item), nil
	}
	// An empty container: open it up, one level deeper than its line.
	if st.compact {
		item, err := st.item(key, v, "", true)
		if err != nil {
			return nil, err
		}
		return splice(text, c.start+1, c.end-1, item), nil
	}
	base := lineIndent(text, c.start)
	item, err := st.item(key, v, base+st.unit, false)
	if err != nil {
		return nil, err
	}
	return splice(text, c.start+1, c.end-1, "\n"+base+st.unit+item+"\n"+base), nil
}

// item renders a member (key != "") or an element.
func (st jsonStyle) item(key string, v any, indent string, oneLine bool) (string, error) {
	s, err := st.render(v, indent, oneLine)
	if err != nil || key == "" {
		return s, err
	}
	k, err := json.Marshal(key)
	if err != nil {
		return "", err
	}
	colon := ": "
	if oneLine && !st.spaced {
		colon = ":"
	}
	return string(k) + colon + s, nil
}

// removeItem removes item k of container c with the separator before it
// (after it, for the first item), the exact inverse of appendItem.
func removeItem(text []byte, c *jsonNode, k int) []byte {
	items := c.items()
	switch {
	case len(items) == 1:
		return splice(text, c.start+1, c.end-1, "")
	case k > 0:
		return splice(text, items[k-1].end, items[k].end, "")
	default:
		return splice(text, items[0].start, items[1].start, "")
	}
}

// splice replaces text[from:to] with s, in a new slice.
func splice(text []byte, from, to int, s string) []byte {
	out := make([]byte, 0, len(text)-(to-from)+len(s))
	out = append(out, text[:from]...)
	out = append(out, s...)
	return append(out, text[to:]...)
}

// replaceValue replaces the value n with v encoded on one line.
func replaceValue(text []byte, n *jsonNode, v any) ([]byte, error) {
	s, err := jsonStyle{}.render(v, "", true)
	if err != nil {
		return nil, fmt.Errorf("encode %v: %w", v, err)
	}
	return splice(text, n.start, n.end, s), nil
}
