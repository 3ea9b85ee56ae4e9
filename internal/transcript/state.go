package transcript

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/jsonscan"
)

// Stateful is implemented by parsers whose reading of a line depends on
// lines before it: a Claude Code delivery of a queued prompt is dropped only
// because the enqueue was seen, a Codex event takes its session id and cwd
// from the session_meta at the top of the file, a tool result its tool and
// command from its call. A parser created mid-file (after a daemon restart,
// or after a batch failed to commit) would read such lines differently from
// one that read the whole file, so the ingest pipeline saves MarshalState
// with every offset it commits, in the same transaction, and hands it to
// UnmarshalState of the parser it creates to resume from that offset.
//
// The state holds only what decides the meaning of later lines, bounded as
// the parser's own memory is; counters (Stats) are not part of it. The
// encoding is versioned JSON: UnmarshalState rejects a state of another
// version or format, and the caller then starts from a fresh parser, which
// is what every parser did before states were saved.
type Stateful interface {
	// MarshalState encodes what the parser remembers of the lines so far.
	MarshalState() ([]byte, error)
	// UnmarshalState replaces the parser's memory with a state from
	// MarshalState of a parser of the same format. On error the parser is
	// left as it was.
	UnmarshalState(data []byte) error
}

var (
	_ Stateful = (*ClaudeCode)(nil)
	_ Stateful = (*Codex)(nil)
	_ Stateful = (*Gemini)(nil)
)

// stateVersion is the version of every adapter's state encoding. Bump it
// when a field changes meaning: an older state is then dropped (a fresh
// parser) rather than misread.
const stateVersion = 1

// stateHeader starts every adapter's state.
type stateHeader struct {
	V      int    `json:"v"`
	Format Format `json:"format"`
	// Scrubbed says the state was saved through Options.Redact. Builds
	// before that saved commands and paths as they were; the ingest
	// pipeline scrubs such states once (StateScrubbed tells them apart).
	Scrubbed bool `json:"scrubbed,omitempty"`
}

// newStateHeader heads a state of format saved with redact (nil: none).
func newStateHeader(format Format, redact func(string) string) stateHeader {
	return stateHeader{V: stateVersion, Format: format, Scrubbed: redact != nil}
}

// StateScrubbed reports whether a saved state says it was saved through a
// redactor, reading only its header (the first fields of the encoding).
func StateScrubbed(state []byte) bool {
	it := jsonscan.NewObjectIter(state)
	for it.Next() {
		switch string(it.Key) {
		case "v", "format":
		case "scrubbed":
			return jsonTrue(it.Val)
		default:
			return false // past the header
		}
	}
	return false
}

func (h stateHeader) check(format Format) error {
	if h.V != stateVersion || h.Format != format {
		return fmt.Errorf("parser state of version %d for %q; want version %d for %q", h.V, h.Format, stateVersion, format)
	}
	return nil
}

// callState is a callInfo in a saved state.
type callState struct {
	Tool    string   `json:"tool,omitempty"`
	Command string   `json:"command,omitempty"`
	Paths   []string `json:"paths,omitempty"`
}

func saveCalls(calls map[string]callInfo, redact func(string) string) map[string]callState {
	if len(calls) == 0 {
		return nil
	}
	out := make(map[string]callState, len(calls))
	for id, c := range calls {
		var paths []string
		for _, p := range c.paths {
			paths = append(paths, scrub(redact, p))
		}
		out[id] = callState{Tool: c.tool, Command: scrub(redact, c.command), Paths: paths}
	}
	return out
}

// scrub is redact(s), or s where the parser has no redactor: what a state
// keeps of a command, a path or a working directory is written to disk.
func scrub(redact func(string) string, s string) string {
	if redact == nil || s == "" {
		return s
	}
	return redact(s)
}

// loadCalls rebuilds the pending calls, within maxCalls like rememberCall.
func loadCalls(saved map[string]callState) map[string]callInfo {
	calls := make(map[string]callInfo, min(len(saved), maxCalls))
	for _, id := range slices.Sorted(maps.Keys(saved)) {
		if len(calls) == maxCalls {
			break
		}
		c := saved[id]
		calls[id] = callInfo{tool: c.Tool, command: c.Command, paths: c.Paths}
	}
	return calls
}

// textKey is what a parser remembers of a text it must recognise later:
// a hash of it without surrounding space.
func textKey(text string) string {
	return hashID("", strings.TrimSpace(text))
}

// ccState is the saved memory of a ClaudeCode parser.
type ccState struct {
	stateHeader
	Calls       map[string]callState `json:"calls,omitempty"`
	ReplyID     string               `json:"reply_id,omitempty"`
	ReplyBlocks []string             `json:"reply_blocks,omitempty"`
	Queued      []string             `json:"queued,omitempty"`
	// Answered is oldest first, as answeredOrder.
	Answered []string `json:"answered,omitempty"`
}

// MarshalState encodes the pending calls, the reply being written, the
// queued prompts not yet delivered and the answered tool_use ids.
func (p *ClaudeCode) MarshalState() ([]byte, error) {
	return json.Marshal(&ccState{
		stateHeader: newStateHeader(FormatClaudeCode, p.opts.Redact),
		Calls:       saveCalls(p.calls, p.opts.Redact),
		ReplyID:     p.replyID,
		ReplyBlocks: p.replyBlocks,
		Queued:      p.queued,
		Answered:    p.answeredOrder,
	})
}

// UnmarshalState restores a state from MarshalState, keeping the bounds of
// the parser's memory whatever the state holds.
func (p *ClaudeCode) UnmarshalState(data []byte) error {
	var s ccState
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("decode claude-code parser state: %w", err)
	}
	if err := s.check(FormatClaudeCode); err != nil {
		return err
	}
	p.calls = loadCalls(s.Calls)
	p.replyID, p.replyBlocks = s.ReplyID, s.ReplyBlocks
	p.queued = s.Queued[max(len(s.Queued)-maxQueued, 0):]
	p.answeredOrder = s.Answered[max(len(s.Answered)-maxCalls, 0):]
	p.answered = make(map[string]struct{}, len(p.answeredOrder))
	for _, id := range p.answeredOrder {
		p.answered[id] = struct{}{}
	}
	return nil
}

// cxState is the saved memory of a Codex parser.
type cxState struct {
	stateHeader
	Session  string               `json:"session,omitempty"`
	Parent   string               `json:"parent,omitempty"`
	CWD      string               `json:"cwd,omitempty"`
	Branch   string               `json:"branch,omitempty"`
	MetaSeen []string             `json:"meta_seen,omitempty"`
	Calls    map[string]callState `json:"calls,omitempty"`
	Records  int                  `json:"records,omitempty"`
	Pending  []cxPending          `json:"pending,omitempty"`
}

type cxPending struct {
	ID     string `json:"id"`
	Kind   Kind   `json:"kind"`
	Text   string `json:"text"` // textKey
	Stream string `json:"stream"`
	Record int    `json:"record"`
}

// maxMetaSeen bounds the session ids a restored Codex parser remembers: a
// rollout names its own session and perhaps the one it was forked from.
const maxMetaSeen = 64

// MarshalState encodes the session identity, the session_meta records
// seen, the pending calls and the messages still waiting for their twin.
// Messages past the pairing window are left out: they can no longer match.
func (p *Codex) MarshalState() ([]byte, error) {
	s := cxState{
		stateHeader: newStateHeader(FormatCodex, p.opts.Redact),
		Session:     p.session, Parent: p.parent, CWD: scrub(p.opts.Redact, p.cwd), Branch: p.branch,
		MetaSeen: slices.Sorted(maps.Keys(p.metaSeen)),
		Calls:    saveCalls(p.calls, p.opts.Redact),
		Records:  p.records,
	}
	for _, m := range p.pending {
		if p.records-m.record <= pairWindow {
			s.Pending = append(s.Pending, cxPending{ID: m.id, Kind: m.kind, Text: m.text, Stream: m.stream, Record: m.record})
		}
	}
	return json.Marshal(&s)
}

// UnmarshalState restores a state from MarshalState.
func (p *Codex) UnmarshalState(data []byte) error {
	var s cxState
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("decode codex parser state: %w", err)
	}
	if err := s.check(FormatCodex); err != nil {
		return err
	}
	p.session, p.parent, p.cwd, p.branch = s.Session, s.Parent, s.CWD, s.Branch
	p.metaSeen = make(map[string]bool, len(s.MetaSeen))
	for _, id := range s.MetaSeen[:min(len(s.MetaSeen), maxMetaSeen)] {
		p.metaSeen[id] = true
	}
	p.calls = loadCalls(s.Calls)
	p.records = s.Records
	p.pending = p.pending[:0]
	for _, m := range s.Pending[max(len(s.Pending)-pairWindow-1, 0):] {
		p.pending = append(p.pending, pendingMessage{id: m.ID, kind: m.Kind, text: m.Text, stream: m.Stream, record: m.Record})
	}
	return nil
}

// gmState is the saved memory of a Gemini parser.
type gmState struct {
	stateHeader
	Session    string `json:"session,omitempty"`
	Parent     string `json:"parent,omitempty"`
	CWD        string `json:"cwd,omitempty"`
	HeaderSeen bool   `json:"header_seen,omitempty"`
	LookedUp   bool   `json:"looked_up,omitempty"`
	Rewinds    int    `json:"rewinds,omitempty"`
	// Emitted are the textKeys of the ids emitted, oldest first.
	Emitted []string `json:"emitted,omitempty"`
}

// MarshalState encodes the session identity and cwd, and which events were
// emitted, so that a message appended again or a whole file read again
// after a restart yields only what is new.
func (p *Gemini) MarshalState() ([]byte, error) {
	return json.Marshal(&gmState{
		stateHeader: newStateHeader(FormatGemini, p.opts.Redact),
		Session:     p.session, Parent: p.parent, CWD: scrub(p.opts.Redact, p.cwd),
		HeaderSeen: p.headerSeen, LookedUp: p.lookedUp, Rewinds: p.rewinds,
		Emitted: p.order,
	})
}

// UnmarshalState restores a state from MarshalState.
func (p *Gemini) UnmarshalState(data []byte) error {
	var s gmState
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("decode gemini parser state: %w", err)
	}
	if err := s.check(FormatGemini); err != nil {
		return err
	}
	p.session, p.parent, p.cwd = s.Session, s.Parent, s.CWD
	p.headerSeen, p.lookedUp, p.rewinds = s.HeaderSeen, s.LookedUp, s.Rewinds
	p.order = s.Emitted[max(len(s.Emitted)-maxGeminiLegacyEmitted, 0):]
	p.emitted = make(map[string]struct{}, len(p.order))
	for _, k := range p.order {
		p.emitted[k] = struct{}{}
	}
	return nil
}
