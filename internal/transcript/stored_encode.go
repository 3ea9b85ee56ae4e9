package transcript

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// AppendStored appends to dst the JSON of e exactly as a json.Encoder with
// SetEscapeHTML(false) writes it, without Encode's newline: the encoding
// the store keeps events in, which UnmarshalStored reads back. It is
// written out by hand because encoding/json's reflection and string
// escaping took up to a tenth of a backfill's CPU; the bytes must not
// change, since events stored by earlier builds sit next to new ones, so
// the tests hold it to encoding/json byte for byte. The one value it does
// not write itself, a time that is not valid RFC 3339 (a year outside
// [0,9999], a zone offset of a day or more), goes to encoding/json, whose
// error it returns with dst as it was.
func AppendStored(dst []byte, e *Event) ([]byte, error) {
	n0 := len(dst)
	dst = append(dst, `{"id":`...)
	dst = appendStoredString(dst, e.ID)
	dst = append(dst, `,"kind":`...)
	dst = appendStoredString(dst, string(e.Kind))
	dst = appendOptString(dst, `,"subtype":`, e.Subtype)
	if !e.Time.IsZero() {
		t, err := e.Time.AppendText(append(dst, `,"time":"`...))
		if err != nil {
			return appendStoredJSON(dst[:n0], e)
		}
		dst = append(t, '"')
	}
	dst = appendOptString(dst, `,"session_id":`, e.SessionID)
	dst = appendOptString(dst, `,"parent_session_id":`, e.ParentSessionID)
	dst = appendOptString(dst, `,"agent_id":`, e.AgentID)
	dst = append(dst, `,"agent":`...)
	dst = appendStoredString(dst, e.Agent)
	dst = appendOptString(dst, `,"cwd":`, e.CWD)
	dst = appendOptString(dst, `,"git_branch":`, e.GitBranch)
	dst = appendOptString(dst, `,"message_id":`, e.MessageID)
	dst = appendOptString(dst, `,"tool":`, e.Tool)
	dst = appendOptString(dst, `,"tool_call_id":`, e.ToolCallID)
	if len(e.FilePaths) > 0 {
		dst = append(dst, `,"file_paths":[`...)
		for i, p := range e.FilePaths {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendStoredString(dst, p)
		}
		dst = append(dst, ']')
	}
	dst = appendOptString(dst, `,"command":`, e.Command)
	dst = appendOptString(dst, `,"query":`, e.Query)
	dst = appendOptString(dst, `,"url":`, e.URL)
	if e.OK != nil {
		dst = append(dst, `,"ok":`...)
		dst = strconv.AppendBool(dst, *e.OK)
	}
	if e.ExitCode != nil {
		dst = append(dst, `,"exit_code":`...)
		dst = strconv.AppendInt(dst, int64(*e.ExitCode), 10)
	}
	dst = appendOptString(dst, `,"text":`, e.Text)
	if e.TextBytes != 0 {
		dst = append(dst, `,"text_bytes":`...)
		dst = strconv.AppendInt(dst, int64(e.TextBytes), 10)
	}
	if len(e.Todos) > 0 {
		dst = append(dst, `,"todos":[`...)
		for i := range e.Todos {
			t := &e.Todos[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"content":`...)
			dst = appendStoredString(dst, t.Content)
			dst = append(dst, `,"status":`...)
			dst = appendStoredString(dst, t.Status)
			dst = appendOptString(dst, `,"active_form":`, t.ActiveForm)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if e.Boilerplate {
		dst = append(dst, `,"boilerplate":true`...)
	}
	s := &e.Source
	dst = append(dst, `,"source":{`...)
	// Source's first fields are omitempty: a comma follows each one
	// written, offset always comes next.
	if s.File != "" {
		dst = append(dst, `"file":`...)
		dst = append(appendStoredString(dst, s.File), ',')
	}
	if s.Path != "" {
		dst = append(dst, `"path":`...)
		dst = append(appendStoredString(dst, s.Path), ',')
	}
	dst = append(dst, `"offset":`...)
	dst = strconv.AppendInt(dst, s.Offset, 10)
	if s.Index != 0 {
		dst = append(dst, `,"index":`...)
		dst = strconv.AppendInt(dst, int64(s.Index), 10)
	}
	dst = appendOptString(dst, `,"record":`, s.Record)
	return append(dst, "}}"...), nil
}

// appendStoredJSON is AppendStored by encoding/json, for what AppendStored
// does not write itself.
func appendStoredJSON(dst []byte, e *Event) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return dst, err
	}
	out := buf.Bytes()
	return out[:len(out)-1], nil // Encode's newline
}

// appendOptString appends key and s unless s is empty (omitempty).
func appendOptString(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendStoredString(append(dst, key...), s)
}

// storedSafe marks the bytes encoding/json copies into a string as they
// are when it does not escape HTML: ASCII but controls, '"' and '\\'.
// Bytes from 0x80 are not marked: they need a look at their UTF-8.
var storedSafe = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// specialBytes flags, by the high bit of its byte, each of the eight
// bytes of w (little-endian) that encoding/json does not copy as it is: a
// byte with the high bit set (not ASCII), below 0x20 (subtracting 0x20
// borrows), or '"' or '\\' (xor with it leaves a zero, and subtracting 1
// borrows). A borrow can flag a byte above a flagged one wrongly, never
// one below, so the lowest flag is exact.
func specialBytes(w uint64) uint64 {
	q, bs := w^('"'*lsbs), w^('\\'*lsbs)
	return (w | (w - ' '*lsbs) | (q-lsbs)&^q | (bs-lsbs)&^bs) & msbs
}

// appendStoredString appends s quoted as encoding/json quotes a string
// with HTML escaping off: \" \\ \b \f \n \r \t, other controls as \u00XX,
// each byte of invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped
// (they end a line in JavaScript).
func appendStoredString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most of a text needs no escape: skip it eight bytes at a time.
		if len(s)-i >= 8 {
			w := s[i : i+8]
			m := specialBytes(uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
				uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else if storedSafe[s[i]] {
			i++
			continue
		}
		if c := s[i]; c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
