package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/medallionhq/medallion/internal/jsonscan"
	"github.com/medallionhq/medallion/internal/jsonstr"
)

// readHookCWD reads the hook's input, one JSON object, from r and returns
// its "cwd" member (the session's folder: Claude Code, Codex and Gemini CLI
// all send it, with session_id, source, transcript_path and
// hook_event_name) ("" when it has none, or null), matched as
// encoding/json matches a struct field's name (any case). It reads up to
// the end of that object, not to EOF: the hook answers as soon as the
// input is read, even if the agent keeps stdin open.
//
// Not encoding/json: its first decode in a process, reflection building
// the struct's field cache, was 56-94 µs of a hook that as a whole is a
// Go hello-world's 1.4-1.6 ms and 1.3-1.5× more (issue 12). It is held
// to encoding/json's result wherever encoding/json takes the input
// (FuzzReadHookCWD). It walks the object with the transcript parsers'
// reader (internal/jsonscan), which checks the other members' structure,
// not every escape or number in them: the hook does not read them.
func readHookCWD(r io.Reader) (string, error) {
	buf := make([]byte, 0, 1024)
	var sc objectScan
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), maxHookInput+1)])
		buf = buf[:len(buf)+n]
		switch end, ok := sc.scan(buf); {
		case !ok:
			return "", errHookSyntax
		case end > 0 && end <= maxHookInput:
			return objectCWD(buf[:end])
		case end > 0 || len(buf) > maxHookInput:
			return "", fmt.Errorf("hook input larger than %d bytes", maxHookInput)
		}
		if errors.Is(err, io.EOF) {
			if strings.TrimSpace(string(buf)) == "" {
				return "", errors.New("no hook input (an empty stdin)")
			}
			return "", errors.New("hook input ends before its JSON object does")
		}
		if err != nil {
			return "", err
		}
	}
}

var errHookSyntax = errors.New("hook input is not a JSON object")

// objectScan finds where the JSON object at the start of a growing buffer
// ends, across calls, by its brackets outside strings.
type objectScan struct {
	pos, depth        int
	inString, escaped bool
}

// scan goes on over b (the bytes so far) and returns the index just past
// the object's closing brace, 0 while it has not come, or false when b
// does not start with an object.
func (sc *objectScan) scan(b []byte) (end int, ok bool) {
	for ; sc.pos < len(b); sc.pos++ {
		c := b[sc.pos]
		switch {
		case sc.depth == 0:
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				continue
			}
			if c != '{' {
				return 0, false
			}
			sc.depth = 1
		case sc.inString:
			switch {
			case sc.escaped:
				sc.escaped = false
			case c == '\\':
				sc.escaped = true
			case c == '"':
				sc.inString = false
			}
		case c == '"':
			sc.inString = true
		case c == '{' || c == '[':
			sc.depth++
		case c == '}' || c == ']':
			if sc.depth--; sc.depth == 0 {
				sc.pos++
				return sc.pos, true
			}
		}
	}
	return 0, true
}

// objectCWD reads the members of obj, a whole object as objectScan found
// it, and returns the string of its last "cwd".
func objectCWD(obj []byte) (string, error) {
	cwd := ""
	it := jsonscan.NewObjectIter(obj)
	for it.Next() {
		key, ok := jsonstr.Unquote(it.QuotedKey)
		if !ok {
			return "", errHookSyntax
		}
		if !strings.EqualFold(key, "cwd") {
			continue
		}
		switch v := it.Val; {
		case string(v) == "null":
		case v[0] == '"':
			if cwd, ok = jsonstr.Unquote(v); !ok {
				return "", errHookSyntax
			}
		default:
			return "", fmt.Errorf("hook input's cwd is not a string (%.40s)", v)
		}
	}
	if it.Err() != nil {
		return "", errHookSyntax
	}
	return cwd, nil
}
