package transcript

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/medallionhq/medallion/internal/jsonstr"
)

// AppendStored appends to dst the JSON of e exactly as a json.Encoder with
// SetEscapeHTML(false) writes it, without Encode's newline: the encoding
// older builds stored events in (chunk format 1), which UnmarshalStored
// still reads. The store now writes Event.AppendBinary's; this stays here,
// in a test file, as the reference for what older builds wrote. It was
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

// appendStoredString appends s quoted as encoding/json quotes a string
// with HTML escaping off.
func appendStoredString(dst []byte, s string) []byte {
	return jsonstr.Append(dst, s, false)
}
