package transcript

import (
	"encoding/json"
	"strconv"

	"github.com/medallionhq/medallion/internal/jsonscan"
)

// UnmarshalStored decodes an event from the JSON encoding/json gives it,
// as the store keeps buffered events. A checkpoint reads every event of
// its episode back, and encoding/json's reflection and separate validation
// pass made that a fifth of a backfill's CPU; the store's own encoding has
// one shape, which is read here directly. Anything else (a field this
// build does not know, a value of another type, bad JSON) goes to
// json.Unmarshal, so the result is always what json.Unmarshal gives for
// what the store wrote, and its error for anything it would refuse.
func UnmarshalStored(js []byte, e *Event) error {
	if decodeStored(js, e) {
		return nil
	}
	*e = Event{}
	return json.Unmarshal(js, e)
}

// decodeStored decodes js into e, reporting false (e then half filled) at
// the first thing it does not expect.
func decodeStored(js []byte, e *Event) bool {
	*e = Event{}
	it := jsonscan.NewObjectIter(js)
	for it.Next() {
		v := it.Val
		var ok bool
		switch string(it.Key) {
		case "id":
			e.ID, ok = storedString(v)
		case "kind":
			var k string
			k, ok = storedString(v)
			e.Kind = Kind(k)
		case "subtype":
			e.Subtype, ok = storedString(v)
		case "time":
			ok = e.Time.UnmarshalJSON(v) == nil
		case "session_id":
			e.SessionID, ok = storedString(v)
		case "parent_session_id":
			e.ParentSessionID, ok = storedString(v)
		case "agent_id":
			e.AgentID, ok = storedString(v)
		case "agent":
			e.Agent, ok = storedString(v)
		case "cwd":
			e.CWD, ok = storedString(v)
		case "git_branch":
			e.GitBranch, ok = storedString(v)
		case "message_id":
			e.MessageID, ok = storedString(v)
		case "tool":
			e.Tool, ok = storedString(v)
		case "tool_call_id":
			e.ToolCallID, ok = storedString(v)
		case "file_paths":
			e.FilePaths, ok = storedStrings(v)
		case "command":
			e.Command, ok = storedString(v)
		case "query":
			e.Query, ok = storedString(v)
		case "url":
			e.URL, ok = storedString(v)
		case "ok":
			var b bool
			b, ok = storedBool(v)
			e.OK = &b
		case "exit_code":
			var n int
			n, ok = storedIntSize(v)
			e.ExitCode = &n
		case "text":
			e.Text, ok = storedString(v)
		case "text_bytes":
			e.TextBytes, ok = storedIntSize(v)
		case "todos":
			e.Todos, ok = storedTodos(v)
		case "boilerplate":
			e.Boilerplate, ok = storedBool(v)
		case "source":
			ok = storedSource(v, &e.Source)
		}
		if !ok {
			return false
		}
	}
	// The closing brace was read, and nothing follows it.
	return it.End() > 0 && jsonscan.SkipSpace(js, it.End()) == len(js)
}

func storedString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	return jsonString(v), true
}

func storedBool(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func storedInt(v []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// storedIntSize is storedInt for an int field: in its range, as
// encoding/json requires.
func storedIntSize(v []byte) (int, bool) {
	n, err := strconv.ParseInt(string(v), 10, strconv.IntSize)
	return int(n), err == nil
}

func storedStrings(v []byte) ([]string, bool) {
	if string(v) == "null" {
		return nil, true
	}
	var out []string
	it := jsonscan.NewArrayIter(v)
	for it.Next() {
		s, ok := storedString(it.Val)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, it.Err() == nil
}

func storedTodos(v []byte) ([]Todo, bool) {
	if string(v) == "null" {
		return nil, true
	}
	var out []Todo
	it := jsonscan.NewArrayIter(v)
	for it.Next() {
		var t Todo
		ok := storedFields(it.Val, func(key, val []byte) (ok bool) {
			switch string(key) {
			case "content":
				t.Content, ok = storedString(val)
			case "status":
				t.Status, ok = storedString(val)
			case "active_form":
				t.ActiveForm, ok = storedString(val)
			}
			return ok
		})
		if !ok {
			return nil, false
		}
		out = append(out, t)
	}
	return out, it.Err() == nil
}

func storedSource(v []byte, s *Source) bool {
	return storedFields(v, func(key, val []byte) (ok bool) {
		switch string(key) {
		case "file":
			s.File, ok = storedString(val)
		case "path":
			s.Path, ok = storedString(val)
		case "offset":
			s.Offset, ok = storedInt(val)
		case "index":
			s.Index, ok = storedIntSize(val)
		case "record":
			s.Record, ok = storedString(val)
		}
		return ok
	})
}

// storedFields calls field with each key and raw value of the object v,
// and reports whether v is an object of which field took every field.
func storedFields(v []byte, field func(key, val []byte) bool) bool {
	it := jsonscan.NewObjectIter(v)
	for it.Next() {
		if !field(it.Key, it.Val) {
			return false
		}
	}
	return it.End() > 0 // the closing brace was read
}
