package transcript

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/medallionhq/medallion/internal/jsonscan"
)

// core holds what every adapter shares: options, counters and the splitting
// of a line into JSON records.
type core struct {
	opts  Options
	stats Stats
}

func newCore(opts Options) core {
	return core{
		opts:  opts.withDefaults(),
		stats: Stats{Events: map[Kind]int{}, Skipped: map[string]int{}},
	}
}

// Stats returns a copy of the counts so far.
func (c *core) Stats() Stats { return c.stats.clone() }

func (c *core) skip(pos Position, reason string) {
	c.stats.Skipped[reason]++
	if c.opts.OnSkip != nil {
		c.opts.OnSkip(pos, reason)
	}
}

func (c *core) counted(events []Event) []Event {
	for i := range events {
		c.stats.Events[events[i].Kind]++
	}
	return events
}

// bound applies the text limit that fits e's kind.
func (c *core) bound(e *Event, text string) {
	e.Text, e.TextBytes = boundText(text, c.maxText(e))
}

// boundLazy is bound for a text not decoded yet: only what is kept is.
func (c *core) boundLazy(e *Event, text *lazyText) {
	e.Text, e.TextBytes = text.bound(c.maxText(e))
}

// maxText is the text limit that fits e's kind.
func (c *core) maxText(e *Event) int {
	switch e.Kind {
	case KindUserPrompt, KindAssistantMessage, KindCompactionSummary, KindPlanUpdate:
		if !e.Boilerplate || e.Subtype == SubtypeApprovedPlan {
			// An approved plan is the agent's words, flagged as not the
			// user's, but a plan all the same.
			return c.opts.MaxMessageText
		}
	}
	return c.opts.MaxText
}

// eachRecord splits line into JSON records and hands each object to fn
// with its index in the line. Most lines hold one object; a few real files
// have two glued together ("}{"). A line that is not JSON, or garbage after
// the last record, is counted, never fatal.
func (c *core) eachRecord(line []byte, pos Position, fn func(raw []byte, index int)) {
	c.eachRecordRead(line, pos, nil, func(raw []byte, index int, _ bool) { fn(raw, index) })
}

// eachRecordRead is eachRecord for an adapter that decodes a record as it
// finds it, rather than after a skip to its end: read decodes the object
// at the start of rest and returns its length, or 0 when it did not read
// it whole (it broke off, or was left to fn), and the record is then found
// as eachRecord does. The length must be the one jsonscan.SkipValue finds,
// as an iterator's End is. fn is told whether read decoded the record.
func (c *core) eachRecordRead(line []byte, pos Position, read func(rest []byte) int, fn func(raw []byte, index int, read bool)) {
	c.stats.Lines++
	i := jsonscan.SkipSpace(line, 0)
	if i == len(line) {
		c.skip(pos, "empty_line")
		return
	}
	for index := 0; i < len(line); index++ {
		n := 0
		if read != nil && line[i] == '{' {
			n = read(line[i:])
		}
		end, err := i+n, error(nil)
		if n == 0 {
			end, err = jsonscan.SkipValue(line, i)
		}
		if err != nil {
			if index == 0 {
				c.skip(pos, "invalid_json")
			} else {
				c.skip(pos, "trailing_garbage")
			}
			return
		}
		c.stats.Records++
		if line[i] == '{' {
			fn(line[i:end], index, n > 0)
		} else {
			c.skip(pos, "not_object")
		}
		i = jsonscan.SkipSpace(line, end)
	}
}

// decode unmarshals raw into v with encoding/json. A field of an unexpected
// type only loses that field, so it is counted and the record is still used;
// JSON that the lenient splitter let through but encoding/json rejects
// (a bad escape or number) loses the record.
func (c *core) decode(raw []byte, v any, pos Position) bool {
	err := json.Unmarshal(raw, v)
	if err == nil {
		return true
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		c.skip(pos, "invalid_json")
		return false
	}
	c.skip(pos, "field_type_mismatch")
	return true
}

// topLevelType reports whether raw, a single JSON object, has the key/value
// pair `"type":"<typ>"` at its top level, without decoding it. It lets the
// adapters drop the most frequent noise records (Claude Code progress, Codex
// token counts) cheaply. The pair cannot sit inside a string (its quotes
// would be escaped there), and no '{' or '[' before it means it is not in a
// nested value; glued lines ("}{") are left to the full decoder.
//
// The pair is looked for only before the first nested value: a line of a
// tool result of half a megabyte was searched to its end for a pair that
// could only have been in its first few hundred bytes (issue 12).
func topLevelType(raw []byte, pattern []byte) bool {
	return typeBeforeNesting(raw, pattern) &&
		!bytes.Contains(raw, []byte("}{")) && !bytes.Contains(raw, []byte("} {"))
}

// typeBeforeNesting reports whether pattern is in raw after its first byte
// and before its first nested value: topLevelType without the glue check.
// Given a line from a record on, it is true whenever it is true of the
// record alone (the line's first nested value is the record's, if the
// record has one), so a reader can rule a record out before it knows
// where the record ends.
func typeBeforeNesting(raw []byte, pattern []byte) bool {
	end := len(raw)
	for j := 1; j < len(raw); j++ {
		if raw[j] == '{' || raw[j] == '[' {
			end = j
			break
		}
	}
	return bytes.Index(raw[:end], pattern) > 0
}
