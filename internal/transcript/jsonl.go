package transcript

import (
	"encoding/json"
	"strings"
)

// JSONL reads Medallion's own transcript format: one event per line, in the
// same field names as Event's JSON. It is for agent frameworks that write
// their own transcripts; JSONL.md documents it with a complete example.
//
// Only "kind" is required. A missing session_id is taken from the file name,
// a missing agent is "jsonl". IDs are "jl:<session>:<id>" when the line has
// an id, or derived from the line's position otherwise. Unknown fields are
// ignored, so writers may add their own.
type JSONL struct {
	core
	paths pathCache
}

var _ Parser = (*JSONL)(nil)

// NewJSONL returns a parser for one JSONL transcript file.
func NewJSONL(opts Options) *JSONL { return &JSONL{core: newCore(opts)} }

// Format returns FormatJSONL.
func (p *JSONL) Format() Format { return FormatJSONL }

// jsonlRecord is one line of the format: Event's fields minus the ones we
// compute (text_bytes, source) and with time as text, so that a bad
// timestamp loses only itself.
type jsonlRecord struct {
	ID              string   `json:"id"`
	Kind            Kind     `json:"kind"`
	Subtype         string   `json:"subtype"`
	Time            string   `json:"time"`
	SessionID       string   `json:"session_id"`
	ParentSessionID string   `json:"parent_session_id"`
	AgentID         string   `json:"agent_id"`
	Agent           string   `json:"agent"`
	CWD             string   `json:"cwd"`
	GitBranch       string   `json:"git_branch"`
	MessageID       string   `json:"message_id"`
	Tool            string   `json:"tool"`
	ToolCallID      string   `json:"tool_call_id"`
	FilePaths       []string `json:"file_paths"`
	Command         string   `json:"command"`
	Query           string   `json:"query"`
	URL             string   `json:"url"`
	OK              *bool    `json:"ok"`
	ExitCode        *int     `json:"exit_code"`
	Text            string   `json:"text"`
	Todos           []Todo   `json:"todos"`
	Boilerplate     bool     `json:"boilerplate"`
}

// ParseLine returns the event of one line of a JSONL transcript.
func (p *JSONL) ParseLine(line []byte, pos Position) []Event {
	var out []Event
	p.eachRecord(line, pos, func(raw []byte, index int) {
		var r jsonlRecord
		if !p.decode(raw, &r, pos) {
			return
		}
		switch {
		case r.Kind == "":
			p.skip(pos, "missing_kind")
			return
		case !r.Kind.Valid():
			p.skip(pos, "unknown_kind:"+string(r.Kind))
			return
		}
		e := Event{
			Kind:            r.Kind,
			Subtype:         r.Subtype,
			Time:            parseTime(r.Time),
			SessionID:       firstNonEmpty(r.SessionID, p.paths.get(pos.Path).SessionID),
			ParentSessionID: r.ParentSessionID,
			AgentID:         r.AgentID,
			Agent:           firstNonEmpty(r.Agent, string(FormatJSONL)),
			CWD:             r.CWD,
			GitBranch:       r.GitBranch,
			MessageID:       r.MessageID,
			Tool:            r.Tool,
			ToolCallID:      r.ToolCallID,
			FilePaths:       r.FilePaths,
			Command:         r.Command,
			Query:           r.Query,
			URL:             r.URL,
			OK:              r.OK,
			ExitCode:        r.ExitCode,
			Todos:           r.Todos,
			Boilerplate:     r.Boilerplate,
			Source:          Source{File: pos.File, Path: pos.Path, Offset: pos.Offset, Index: index, Record: r.ID},
		}
		if r.Time != "" && e.Time.IsZero() {
			p.skip(pos, "invalid_time")
		}
		if r.ID != "" {
			e.ID = "jl:" + e.SessionID + ":" + r.ID
		} else {
			e.ID = positionID("jl:", pos, index, 0)
		}
		if e.Kind == KindToolResult && e.OK == nil && e.ExitCode != nil {
			e.OK = boolPtr(*e.ExitCode == 0)
		}
		p.bound(&e, strings.ToValidUTF8(r.Text, "\uFFFD"))
		out = append(out, e)
	})
	return p.counted(out)
}

// Detect guesses the format of a transcript from its first line. It returns
// "" when the line matches none of them.
func Detect(firstLine []byte) Format {
	var probe struct {
		Type      string          `json:"type"`
		Payload   json.RawMessage `json:"payload"`
		Kind      Kind            `json:"kind"`
		SessionID string          `json:"sessionId"`
		UUID      string          `json:"uuid"`
		LeafUUID  string          `json:"leafUuid"`
		MessageID string          `json:"messageId"`
		Project   string          `json:"projectHash"`
	}
	dec := json.NewDecoder(strings.NewReader(string(firstLine)))
	if dec.Decode(&probe) != nil {
		return ""
	}
	switch {
	case probe.SessionID != "" && probe.Project != "":
		return FormatGemini
	case len(probe.Payload) > 0 && probe.Type != "":
		return FormatCodex
	case probe.Kind.Valid():
		return FormatJSONL
	case probe.SessionID != "" || probe.UUID != "" || probe.LeafUUID != "" ||
		probe.Type == "file-history-snapshot" && probe.MessageID != "":
		return FormatClaudeCode
	}
	return ""
}
