package transcript

import (
	"fmt"
	"maps"
	"time"
)

// Kind classifies an Event. The set is deliberately small: everything the
// curator reasons about fits one of these, and the finer distinctions live in
// Event.Subtype.
type Kind string

// The event kinds.
const (
	KindUserPrompt        Kind = "user_prompt"
	KindAssistantMessage  Kind = "assistant_message"
	KindReasoning         Kind = "reasoning"
	KindToolCall          Kind = "tool_call"
	KindToolResult        Kind = "tool_result"
	KindError             Kind = "error"
	KindPlanUpdate        Kind = "plan_update"
	KindCompactionSummary Kind = "compaction_summary"
	KindSystem            Kind = "system"
)

// Kinds lists every Kind, in the order a turn usually produces them.
var Kinds = []Kind{
	KindUserPrompt, KindAssistantMessage, KindReasoning, KindToolCall, KindToolResult,
	KindError, KindPlanUpdate, KindCompactionSummary, KindSystem,
}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// Subtypes used by more than one adapter. Adapters may set others (a Claude
// Code system record's own subtype, for instance); these are the ones the
// curator branches on.
const (
	// SubtypeInterrupted marks a turn or tool call the user interrupted.
	SubtypeInterrupted = "interrupted"
	// SubtypeRejected marks a tool call the user refused to allow.
	SubtypeRejected = "rejected"
	// SubtypeAPIError marks a failed model request.
	SubtypeAPIError = "api_error"
	// SubtypeHookError marks a hook that failed or blocked the agent.
	SubtypeHookError = "hook_error"
	// SubtypeSessionStart marks the event that carries a session's identity.
	SubtypeSessionStart = "session_start"
	// SubtypeTodos marks a plan_update holding the agent's whole todo list
	// (Claude Code TodoWrite, Codex update_plan).
	SubtypeTodos = "todos"
	// SubtypePlan marks a plan_update holding a written plan the agent asked
	// the user to approve (Claude Code ExitPlanMode). Whether it was approved
	// is the OK of the tool_result with the same ToolCallID.
	SubtypePlan = "plan"
	// SubtypeQueued marks a user_prompt typed while the agent was busy
	// (Claude Code queue-operation "enqueue").
	SubtypeQueued = "queued"
	// SubtypeSubagentPrompt marks the prompt a parent agent gave a subagent:
	// user-role text that no human typed.
	SubtypeSubagentPrompt = "subagent_prompt"
	// SubtypeApprovedPlan marks the user_prompt Claude Code writes when the
	// user approves a plan and starts on it with a cleared context
	// ("Implement the following plan: …", with the record's planContent): the
	// text is the agent's plan, not the user's words, so it is flagged as
	// boilerplate; the approval is what it says of the user.
	SubtypeApprovedPlan = "approved_plan"
)

// The agent names adapters put in Event.Agent.
const (
	AgentClaudeCode = "claude-code"
	AgentCodex      = "codex"
	AgentGemini     = "gemini"
)

// Todo is one item of an agent's todo list or plan.
type Todo struct {
	Content    string `json:"content"`
	Status     string `json:"status"` // pending | in_progress | completed
	ActiveForm string `json:"active_form,omitempty"`
}

// Source says where an event came from, so a human can find it again.
type Source struct {
	// File is the tailer's fingerprint of the transcript file.
	File string `json:"file,omitempty"`
	// Path is the file's path when it was read (files get renamed).
	Path string `json:"path,omitempty"`
	// Offset is the byte offset of the line holding the record.
	Offset int64 `json:"offset"`
	// Index is the record's index within its line; non-zero only for lines
	// holding several glued records.
	Index int `json:"index,omitempty"`
	// Record is the record's own id (Claude Code uuid, Codex call_id) when it
	// has one.
	Record string `json:"record,omitempty"`
}

// Event is one thing that happened in an agent session, in the same shape
// whatever agent wrote the transcript.
type Event struct {
	// ID is stable: it is derived from ids inside the record, or else from
	// the file fingerprint, offset and record index, so parsing the same
	// bytes again yields the same ID and a store can drop repeats.
	ID      string    `json:"id"`
	Kind    Kind      `json:"kind"`
	Subtype string    `json:"subtype,omitempty"`
	Time    time.Time `json:"time,omitzero"`

	SessionID string `json:"session_id,omitempty"`
	// ParentSessionID is set on subagent and sidechain events: their
	// SessionID names the subagent, this names the session that spawned it.
	ParentSessionID string `json:"parent_session_id,omitempty"`
	// AgentID is the subagent id (Claude Code agentId) on subagent events,
	// and on the tool_result of the call that ran that subagent.
	AgentID string `json:"agent_id,omitempty"`
	// Agent is the program that wrote the transcript: "claude-code",
	// "codex", or the name a jsonl transcript declares.
	Agent     string `json:"agent"`
	CWD       string `json:"cwd,omitempty"`
	GitBranch string `json:"git_branch,omitempty"`
	// MessageID groups the pieces of one model reply that an agent wrote as
	// separate records (Claude Code message.id).
	MessageID string `json:"message_id,omitempty"`

	// Tool and ToolCallID are set on tool calls, their results and plan
	// updates made through a tool; a result names its tool when the call was
	// seen earlier in the same file.
	Tool       string   `json:"tool,omitempty"`
	ToolCallID string   `json:"tool_call_id,omitempty"`
	FilePaths  []string `json:"file_paths,omitempty"`
	Command    string   `json:"command,omitempty"`
	// Query is a search pattern, glob or web query given to a tool.
	Query string `json:"query,omitempty"`
	URL   string `json:"url,omitempty"`

	// OK is set on tool results: false when the tool failed. Nil means the
	// transcript does not say.
	OK       *bool `json:"ok,omitempty"`
	ExitCode *int  `json:"exit_code,omitempty"`

	// Text is bounded: a long text keeps its head and tail around a marker
	// saying how many bytes were elided, and TextBytes holds the original
	// size. Images never appear in it, only placeholders.
	Text      string `json:"text,omitempty"`
	TextBytes int    `json:"text_bytes,omitempty"`

	Todos []Todo `json:"todos,omitempty"`

	// Boilerplate marks text that the agent's harness, not a human, put in
	// the user's role: slash-command wrappers, hook feedback, reminders,
	// caveats, "Warmup", subagent prompts. Subtype says which.
	Boilerplate bool `json:"boilerplate,omitempty"`

	Source Source `json:"source"`
}

// Failed reports whether the event records a failure: an error event, or a
// tool result that did not succeed.
func (e *Event) Failed() bool {
	return e.Kind == KindError || (e.OK != nil && !*e.OK)
}

// Position locates a line handed to a Parser.
type Position struct {
	// File is the tailer's fingerprint of the file (stable across renames).
	File string
	// Path is the file's current path; adapters read session ids from it
	// when the records lack them.
	Path string
	// Offset is the byte offset of the line's first byte.
	Offset int64
}

// Options tunes a Parser. The zero value is usable.
type Options struct {
	// MaxText bounds the Text of tool calls, tool results, reasoning and
	// system events, in bytes (default 4 KiB).
	MaxText int
	// MaxMessageText bounds the Text of user prompts, assistant messages,
	// compaction summaries and plans (default 16 KiB).
	MaxMessageText int
	// Redact, when set, is applied to the transcript's text a parser keeps
	// in its saved state (a pending call's command and paths): the state
	// is written to disk, where no secret may go.
	Redact func(string) string
	// OnSkip, when set, is called for every record (or part of one) that
	// did not become an event, with the same reason counted in Stats.
	OnSkip func(pos Position, reason string)
}

// Default text bounds.
const (
	DefaultMaxText        = 4 << 10
	DefaultMaxMessageText = 16 << 10
	minText               = 256
)

func (o Options) withDefaults() Options {
	if o.MaxText <= 0 {
		o.MaxText = DefaultMaxText
	}
	if o.MaxMessageText <= 0 {
		o.MaxMessageText = DefaultMaxMessageText
	}
	o.MaxText = max(o.MaxText, minText)
	o.MaxMessageText = max(o.MaxMessageText, minText)
	return o
}

// Stats counts what a Parser has seen.
type Stats struct {
	// Lines is the number of lines handed to ParseLine.
	Lines int `json:"lines"`
	// Records is the number of JSON values found in them (a line can hold
	// several glued records).
	Records int `json:"records"`
	// Events counts the events returned, by kind.
	Events map[Kind]int `json:"events"`
	// Skipped counts records, and parts of records, that did not become
	// events, by reason: "invalid_json", "trailing_garbage", "not_object",
	// "empty_line", "duplicate", "boilerplate", "noise:<what>",
	// "unknown_type:<type>", "field_type_mismatch" …
	Skipped map[string]int `json:"skipped"`
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Lines += o.Lines
	s.Records += o.Records
	if s.Events == nil {
		s.Events = map[Kind]int{}
	}
	if s.Skipped == nil {
		s.Skipped = map[string]int{}
	}
	for k, v := range o.Events {
		s.Events[k] += v
	}
	for k, v := range o.Skipped {
		s.Skipped[k] += v
	}
}

// TotalEvents is the number of events across all kinds.
func (s *Stats) TotalEvents() int {
	n := 0
	for _, v := range s.Events {
		n += v
	}
	return n
}

func (s Stats) clone() Stats {
	s.Events = maps.Clone(s.Events)
	s.Skipped = maps.Clone(s.Skipped)
	if s.Events == nil {
		s.Events = map[Kind]int{}
	}
	if s.Skipped == nil {
		s.Skipped = map[string]int{}
	}
	return s
}

// Parser turns the lines of one transcript file into events. A Parser holds
// a little per-file state (a Codex session's id and cwd, tool names by call
// id) that only enriches events: their IDs never depend on it, so parsing may
// resume mid-file with a fresh Parser. A Parser is not safe for concurrent
// use; use one per file.
type Parser interface {
	// Format names the transcript format the parser reads.
	Format() Format
	// ParseLine returns the events in one complete line (without its
	// newline) that starts at pos. It never fails: malformed, unknown and
	// uninteresting records are counted in Stats and reported to
	// Options.OnSkip.
	ParseLine(line []byte, pos Position) []Event
	// Stats returns a copy of the counts so far.
	Stats() Stats
}

// WholeFile is implemented by parsers of formats some of whose files are
// one JSON document rewritten whole on every change (Gemini CLI up to 0.38)
// rather than appended line by line. The ingest pipeline hands such a file
// to ParseLine whole, at offset 0, each time it changed, and saves the
// parser's state (Stateful) with it, so the parser emits only what is new
// since the last read, across restarts too.
type WholeFile interface {
	// WholeFile reports whether the file at path is such a document.
	WholeFile(path string) bool
}

// Format names a transcript format.
type Format string

// The supported formats.
const (
	FormatClaudeCode Format = "claude-code"
	FormatCodex      Format = "codex"
	FormatJSONL      Format = "jsonl"
	FormatGemini     Format = "gemini"
)

// Formats lists the supported formats.
var Formats = []Format{FormatClaudeCode, FormatCodex, FormatGemini, FormatJSONL}

// New returns a Parser for format.
func New(format Format, opts Options) (Parser, error) {
	switch format {
	case FormatClaudeCode:
		return NewClaudeCode(opts), nil
	case FormatCodex:
		return NewCodex(opts), nil
	case FormatJSONL:
		return NewJSONL(opts), nil
	case FormatGemini:
		return NewGemini(opts), nil
	}
	return nil, fmt.Errorf("unknown transcript format %q (want one of %v)", format, Formats)
}
