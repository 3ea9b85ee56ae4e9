package medallion

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Event ids in v5 evidence (codec_evidence.go). The agents' ids are a
// prefix naming the agent and the kind of record, then an id of the
// agent's own: a UUID ("cc:rec:" and a Claude Code record's uuid), a hex
// hash ("cx:msg:" and 16 hex digits), or letters and digits
// ("cc:call:toolu_" and 24 of them, a tool call's id). Each id is one
// uvarint tag, whose low two bits are its kind and the rest a length n:
//
//	kind 0 (idLiteral)  the id's n bytes follow
//	kind 1 (idUUID)     prefix, then the UUID's 16 bytes
//	kind 2 (idHex)      prefix, uvarint m, then m bytes: 2m hex digits
//	kind 3 (idAlnum)    prefix, uvarint c, then c characters of [0-9A-Za-z]
//	                    at 6 bits each, in ⌈6c/8⌉ bytes, high bits first
//	prefix              n = 0: the prefix of the id of the same kind
//	                    before ("" before the first); n ≥ 1: n-1 bytes
//
// A repeated prefix counts towards maxRepeated (codec_evidence.go); past
// it the writer spells the prefix out again.
//
// Only what unpacks to the same bytes is packed: lowercase UUIDs and hex,
// an even number of hex digits.
const (
	idLiteral = 0
	idUUID    = 1
	idHex     = 2
	idAlnum   = 3
	idKinds   = 4 // the tag's low two bits

	uuidLen = 36 // 8-4-4-4-12 lowercase hex digits and hyphens
	// minTail is the shortest hex or letters-and-digits tail packed:
	// shorter ones save a byte or two at most.
	minTail = 8
)

// idPrefixes is the prefix of the last id of each kind written.
type idPrefixes [idKinds]string

// pack appends id packed to e.b.
func (p *idPrefixes) pack(e *encoder, id string) {
	kind, head, tail := splitEventID(id)
	if kind == idLiteral {
		e.uvarint(uint64(len(id))<<2 | idLiteral)
		e.b = append(e.b, id...)
		return
	}
	if head == p[kind] && e.repeat(len(head)) {
		e.uvarint(kind)
	} else {
		e.uvarint(uint64(len(head)+1)<<2 | kind)
		e.b = append(e.b, head...)
		p[kind] = head
	}
	switch kind {
	case idUUID:
		e.b = appendHex(e.b, tail[:8], tail[9:13], tail[14:18], tail[19:23], tail[24:])
	case idHex:
		e.uvarint(uint64(len(tail) / 2))
		e.b = appendHex(e.b, tail)
	default:
		e.uvarint(uint64(len(tail)))
		e.b = appendAlnum(e.b, tail)
	}
}

// splitEventID tells how id is packed: a prefix and a UUID (idUUID); a
// prefix ending in ':' (or none) and hex digits (idHex); a prefix and
// letters and digits (idAlnum); or as it is (idLiteral).
func splitEventID(id string) (kind uint64, head, tail string) {
	if n := len(id); n >= uuidLen && isUUID(id[n-uuidLen:]) {
		return idUUID, id[:n-uuidLen], id[n-uuidLen:]
	}
	tail = id[strings.LastIndexByte(id, ':')+1:]
	if len(tail) >= minTail && len(tail)%2 == 0 && isLowerHex(tail) {
		return idHex, id[:len(id)-len(tail)], tail
	}
	i := len(id)
	for i > 0 && alnumValue(id[i-1]) >= 0 {
		i--
	}
	if len(id)-i >= minTail {
		return idAlnum, id[:i], id[i:]
	}
	return idLiteral, "", ""
}

// isUUID reports whether s is a UUID in its canonical lowercase form.
func isUUID(s string) bool {
	if len(s) != uuidLen || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	return isLowerHex(s[:8]) && isLowerHex(s[9:13]) && isLowerHex(s[14:18]) && isLowerHex(s[19:23]) && isLowerHex(s[24:])
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// appendHex appends the bytes the hex digits of parts spell.
func appendHex(b []byte, parts ...string) []byte {
	for _, p := range parts {
		n := len(b)
		b = append(b, make([]byte, len(p)/2)...)
		hex.Decode(b[n:], []byte(p)) // checked by isLowerHex
	}
	return b
}

// alnumChars are the characters idAlnum packs, by their 6-bit value.
const alnumChars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// alnumValue is c's 6-bit value, or -1 for a character not packed.
func alnumValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'Z':
		return int(c-'A') + 10
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 36
	}
	return -1
}

// appendAlnum appends s (letters and digits) at 6 bits a character.
func appendAlnum(b []byte, s string) []byte {
	var acc uint32
	bits := 0
	for i := 0; i < len(s); i++ {
		acc = acc<<6 | uint32(alnumValue(s[i]))
		if bits += 6; bits >= 8 {
			bits -= 8
			b = append(b, byte(acc>>bits))
		}
	}
	if bits > 0 {
		b = append(b, byte(acc<<(8-bits)))
	}
	return b
}

// appendUnalnum appends the c characters packed in p (appendAlnum:
// 3 bytes for 4), and false when p holds a value no character has. p is
// ⌈6c/8⌉ bytes. Four characters at a time: a scope query decodes every
// id of its answers' evidence.
func appendUnalnum(dst, p []byte, c int) ([]byte, bool) {
	n := len(dst)
	// Room for whole groups; the padding's characters are cut off.
	dst = slices.Grow(dst, c+3)[:n+c+3]
	out := dst[n:]
	var bad uint32
	for i, j := 0, 0; i < c; i, j = i+4, j+3 {
		var v uint32
		switch len(p) - j { // bytes left for this group
		case 1:
			v = uint32(p[j]) << 16
		case 2:
			v = uint32(p[j])<<16 | uint32(p[j+1])<<8
		default:
			v = uint32(p[j])<<16 | uint32(p[j+1])<<8 | uint32(p[j+2])
		}
		a, b, x, y := v>>18, v>>12&63, v>>6&63, v&63
		bad |= (a+2)>>6 | (b+2)>>6 | (x+2)>>6 | (y+2)>>6 // 62 and 63 are no character
		out[i], out[i+1], out[i+2], out[i+3] = alnumByValue[a], alnumByValue[b], alnumByValue[x], alnumByValue[y]
	}
	return dst[:n+c], bad == 0
}

// alnumByValue is alnumChars by 6-bit value, padded to 64.
var alnumByValue = func() (t [64]byte) {
	copy(t[:], alnumChars)
	return t
}()

// appendUUID appends the canonical form of the UUID u (16 bytes).
func appendUUID(dst, u []byte) []byte {
	const digits = "0123456789abcdef"
	n := len(dst)
	dst = slices.Grow(dst, uuidLen)[:n+uuidLen]
	out := dst[n:]
	k := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[k] = '-'
			k++
		}
		out[k], out[k+1] = digits[c>>4], digits[c&15]
		k += 2
	}
	return dst
}

// idPrefixesRead is idPrefixes for a reader: the prefixes in the
// encoding.
type idPrefixesRead [idKinds][]byte

// eventID reads one packed event id: a literal as its bytes in d.b
// (inB), any other unpacked into buf's memory.
func (d *decoder) eventID(buf []byte, prefixes *idPrefixesRead) (id []byte, inB bool) {
	head, tail := d.packedID(prefixes)
	if tail == nil {
		return head, true
	}
	return tail.unpack(d, append(buf[:0], head...)), false
}

// packedID reads one event id: a literal as head alone, any other as its
// prefix and the packed rest.
func (d *decoder) packedID(prefixes *idPrefixesRead) (head []byte, tail *idTail) {
	tag := d.uvarint()
	kind, n := tag%idKinds, tag/idKinds
	if d.err != nil || kind == idLiteral {
		return d.take(n), nil
	}
	if n > 0 {
		prefixes[kind] = d.take(n - 1)
	} else {
		d.repeat(len(prefixes[kind]))
	}
	d.tail = idTail{kind: kind}
	switch kind {
	case idUUID:
		d.tail.packed = d.take(16)
	case idHex:
		d.tail.packed = d.take(d.uvarint())
	default:
		c := d.uvarint()
		if c > uint64(len(d.b)) { // more than the bytes left could hold
			d.fail(fmt.Errorf("event id of %d characters", c))
		}
		d.tail.chars = int(c)
		d.tail.packed = d.take((6*c + 7) / 8)
	}
	return prefixes[kind], &d.tail
}

// idTail is the packed part of an event id after its prefix.
type idTail struct {
	kind   uint64
	packed []byte
	chars  int // idAlnum: how many characters packed holds
}

// unpack appends the characters t packs to dst; t's characters are
// letters, digits and hyphens, which JSON needs no escape for.
func (t *idTail) unpack(d *decoder, dst []byte) []byte {
	if d.err != nil {
		return dst
	}
	switch t.kind {
	case idUUID:
		return appendUUID(dst, t.packed)
	case idHex:
		return hex.AppendEncode(dst, t.packed)
	}
	dst, ok := appendUnalnum(dst, t.packed, t.chars)
	if !ok {
		d.fail(fmt.Errorf("event id characters out of range"))
	}
	return dst
}
