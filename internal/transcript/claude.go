package transcript

import (
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/jsonscan"
)

// ClaudeCode reads Claude Code session files
// (~/.claude/projects/<project>/<session>.jsonl and its subagent files).
//
// Record types: user (prompts, tool results, harness text, compaction
// summaries), assistant (one content block per record — thinking, text,
// tool_use — sharing message.id), system (compact_boundary, hook summaries,
// local commands, API errors) and pr-link become events. A queue-operation
// "enqueue" with content is a prompt the user typed while the agent was busy:
// it becomes a user_prompt with Subtype "queued" (when Claude Code later
// delivers it as a normal user record, that record is dropped as a duplicate;
// when the queue entry is removed instead, the queued event is the only trace
// of the user's words). progress, file-history-snapshot, the other queue
// operations, summary (titles that mostly name other sessions), last-prompt,
// attachment and the like are counted as "noise:<type>"; anything else as
// "unknown_type:<type>".
//
// IDs: a tool call is "cc:call:<tool_use id>" and its result
// "cc:result:<tool_use id>"; an assistant text or thinking block is
// "cc:msg:<message.id>:<hash of the block>", so a block written twice is one
// event; other records use "cc:rec:<uuid>".
//
// An id names one record of the conversation, not one line of the file: a
// line that repeats a record already seen is that record again, not a new
// one. Older Claude Code versions copied the earlier history into a resumed
// session's file under the new sessionId (same uuid, same tool_use id), so
// a second result for a tool_use id already answered is skipped and counted
// as "duplicate:result". This memory, the queued prompts and the pending
// calls survive a restart through MarshalState (state.go); were they lost,
// a queued prompt's delivery would become a second prompt (the store's
// per-id marker would still drop a repeated result: its id is the same).
type ClaudeCode struct {
	core
	paths pathCache
	// calls remembers each tool_use until its result arrives, so the result
	// can name its tool, command and files.
	calls map[string]callInfo
	// The ids of the blocks of the reply being written, to drop a piece
	// written twice. The store would drop it by id too; this keeps the
	// counts honest.
	replyID     string
	replyBlocks []string
	// queued holds the text keys (textKey) of queued prompts not yet
	// delivered as a user record, so the delivery is not a second prompt.
	// Keys rather than texts keep the saved state (state.go) small however
	// long a pasted prompt is.
	queued []string
	// answered holds the tool_use ids whose result was emitted, oldest
	// first in answeredOrder, so a copied result is a counted duplicate.
	answered      map[string]struct{}
	answeredOrder []string
}

// maxQueued bounds the queued-prompt memory: a queue holds a handful of
// prompts; the oldest are forgotten first.
const maxQueued = 16

// callInfo is what a tool result borrows from its call.
type callInfo struct {
	tool    string
	command string
	paths   []string
}

// maxCalls bounds the pending-call memory: results normally follow their
// call within a few records, so only a pathological file reaches it.
const maxCalls = 4096

func rememberCall(calls map[string]callInfo, id string, info callInfo) {
	if id == "" {
		return
	}
	if len(calls) >= maxCalls {
		clear(calls)
	}
	calls[id] = info
}

var _ Parser = (*ClaudeCode)(nil)

// NewClaudeCode returns a parser for one Claude Code transcript file.
func NewClaudeCode(opts Options) *ClaudeCode {
	return &ClaudeCode{core: newCore(opts), calls: map[string]callInfo{}, answered: map[string]struct{}{}}
}

// repeated reports whether a result for tool_use id was already emitted,
// and remembers id otherwise. The memory keeps the last maxCalls ids: a
// copied history repeats the results of one earlier session, which fits.
func (p *ClaudeCode) repeated(id string) bool {
	if id == "" {
		return false
	}
	if _, ok := p.answered[id]; ok {
		return true
	}
	if len(p.answeredOrder) >= maxCalls {
		delete(p.answered, p.answeredOrder[0])
		p.answeredOrder = p.answeredOrder[1:]
	}
	p.answered[id] = struct{}{}
	p.answeredOrder = append(p.answeredOrder, id)
	return false
}

// Format returns FormatClaudeCode.
func (p *ClaudeCode) Format() Format { return FormatClaudeCode }

// ccRecord holds the fields of a Claude Code record that we use; the rest
// (usage, thinkingMetadata, snapshots …) is skipped. Records are walked
// with the scanner in scan.go rather than encoding/json: Claude Code files
// are the bulk of what the daemon reads (see BenchmarkClaudeCodeParse).
type ccRecord struct {
	Type              string
	Subtype           string
	UUID              string
	SessionID         string
	AgentID           string
	IsSidechain       bool
	IsMeta            bool
	IsCompactSummary  bool
	IsAPIErrorMessage bool
	ApprovedPlan      bool // a non-empty planContent
	CWD               string
	GitBranch         string
	Timestamp         string
	Message           *ccMessage
	ToolUseResult     ccUseResult

	// system records
	Content               ccContent
	Operation             string // queue-operation records
	Level                 string
	CompactTrigger        string
	CompactPreTokens      int
	HookErrors            []string
	PreventedContinuation bool
	StopReason            string

	// pr-link records
	PRURL string
}

// decode reads the record at the start of b and returns its length; an
// error means it broke off. Its large values (a message's content, the
// tool result sidecar) are walked in place rather than skipped first
// (jsonscan.ObjectIter.NextUnread), so that a long tool output is scanned
// once to find its end before it is decoded.
func (r *ccRecord) decode(b []byte) (int, error) {
	it := jsonscan.NewObjectIter(b)
	for it.NextUnread() {
		switch string(it.Key) {
		case "message":
			if v := it.Rest(); v[0] == '{' {
				r.Message = &ccMessage{}
				it.Advance(r.Message.decode(v))
			}
		case "toolUseResult":
			it.Advance(r.ToolUseResult.decode(it.Rest()))
		case "content":
			it.Advance(r.Content.decode(it.Rest()))
		default:
			if it.Value() {
				r.field(it.Key, it.Val)
			}
		}
	}
	return it.End(), it.Err()
}

// field sets the record's plain field key from its raw value v.
func (r *ccRecord) field(key, v []byte) {
	switch string(key) {
	case "type":
		r.Type = jsonString(v)
	case "subtype":
		r.Subtype = jsonString(v)
	case "uuid":
		r.UUID = jsonString(v)
	case "sessionId":
		r.SessionID = jsonString(v)
	case "agentId":
		r.AgentID = jsonString(v)
	case "isSidechain":
		r.IsSidechain = jsonTrue(v)
	case "isMeta":
		r.IsMeta = jsonTrue(v)
	case "isCompactSummary":
		r.IsCompactSummary = jsonTrue(v)
	case "isApiErrorMessage":
		r.IsAPIErrorMessage = jsonTrue(v)
	case "planContent":
		r.ApprovedPlan = len(v) > 2 && v[0] == '"'

	case "cwd":
		r.CWD = jsonString(v)
	case "gitBranch":
		r.GitBranch = jsonString(v)
	case "timestamp":
		r.Timestamp = jsonString(v)
	case "operation":
		r.Operation = jsonString(v)
	case "level":
		r.Level = jsonString(v)
	case "compactMetadata":
		m := jsonscan.NewObjectIter(v)
		for m.Next() {
			switch string(m.Key) {
			case "trigger":
				r.CompactTrigger = jsonString(m.Val)
			case "preTokens":
				r.CompactPreTokens = jsonInt(m.Val)
			}
		}
	case "hookErrors":
		a := jsonscan.NewArrayIter(v)
		for a.Next() {
			if s := jsonString(a.Val); s != "" {
				r.HookErrors = append(r.HookErrors, s)
			} else {
				r.HookErrors = append(r.HookErrors, rawJSON(a.Val))
			}
		}
	case "preventedContinuation":
		r.PreventedContinuation = jsonTrue(v)
	case "stopReason":
		r.StopReason = jsonString(v)
	case "prUrl":
		r.PRURL = jsonString(v)
	}
}

type ccMessage struct {
	ID      string
	Content ccContent
}

// decode reads the message object at the start of b and returns its
// length, 0 if it broke off (what was read is kept); so do the other
// decoders of a record's parts.
func (m *ccMessage) decode(b []byte) int {
	it := jsonscan.NewObjectIter(b)
	for it.NextUnread() {
		switch string(it.Key) {
		case "content":
			it.Advance(m.Content.decode(it.Rest()))
		case "id":
			if it.Value() {
				m.ID = jsonString(it.Val)
			}
		}
	}
	return it.End()
}

// ccContent is a message or tool_result content: a plain string or a list of
// blocks. Any other value leaves it empty: a strange content must not lose
// the record. Texts are kept raw: a tool result is decoded only as far as
// it is kept (lazyContent).
type ccContent struct {
	Text   jsonText
	Blocks []ccBlock
}

func (c *ccContent) decode(b []byte) int {
	switch b[0] {
	case '"':
		end, err := jsonscan.SkipString(b, 0)
		if err != nil {
			return 0
		}
		c.Text = b[:end]
		return end
	case '[':
		c.Blocks = []ccBlock{}
		it := jsonscan.NewArrayIter(b)
		for it.NextUnread() {
			var blk ccBlock
			if !it.Advance(blk.decode(it.Rest())) {
				break
			}
			c.Blocks = append(c.Blocks, blk)
		}
		return it.End()
	}
	return 0
}

type ccBlock struct {
	Type      string
	Text      jsonText
	Thinking  jsonText
	ID        string
	Name      string
	Input     []byte // raw JSON, aliasing the line
	ToolUseID string
	Content   ccContent
	IsError   bool
	// Image and document sources; base64 data is only measured.
	MediaType string
	URL       string
	DataLen   int
	HasSource bool
}

func (b *ccBlock) decode(raw []byte) int {
	it := jsonscan.NewObjectIter(raw)
	for it.NextUnread() {
		switch string(it.Key) {
		case "content":
			it.Advance(b.Content.decode(it.Rest()))
		case "source":
			// HasSource only once the value is known to end, as when
			// the block was skipped whole before being read.
			if it.Advance(b.decodeSource(it.Rest())) {
				b.HasSource = true
			}
		default:
			if it.Value() {
				b.field(it.Key, it.Val)
			}
		}
	}
	return it.End()
}

// field sets the block's plain field key from its raw value v.
func (b *ccBlock) field(key, v []byte) {
	switch string(key) {
	case "type":
		b.Type = jsonString(v)
	case "text":
		b.Text = v
	case "thinking":
		b.Thinking = v
	case "id":
		b.ID = jsonString(v)
	case "name":
		b.Name = jsonString(v)
	case "input":
		b.Input = v
	case "tool_use_id":
		b.ToolUseID = jsonString(v)
	case "is_error":
		b.IsError = jsonTrue(v)
	}
}

// decodeSource reads an image or document source.
func (b *ccBlock) decodeSource(raw []byte) int {
	s := jsonscan.NewObjectIter(raw)
	for s.Next() {
		switch string(s.Key) {
		case "media_type":
			b.MediaType = jsonString(s.Val)
		case "url":
			b.URL = jsonString(s.Val)
		case "data":
			b.DataLen = max(len(s.Val)-2, 0)
		}
	}
	return s.End()
}

// ccUseResult is the parsed sidecar of a tool result (toolUseResult): an
// object whose keys depend on the tool, or a plain string for errors. Lists
// (MCP content, already in the tool_result) are ignored.
type ccUseResult struct {
	Set         bool
	ErrorText   string // the string form, when it is one
	FilePath    string
	Interrupted bool
	AgentID     string
	HasStdout   bool // Bash results have stdout
}

func (u *ccUseResult) decode(b []byte) int {
	u.Set = true
	switch b[0] {
	case '"':
		end, err := jsonscan.SkipString(b, 0)
		if err != nil {
			return 0
		}
		u.ErrorText = jsonString(b[:end])
		return end
	case '{':
		it := jsonscan.NewObjectIter(b)
		for it.NextUnread() {
			if string(it.Key) == "file" {
				it.Advance(u.decodeFile(it.Rest()))
			} else if it.Value() {
				u.field(it.Key, it.Val)
			}
		}
		return it.End()
	}
	return 0
}

// field sets the sidecar's plain field key from its raw value v.
func (u *ccUseResult) field(key, v []byte) {
	switch string(key) {
	case "filePath":
		u.FilePath = firstNonEmpty(u.FilePath, jsonString(v))
	case "interrupted":
		u.Interrupted = jsonTrue(v)
	case "agentId":
		u.AgentID = jsonString(v)
	case "stdout":
		u.HasStdout = v[0] == '"'
	}
}

// decodeFile reads the file object of a Read result.
func (u *ccUseResult) decodeFile(b []byte) int {
	f := jsonscan.NewObjectIter(b)
	for f.Next() {
		if string(f.Key) == "filePath" {
			u.FilePath = firstNonEmpty(u.FilePath, jsonString(f.Val))
		}
	}
	return f.End()
}

var progressPattern = []byte(`"type":"progress"`)

// ParseLine returns the events of one line of a Claude Code transcript.
// A record is decoded as it is found: the walk that reads it finds its end
// too, where a skip of the whole record came first before.
func (p *ClaudeCode) ParseLine(line []byte, pos Position) []Event {
	var out []Event
	var r ccRecord
	read := func(rest []byte) int {
		r = ccRecord{}
		// progress records are a third of a 2.1.x file and never events;
		// one is told on its own bytes (topLevelType) once it is found.
		if typeBeforeNesting(rest, progressPattern) {
			return 0
		}
		n, err := r.decode(rest)
		if err != nil {
			return 0
		}
		return n
	}
	p.eachRecordRead(line, pos, read, func(raw []byte, index int, decoded bool) {
		if !decoded {
			if topLevelType(raw, progressPattern) {
				p.skip(pos, "noise:progress")
				return
			}
			r = ccRecord{}
			if _, err := r.decode(raw); err != nil {
				p.skip(pos, "invalid_json")
				return
			}
		}
		out = p.record(out, &r, pos, index)
	})
	return p.counted(out)
}

func (p *ClaudeCode) record(out []Event, r *ccRecord, pos Position, index int) []Event {
	switch r.Type {
	case "user":
		return p.user(out, r, pos, index)
	case "assistant":
		return p.assistant(out, r, pos, index)
	case "system":
		return p.system(out, r, pos, index)
	case "pr-link":
		e := p.base(r, pos, index)
		e.ID = p.recordID(r, pos, index, 0)
		e.Kind, e.Subtype, e.URL = KindSystem, "pr_link", r.PRURL
		p.bound(&e, "pull request: "+r.PRURL)
		return append(out, e)
	case "queue-operation":
		return p.queue(out, r, pos, index)
	case "progress", "file-history-snapshot", "summary", "last-prompt",
		"attachment", "custom-title", "permission-mode", "mode", "tag", "agent-name":
		p.skip(pos, "noise:"+r.Type)
	case "":
		p.skip(pos, "unknown_type:<none>")
	default:
		p.skip(pos, "unknown_type:"+r.Type)
	}
	return out
}

// base fills the fields every event of record r shares. Subagent records
// carry their parent's sessionId; they get a session of their own under it.
func (p *ClaudeCode) base(r *ccRecord, pos Position, index int) Event {
	e := Event{
		Agent:     AgentClaudeCode,
		SessionID: r.SessionID,
		AgentID:   r.AgentID,
		CWD:       r.CWD,
		GitBranch: r.GitBranch,
		Time:      parseTime(r.Timestamp),
		Source:    Source{File: pos.File, Path: pos.Path, Offset: pos.Offset, Index: index, Record: r.UUID},
	}
	info := p.paths.get(pos.Path)
	if e.AgentID == "" && info.AgentID != "" && r.IsSidechain {
		e.AgentID = info.AgentID
	}
	if e.SessionID == "" {
		e.SessionID = info.SessionID
		if info.ParentSessionID != "" {
			e.SessionID = info.ParentSessionID
		}
	}
	if r.IsSidechain || e.AgentID != "" {
		e.ParentSessionID = e.SessionID
		if e.AgentID != "" {
			e.SessionID += "/agent-" + e.AgentID
		} else {
			e.SessionID += "/sidechain"
		}
	}
	return e
}

// recordID is "cc:rec:<uuid>", with a suffix for the n-th extra event of a
// record; records without a uuid fall back to their position.
func (p *ClaudeCode) recordID(r *ccRecord, pos Position, index, n int) string {
	if r.UUID == "" {
		return positionID("cc:", pos, index, n)
	}
	if n == 0 {
		return "cc:rec:" + r.UUID
	}
	return "cc:rec:" + r.UUID + ":" + strconv.Itoa(n)
}

func (p *ClaudeCode) user(out []Event, r *ccRecord, pos Position, index int) []Event {
	if r.Message == nil {
		p.skip(pos, "empty_message")
		return out
	}
	c := &r.Message.Content
	if c.Blocks == nil {
		return p.userText(out, r, c.Text.String(), pos, index)
	}
	var text []string
	results := 0
	for i := range c.Blocks {
		if c.Blocks[i].Type == "tool_result" {
			results++
		}
	}
	for i := range c.Blocks {
		b := &c.Blocks[i]
		switch b.Type {
		case "tool_result":
			if p.repeated(b.ToolUseID) {
				p.skip(pos, "duplicate:result")
				continue
			}
			out = append(out, p.toolResult(r, b, results == 1, pos, index))
		case "text":
			text = append(text, b.Text.String())
		case "image", "document":
			text = append(text, sourcePlaceholder(b))
		default:
			p.skip(pos, "unknown_block:"+b.Type)
		}
	}
	if len(text) > 0 {
		out = p.userText(out, r, strings.Join(text, "\n"), pos, index)
	}
	return out
}

// queue turns an "enqueue" queue-operation into the prompt the user typed
// while the agent was busy. Harness text queued the same way (background task
// notifications) keeps its boilerplate flag; other operations are noise.
func (p *ClaudeCode) queue(out []Event, r *ccRecord, pos Position, index int) []Event {
	text := r.Content.Text.String()
	if r.Operation != "enqueue" || strings.TrimSpace(text) == "" {
		p.skip(pos, "noise:queue-operation")
		return out
	}
	e := p.base(r, pos, index)
	e.ID = p.recordID(r, pos, index, 0)
	e.Kind, e.Subtype = KindUserPrompt, SubtypeQueued
	if sub := claudeBoilerplate(text); sub != "" {
		e.Subtype, e.Boilerplate = sub, true
	} else {
		if len(p.queued) >= maxQueued {
			p.queued = p.queued[1:]
		}
		p.queued = append(p.queued, textKey(text))
	}
	p.bound(&e, text)
	return append(out, e)
}

// delivered reports whether text is a queued prompt already emitted, and
// forgets it: Claude Code writes a dequeued prompt again as a user record.
func (p *ClaudeCode) delivered(text string) bool {
	t := textKey(text)
	for i, q := range p.queued {
		if q == t {
			p.queued = append(p.queued[:i], p.queued[i+1:]...)
			return true
		}
	}
	return false
}

// userText turns the text of a user record into a prompt, a compaction
// summary, an interrupt notice or a flagged piece of harness text.
func (p *ClaudeCode) userText(out []Event, r *ccRecord, text string, pos Position, index int) []Event {
	if strings.TrimSpace(text) == "" {
		p.skip(pos, "empty_text")
		return out
	}
	e := p.base(r, pos, index)
	e.ID = p.recordID(r, pos, index, 0)
	e.Kind = KindUserPrompt
	switch {
	case r.IsCompactSummary || strings.HasPrefix(text, "This session is being continued from a previous conversation"):
		e.Kind = KindCompactionSummary
	case strings.HasPrefix(text, "[Request interrupted by user"):
		e.Kind, e.Subtype = KindSystem, SubtypeInterrupted
	default:
		if sub := claudeBoilerplate(text); sub != "" {
			e.Subtype, e.Boilerplate = sub, true
		} else if r.ApprovedPlan {
			e.Subtype, e.Boilerplate = SubtypeApprovedPlan, true
		} else if !r.IsMeta && len(p.queued) > 0 && p.delivered(text) {
			p.skip(pos, "duplicate:queued")
			return out
		} else if r.IsMeta {
			e.Subtype, e.Boilerplate = "meta", true
		} else if r.IsSidechain || e.AgentID != "" {
			e.Subtype, e.Boilerplate = SubtypeSubagentPrompt, true
		}
	}
	p.bound(&e, text)
	return append(out, e)
}

// claudeBoilerplate names the harness text a user record starts with, or
// returns "".
func claudeBoilerplate(text string) string {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, m := range claudeMarkers {
		if strings.HasPrefix(t, m.prefix) {
			return m.subtype
		}
	}
	if t == "Warmup" {
		return "warmup"
	}
	return ""
}

var claudeMarkers = []struct{ prefix, subtype string }{
	{"<command-name>", "command"},
	{"<command-message>", "command"},
	{"<command-args>", "command"},
	{"<local-command-stdout>", "command_output"},
	{"<local-command-stderr>", "command_output"},
	{"<local-command-caveat>", "caveat"},
	{"Caveat: The messages below were generated by the user while running local commands", "caveat"},
	{"<system-reminder>", "system_reminder"},
	{"<bash-input>", "bash_input"},
	{"<bash-stdout>", "bash_output"},
	{"<bash-stderr>", "bash_output"},
	{"<task-notification>", "task_notification"},
	// A background task's notification queued as JSON
	// ({"task_id":…,"description":…,"task_type":"local_bash"}).
	{`{"task_id":`, "task_notification"},
	{"<user-prompt-submit-hook>", "hook"},
	{"Stop hook feedback:", "hook"},
	{"Base directory for this skill:", "skill"},
}

func sourcePlaceholder(b *ccBlock) string {
	switch {
	case !b.HasSource:
		return "[" + b.Type + "]"
	case b.URL != "":
		return "[" + b.Type + ": " + b.URL + "]"
	case b.Type == "image":
		return imagePlaceholder(b.MediaType, b.DataLen)
	}
	return "[" + b.Type + ": " + b.MediaType + ", " + byteSize(b.DataLen*3/4) + "]"
}

// contentText flattens tool_result content, replacing images by
// placeholders.
func contentText(c *ccContent) string {
	t := lazyContent(c)
	return t.String()
}

// lazyContent is contentText's text, its texts still raw: the parts of
// the content joined by newlines.
func lazyContent(c *ccContent) lazyText {
	var t lazyText
	if c.Blocks == nil {
		t.addJSON(c.Text)
		return t
	}
	first := true
	for i := range c.Blocks {
		b := &c.Blocks[i]
		switch b.Type {
		case "text", "image", "document", "tool_reference":
		default:
			continue
		}
		if !first {
			t.addString("\n")
		}
		first = false
		switch b.Type {
		case "text":
			t.addJSON(b.Text)
		case "tool_reference":
			t.addString("[" + b.Type + "]")
		default:
			t.addString(sourcePlaceholder(b))
		}
	}
	return t
}

// toolResult builds the result event of block b. The record's toolUseResult
// sidecar is only trusted when the record holds a single result.
func (p *ClaudeCode) toolResult(r *ccRecord, b *ccBlock, single bool, pos Position, index int) Event {
	e := p.base(r, pos, index)
	e.Kind, e.ToolCallID = KindToolResult, b.ToolUseID
	if b.ToolUseID != "" {
		e.ID = "cc:result:" + b.ToolUseID
	} else {
		e.ID = positionID("cc:result:", pos, index, 0)
	}
	if call, ok := p.calls[b.ToolUseID]; ok {
		e.Tool, e.Command, e.FilePaths = call.tool, call.command, call.paths
		delete(p.calls, b.ToolUseID)
	}
	// Only the start of the text is looked at; a long one is decoded only
	// as far as the bound keeps it.
	content := lazyContent(&b.Content)
	text := resultHead(&content, p.maxText(&e))
	failed := b.IsError || strings.HasPrefix(text, "<tool_use_error>")
	if strings.HasPrefix(text, "The user doesn't want to proceed with this tool use") {
		failed, e.Subtype = true, SubtypeRejected
	}
	if u := &r.ToolUseResult; single && u.Set {
		if strings.HasPrefix(u.ErrorText, "Error") {
			failed = true
		}
		if u.Interrupted {
			failed, e.Subtype = true, SubtypeInterrupted
		}
		if e.AgentID == "" {
			e.AgentID = u.AgentID
		}
		e.FilePaths = appendUnique(e.FilePaths, u.FilePath)
		if u.HasStdout && !failed {
			e.ExitCode = intPtr(0) // Bash only records an exit code when it fails
		}
	}
	if rest, ok := strings.CutPrefix(text, "Exit code "); ok {
		if n, ok := parseExitCode(rest); ok {
			e.ExitCode = intPtr(n)
			failed = failed || n != 0
		}
	}
	e.OK = boolPtr(!failed)
	p.boundLazy(&e, &content)
	return e
}

func (p *ClaudeCode) assistant(out []Event, r *ccRecord, pos Position, index int) []Event {
	if r.Message == nil {
		p.skip(pos, "empty_message")
		return out
	}
	m := r.Message
	if r.IsAPIErrorMessage {
		e := p.base(r, pos, index)
		e.ID = p.recordID(r, pos, index, 0)
		e.Kind, e.Subtype = KindError, SubtypeAPIError
		content := lazyContent(&m.Content)
		p.boundLazy(&e, &content)
		return append(out, e)
	}
	if m.Content.Blocks == nil && m.Content.Text.String() != "" {
		m.Content.Blocks = []ccBlock{{Type: "text", Text: m.Content.Text}}
	}
	for i := range m.Content.Blocks {
		b := &m.Content.Blocks[i]
		e := p.base(r, pos, index)
		e.MessageID = m.ID
		switch b.Type {
		case "text":
			// The id hashes the whole text: it is decoded whole.
			text := b.Text.String()
			if strings.TrimSpace(text) == "" {
				p.skip(pos, "empty_text")
				continue
			}
			e.Kind, e.ID = KindAssistantMessage, p.blockID(r, pos, index, i, "text", text)
			p.bound(&e, text)
		case "thinking":
			text := b.Thinking.String()
			if strings.TrimSpace(text) == "" {
				p.skip(pos, "empty_reasoning")
				continue
			}
			e.Kind, e.ID = KindReasoning, p.blockID(r, pos, index, i, "thinking", text)
			p.bound(&e, text)
		case "tool_use":
			p.toolUse(&e, b, pos, index, i)
		case "redacted_thinking":
			p.skip(pos, "noise:redacted_thinking")
			continue
		default:
			p.skip(pos, "unknown_block:"+b.Type)
			continue
		}
		if p.repeatedPiece(m.ID, e.ID) {
			p.skip(pos, "duplicate")
			continue
		}
		out = append(out, e)
	}
	return out
}

// repeatedPiece reports whether the block id was already emitted for the
// reply being written (message id).
func (p *ClaudeCode) repeatedPiece(messageID, id string) bool {
	if messageID == "" {
		return false
	}
	if messageID != p.replyID {
		p.replyID, p.replyBlocks = messageID, p.replyBlocks[:0]
	}
	if contains(p.replyBlocks, id) {
		return true
	}
	p.replyBlocks = append(p.replyBlocks, id)
	return false
}

// blockID keys a text or thinking block by its message id and content, so
// that the same block written twice (a reply piece repeated, history copied
// into a resumed session) is the same event.
func (p *ClaudeCode) blockID(r *ccRecord, pos Position, index, block int, kind, text string) string {
	if r.Message.ID == "" {
		return p.recordID(r, pos, index, block)
	}
	return hashID("cc:msg:"+r.Message.ID+":", kind, text)
}

// toolUse fills e from a tool_use block: a tool call, or a plan update for
// the todo and plan tools.
func (p *ClaudeCode) toolUse(e *Event, b *ccBlock, pos Position, index, block int) {
	e.Kind, e.Tool, e.ToolCallID = KindToolCall, b.Name, b.ID
	if b.ID != "" {
		e.ID = "cc:call:" + b.ID
	} else {
		e.ID = positionID("cc:call:", pos, index, block)
	}
	in := decodeToolInput(b.Input)
	e.FilePaths, e.Command, e.Query, e.URL = in.Paths, in.Command, in.Query, in.URL
	text := rawJSON(b.Input)
	switch b.Name {
	case "TodoWrite":
		e.Kind, e.Subtype, e.Todos, text = KindPlanUpdate, SubtypeTodos, in.Todos, ""
	case "ExitPlanMode":
		e.Kind, e.Subtype, text = KindPlanUpdate, SubtypePlan, in.Plan
	}
	p.bound(e, text)
	rememberCall(p.calls, b.ID, callInfo{tool: b.Name, command: e.Command, paths: e.FilePaths})
}

func (p *ClaudeCode) system(out []Event, r *ccRecord, pos Position, index int) []Event {
	e := p.base(r, pos, index)
	e.ID = p.recordID(r, pos, index, 0)
	e.Kind, e.Subtype = KindSystem, r.Subtype
	text := contentText(&r.Content)
	switch r.Subtype {
	case "turn_duration":
		p.skip(pos, "noise:system:turn_duration")
		return out
	case "stop_hook_summary":
		if len(r.HookErrors) == 0 && !r.PreventedContinuation {
			p.skip(pos, "noise:system:stop_hook_summary")
			return out
		}
		e.Kind, e.Subtype = KindError, SubtypeHookError
		text = joinNonEmpty("\n", append([]string{r.StopReason}, r.HookErrors...)...)
		if text == "" {
			text = "a stop hook prevented the agent from stopping"
		}
	case "compact_boundary":
		text = "conversation compacted"
		if details := joinNonEmpty(", ", r.CompactTrigger, tokensText(r.CompactPreTokens)); details != "" {
			text += " (" + details + ")"
		}
	case "local_command":
		e.Kind = KindUserPrompt
		e.Subtype, e.Boilerplate = claudeBoilerplate(text), true
		if e.Subtype == "" {
			e.Subtype = "command"
		}
	case "api_error":
		e.Kind, e.Subtype = KindError, SubtypeAPIError
	default:
		if r.Level == "error" {
			e.Kind = KindError
		}
	}
	p.bound(&e, text)
	return append(out, e)
}

func tokensText(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n) + " tokens before"
}
