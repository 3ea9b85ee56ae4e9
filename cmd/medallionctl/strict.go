package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/medallion"
)

// decodeError lists every field of a JSON document that does not fit the
// medallion format, each by its JSON path, like the daemon's validation
// errors.
type decodeError struct {
	source   string
	problems []medallion.Problem
}

func (e *decodeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not fit the %s format:", e.source, medallion.SchemaVersion)
	for _, p := range e.problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// decodeMedallion parses data (read from source, for messages) as one
// medallion. Unlike encoding/json it refuses what would otherwise be
// silently dropped or coerced, so a typo like "decisons" fails here, before
// the daemon stores a medallion without its decisions: unknown fields (with
// a suggestion), fields matched only case-insensitively, wrong JSON types,
// and anything after the document. Every problem is reported at once.
//
// It checks the shape only; the daemon validates the content.
func decodeMedallion(source string, data []byte) (*medallion.Medallion, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s is empty: want a JSON medallion (see medallionctl schema)", source)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, syntaxError(source, data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := position(data, dec.InputOffset())
		return nil, fmt.Errorf("%s: invalid JSON at line %d, column %d: unexpected data after the medallion", source, line, col)
	}

	var problems []medallion.Problem
	checkShape(doc, reflect.TypeFor[medallion.Medallion](), "", &problems)
	if len(problems) > 0 {
		return nil, &decodeError{source: source, problems: problems}
	}
	var m medallion.Medallion
	if err := json.Unmarshal(data, &m); err != nil {
		// checkShape accepts only what Unmarshal can decode; reaching this
		// means the two disagree, so say so plainly.
		return nil, fmt.Errorf("%s: decode medallion: %w", source, err)
	}
	return &m, nil
}

// syntaxError turns a JSON decoding error into one with a line and column.
func syntaxError(source string, data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Errorf("%s: invalid JSON at line %d, column %d: %v", source, line, col, se)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: invalid JSON: unexpected end of input (is the file complete?)", source)
	}
	return fmt.Errorf("%s: invalid JSON: %w", source, err)
}

// position converts a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}

// checkShape walks the generic JSON value v alongside the Go type t it will
// be decoded into and appends a problem for each mismatch. null is accepted
// anywhere, as encoding/json leaves the zero value.
func checkShape(v any, t reflect.Type, path string, problems *[]medallion.Problem) {
	if v == nil {
		return
	}
	add := func(format string, args ...any) {
		field := path
		if field == "" {
			field = "(document)"
		}
		*problems = append(*problems, medallion.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			add("must be an object, not %s", jsonKind(v))
			return
		}
		fields := jsonFields(t)
		names := make([]string, 0, len(fields))
		for name := range fields {
			names = append(names, name)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		// Report in a stable order: the order of the Go struct for known
		// fields does not matter for errors, alphabetical is predictable.
		slices.Sort(keys)
		for _, k := range keys {
			sub := joinPath(path, k)
			f, ok := fields[k]
			if !ok {
				msg := "unknown field"
				if s := suggest(k, names); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				}
				*problems = append(*problems, medallion.Problem{Field: sub, Message: msg})
				continue
			}
			checkShape(obj[k], f, sub, problems)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			add("must be an array, not %s", jsonKind(v))
			return
		}
		for i, e := range arr {
			checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), problems)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			add("must be a string, not %s", jsonKind(v))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			add("must be an integer, not %s", jsonKind(v))
			return
		}
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			add("must be an integer (got %s)", n)
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			add("must be a number, not %s", jsonKind(v))
			return
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			add("must be a number in range (got %s)", n)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			add("must be true or false, not %s", jsonKind(v))
		}
	}
}

// jsonFields maps the JSON names of t's exported fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// suggest returns the known name closest to an unknown key when it is close
// enough to be a typo: same letters in another case, or at most two edits.
func suggest(key string, names []string) string {
	best, bestDist := "", 3
	slices.Sort(names)
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
		if d := editDistance(strings.ToLower(key), n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes (field
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
