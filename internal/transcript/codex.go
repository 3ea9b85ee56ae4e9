package transcript

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/jsonscan"
)

// Codex reads Codex CLI / Codex Desktop rollout files
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl), whose lines
// are {"timestamp", "type", "payload"}.
//
// session_meta (repeated on every reopen; later copies are "duplicate")
// sets the session id, cwd and branch and yields one system event;
// turn_context updates the cwd. response_item carries the conversation:
// message (user, assistant; developer messages and injected AGENTS.md or
// environment text are "boilerplate"), reasoning, function_call,
// custom_tool_call, local_shell_call, web_search_call and their outputs.
// event_msg repeats much of it: user_message and agent_message are paired
// with their response_item twin and only the first of the two becomes an
// event (some front-ends write only one side, so neither side can simply be
// ignored); agent_reasoning, exec_command_end, patch_apply_end and the like
// are counted as "duplicate"; turn_aborted and error events become events.
// compacted becomes a compaction summary.
//
// IDs: "cx:call:<call_id>", "cx:result:<call_id>", "cx:meta:<session id>";
// messages and reasoning hash the file, kind, text and second, so the twin
// of an already emitted message usually gets the same ID anyway; the
// pairing state, the session identity and the pending calls survive a
// restart through MarshalState (state.go), for twins written a second apart
// and for the events after the session_meta line.
type Codex struct {
	core
	paths pathCache

	session, parent, cwd, branch string
	metaSeen                     map[string]bool
	calls                        map[string]callInfo

	// Pairing of event_msg / response_item twins. A twin follows its
	// sibling within a few records; older entries expire.
	records int
	pending []pendingMessage
}

type pendingMessage struct {
	id   string
	kind Kind
	// text is the message's textKey: the twin is recognised by it, and
	// the saved state (state.go) stays small however long the message.
	text   string
	stream string
	record int
}

// pairWindow is how many records a message waits for its twin.
const pairWindow = 32

var _ Parser = (*Codex)(nil)

// NewCodex returns a parser for one Codex rollout file.
func NewCodex(opts Options) *Codex {
	return &Codex{core: newCore(opts), metaSeen: map[string]bool{}, calls: map[string]callInfo{}}
}

// Format returns FormatCodex.
func (p *Codex) Format() Format { return FormatCodex }

// cxRecord is one rollout line. Like Claude Code records, it is walked
// with the scanner in scan.go.
type cxRecord struct {
	Timestamp string
	Type      string
	Payload   cxPayload
}

func (r *cxRecord) decode(raw []byte) error {
	it := jsonscan.NewObjectIter(raw)
	for it.Next() {
		switch string(it.Key) {
		case "timestamp":
			r.Timestamp = jsonString(it.Val)
		case "type":
			r.Type = jsonString(it.Val)
		case "payload":
			r.Payload.decode(it.Val)
		}
	}
	return it.Err()
}

// cxPayload is the union of the payload fields we use across record types.
type cxPayload struct {
	Type string

	// session_meta, turn_context
	ID, CWD, Originator, CLIVersion, GitBranch string
	ParentID                                   string // parent_thread_id or forked_from_id

	// message, reasoning
	Role    string
	Content cxContent
	Summary cxContent

	// tool calls and outputs
	Name, Namespace, CallID string
	Arguments               string // JSON text as Codex writes it
	Input                   string // custom_tool_call input (a patch)
	Output                  cxContent
	Action                  cxAction

	// event_msg, compacted
	Message string
	Images  []string // placeholders
	Reason  string

	// ContentKinds are a 0.169 message's content_item_kinds: where each
	// content item came from ("user.text", "hooks.additional_context").
	ContentKinds []string
	// Item is an event_msg item_completed's item (0.169).
	Item cxItem
}

// cxItem is the item of an event_msg item_completed: UserMessage and
// AgentMessage repeat a response_item message, CommandExecution and the
// others a tool call and its output.
type cxItem struct {
	Type    string
	Content cxContent
}

func (it *cxItem) decode(raw []byte) {
	o := jsonscan.NewObjectIter(raw)
	for o.Next() {
		switch string(o.Key) {
		case "type":
			it.Type = jsonString(o.Val)
		case "content":
			it.Content.decode(o.Val)
		}
	}
}

func (p *cxPayload) decode(raw []byte) {
	it := jsonscan.NewObjectIter(raw)
	for it.Next() {
		v := it.Val
		switch string(it.Key) {
		case "type":
			p.Type = jsonString(v)
		case "id":
			p.ID = jsonString(v)
		case "cwd":
			p.CWD = jsonString(v)
		case "originator":
			p.Originator = jsonString(v)
		case "cli_version":
			p.CLIVersion = jsonString(v)
		case "git":
			g := jsonscan.NewObjectIter(v)
			for g.Next() {
				if string(g.Key) == "branch" {
					p.GitBranch = jsonString(g.Val)
				}
			}
		case "parent_thread_id", "forked_from_id":
			p.ParentID = firstNonEmpty(p.ParentID, jsonString(v))
		case "role":
			p.Role = jsonString(v)
		case "content":
			p.Content.decode(v)
		case "summary":
			p.Summary.decode(v)
		case "name":
			p.Name = jsonString(v)
		case "namespace":
			p.Namespace = jsonString(v)
		case "call_id":
			p.CallID = jsonString(v)
		case "arguments":
			p.Arguments = rawText(v)
		case "input":
			p.Input = rawText(v)
		case "output":
			p.Output.decode(v)
		case "action":
			p.Action.decode(v)
		case "message":
			p.Message = jsonString(v)
		case "images":
			a := jsonscan.NewArrayIter(v)
			for a.Next() {
				p.Images = append(p.Images, imageURLPlaceholder(a.Val))
			}
		case "local_images":
			a := jsonscan.NewArrayIter(v)
			for a.Next() {
				p.Images = append(p.Images, "[image: "+jsonString(a.Val)+"]")
			}
		case "reason":
			p.Reason = jsonString(v)
		case "item":
			p.Item.decode(v)
		case "internal_chat_message_metadata_passthrough":
			m := jsonscan.NewObjectIter(v)
			for m.Next() {
				if string(m.Key) == "content_item_kinds" {
					a := jsonscan.NewArrayIter(m.Val)
					for a.Next() {
						p.ContentKinds = append(p.ContentKinds, jsonString(a.Val))
					}
				}
			}
		}
	}
}

// rawText is a string's value, or any other value's JSON text.
func rawText(raw []byte) string {
	if raw[0] == '"' {
		return jsonString(raw)
	}
	if string(raw) == "null" {
		return ""
	}
	return rawJSON(raw)
}

// cxContent is text found as a string, or as a list of content items
// (input_text, output_text, summary_text, reasoning_text, input_image).
// Images become placeholders; the <image> wrappers around them are dropped.
type cxContent struct {
	Text  string // the text items joined, without image placeholders
	Shown string // Text with image placeholders, for display
}

func (c *cxContent) decode(raw []byte) {
	switch raw[0] {
	case '"':
		c.Text = jsonString(raw)
		c.Shown = c.Text
	case '{':
		c.Text = rawJSON(raw)
		c.Shown = c.Text
	case '[':
		var text, shown []string
		a := jsonscan.NewArrayIter(raw)
		for a.Next() {
			var typ, t, image string
			it := jsonscan.NewObjectIter(a.Val)
			for it.Next() {
				switch string(it.Key) {
				case "type":
					typ = jsonString(it.Val)
				case "text":
					t = jsonString(it.Val)
				case "image_url":
					image = imageURLPlaceholder(it.Val)
				}
			}
			switch {
			case typ == "input_image":
				shown = append(shown, firstNonEmpty(image, "[image]"))
			case strings.HasPrefix(t, "<image name=") || t == "</image>":
			case t != "":
				text = append(text, t)
				shown = append(shown, t)
			}
		}
		c.Text, c.Shown = strings.Join(text, "\n"), strings.Join(shown, "\n")
	}
}

// imageURLPlaceholder describes an image URL, usually a base64 data: URL,
// without copying its data.
func imageURLPlaceholder(raw []byte) string {
	if raw[0] != '"' {
		return "[image]"
	}
	if data, ok := bytes.CutPrefix(raw, []byte(`"data:`)); ok {
		if i := bytes.IndexByte(data[:min(len(data), 128)], ','); i >= 0 {
			media, _, _ := strings.Cut(string(data[:i]), ";")
			return imagePlaceholder(media, len(data)-i-2) // less the comma and closing quote
		}
	}
	return dataURLPlaceholder(jsonString(raw))
}

type cxAction struct {
	Query, URL, Command string
}

func (a *cxAction) decode(raw []byte) {
	it := jsonscan.NewObjectIter(raw)
	for it.Next() {
		switch string(it.Key) {
		case "query":
			a.Query = jsonString(it.Val)
		case "url":
			a.URL = jsonString(it.Val)
		case "command":
			a.Command = commandText(it.Val)
		}
	}
}

var tokenCountPattern = []byte(`"type":"event_msg","payload":{"type":"token_count"`)

// ParseLine returns the events of one line of a Codex rollout.
func (p *Codex) ParseLine(line []byte, pos Position) []Event {
	var out []Event
	p.eachRecord(line, pos, func(raw []byte, index int) {
		p.records++
		if topLevelType(raw, tokenCountPattern) {
			p.skip(pos, "noise:event_msg:token_count")
			return
		}
		var r cxRecord
		if r.decode(raw) != nil {
			p.skip(pos, "invalid_json")
			return
		}
		out = p.record(out, &r, pos, index)
	})
	return p.counted(out)
}

func (p *Codex) record(out []Event, r *cxRecord, pos Position, index int) []Event {
	pl := &r.Payload
	switch r.Type {
	case "session_meta":
		return p.sessionMeta(out, r, pos, index)
	case "turn_context":
		if pl.CWD != "" {
			p.cwd = pl.CWD
		}
		p.skip(pos, "noise:turn_context")
	case "response_item":
		return p.responseItem(out, r, pos, index)
	case "event_msg":
		return p.eventMsg(out, r, pos, index)
	case "world_state", "token_usage_record":
		// 0.169: the environment and instructions in force (what
		// turn_context and session_meta say), and token counts.
		p.skip(pos, "noise:"+r.Type)
	case "compacted":
		e := p.base(r, pos, index)
		e.ID = positionID("cx:", pos, index, 0)
		e.Kind = KindCompactionSummary
		// Remote compaction keeps the summary encrypted; the event still
		// marks where the context was cut.
		p.bound(&e, firstNonEmpty(pl.Message, "context compacted (no summary recorded)"))
		return append(out, e)
	case "":
		p.skip(pos, "unknown_type:<none>")
	default:
		p.skip(pos, "unknown_type:"+r.Type)
	}
	return out
}

// base fills the fields every event shares from the session state, or from
// the file name after a restart mid-file.
func (p *Codex) base(r *cxRecord, pos Position, index int) Event {
	e := Event{
		Agent:           AgentCodex,
		SessionID:       p.session,
		ParentSessionID: p.parent,
		CWD:             p.cwd,
		GitBranch:       p.branch,
		Time:            parseTime(r.Timestamp),
		Source:          Source{File: pos.File, Path: pos.Path, Offset: pos.Offset, Index: index, Record: r.Payload.CallID},
	}
	if e.SessionID == "" {
		e.SessionID = p.paths.get(pos.Path).SessionID
	}
	return e
}

func (p *Codex) sessionMeta(out []Event, r *cxRecord, pos Position, index int) []Event {
	pl := &r.Payload
	if pl.ID != "" && p.session == "" {
		p.session = pl.ID
	}
	if pl.CWD != "" {
		p.cwd = pl.CWD
	}
	if pl.GitBranch != "" {
		p.branch = pl.GitBranch
	}
	if pl.ParentID != "" {
		p.parent = pl.ParentID
	}
	if p.metaSeen[pl.ID] {
		p.skip(pos, "duplicate")
		return out
	}
	p.metaSeen[pl.ID] = true
	e := p.base(r, pos, index)
	if pl.ID != "" {
		e.SessionID = pl.ID
		e.ID = "cx:meta:" + pl.ID
	} else {
		e.ID = positionID("cx:", pos, index, 0)
	}
	e.Kind, e.Subtype = KindSystem, SubtypeSessionStart
	p.bound(&e, joinNonEmpty(" ", "codex", pl.CLIVersion, parenthesize(pl.Originator)))
	return append(out, e)
}

func parenthesize(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

func (p *Codex) responseItem(out []Event, r *cxRecord, pos Position, index int) []Event {
	pl := &r.Payload
	switch pl.Type {
	case "message":
		return p.message(out, r, pos, index)
	case "reasoning":
		text := joinNonEmpty("\n\n", pl.Summary.Text, pl.Content.Text)
		if strings.TrimSpace(text) == "" {
			p.skip(pos, "noise:encrypted_reasoning")
			return out
		}
		e := p.base(r, pos, index)
		e.Kind = KindReasoning
		e.ID = p.messageID(pos, r, KindReasoning, text)
		p.bound(&e, text)
		return append(out, e)
	case "function_call", "custom_tool_call", "local_shell_call":
		return append(out, p.toolCall(r, pos, index))
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		return append(out, p.toolOutput(r, pos, index))
	case "web_search_call":
		e := p.base(r, pos, index)
		e.Kind, e.Tool = KindToolCall, "web_search"
		e.ID = positionID("cx:call:", pos, index, 0)
		e.Query, e.URL = pl.Action.Query, pl.Action.URL
		p.bound(&e, joinNonEmpty(" ", e.Query, e.URL))
		return append(out, e)
	case "ghost_snapshot":
		p.skip(pos, "noise:ghost_snapshot")
	case "":
		p.skip(pos, "unknown_type:response_item/<none>")
	default:
		// Newer tool item types follow the *_call / *_output naming.
		switch {
		case strings.HasSuffix(pl.Type, "_call"):
			e := p.toolCall(r, pos, index)
			e.Tool = firstNonEmpty(e.Tool, strings.TrimSuffix(pl.Type, "_call"))
			return append(out, e)
		case strings.HasSuffix(pl.Type, "_output"):
			return append(out, p.toolOutput(r, pos, index))
		}
		p.skip(pos, "unknown_type:response_item/"+pl.Type)
	}
	return out
}

// The two streams that can carry the same message.
const (
	streamItem  = "response_item"
	streamEvent = "event_msg"
)

func (p *Codex) message(out []Event, r *cxRecord, pos Position, index int) []Event {
	pl := &r.Payload
	var kind Kind
	switch pl.Role {
	case "user":
		kind = KindUserPrompt
	case "assistant":
		kind = KindAssistantMessage
	default: // developer, system: instructions
		p.skip(pos, "boilerplate")
		return out
	}
	if slices.Contains(pl.ContentKinds, "hooks.additional_context") {
		// What a hook added (our own save file among them), whatever
		// role it was given.
		p.skip(pos, "boilerplate")
		return out
	}
	text := strings.TrimSpace(pl.Content.Text)
	sub := ""
	if kind == KindUserPrompt {
		var skip bool
		if sub, skip = codexBoilerplate(text); skip {
			p.skip(pos, "boilerplate")
			return out
		}
		if sub == SubtypeInterrupted {
			// event_msg/turn_aborted records the same interrupt.
			p.skip(pos, "duplicate")
			return out
		}
	}
	shown := pl.Content.Shown
	if text == "" && shown == "" {
		p.skip(pos, "empty_text")
		return out
	}
	return p.paired(out, r, pos, index, kind, sub, text, shown, streamItem)
}

// codexBoilerplate classifies injected user-role text: instructions to skip,
// or harness text to keep flagged (subtype).
func codexBoilerplate(text string) (subtype string, skip bool) {
	for _, prefix := range []string{
		"# AGENTS.md instructions", "<environment_context>", "<user_instructions>",
		"<permissions instructions>", "<INSTRUCTIONS>", "<skills_instructions>",
		"<developer_instructions>", "<collaboration_mode>", "<personality>",
	} {
		if strings.HasPrefix(text, prefix) {
			return "", true
		}
	}
	if isSaveFile(text) {
		return "", true
	}
	switch {
	case strings.HasPrefix(text, "<user_shell_command>"):
		return "bash_input", false
	case strings.HasPrefix(text, "<turn_aborted>"):
		return SubtypeInterrupted, false
	}
	return "", false
}

// paired emits a user or assistant message unless its twin from the other
// stream was just emitted, or the same message (same id) was: Codex
// re-injects some user-role text on resume.
func (p *Codex) paired(out []Event, r *cxRecord, pos Position, index int, kind Kind, sub, text, shown, stream string) []Event {
	id := p.messageID(pos, r, kind, text)
	key := textKey(text)
	n := 0
	dup := false
	for _, m := range p.pending {
		switch {
		case p.records-m.record > pairWindow:
		case !dup && m.kind == kind && m.text == key && m.stream != stream:
			dup = true // the twin: both are done with
		default:
			dup = dup || m.id == id
			p.pending[n] = m
			n++
		}
	}
	p.pending = p.pending[:n]
	if dup {
		p.skip(pos, "duplicate")
		return out
	}
	p.pending = append(p.pending, pendingMessage{id: id, kind: kind, text: key, stream: stream, record: p.records})
	e := p.base(r, pos, index)
	e.Kind, e.Subtype = kind, sub
	e.Boilerplate = sub != ""
	e.ID = id
	p.bound(&e, shown)
	return append(out, e)
}

// messageID derives a message's id from its content and the second it was
// written, which its event_msg/response_item twin shares.
func (p *Codex) messageID(pos Position, r *cxRecord, kind Kind, text string) string {
	file := pos.File
	if file == "" {
		file = pos.Path
	}
	second := r.Timestamp
	if t := parseTime(r.Timestamp); !t.IsZero() {
		second = strconv.FormatInt(t.Unix(), 10)
	} else if second == "" {
		second = strconv.FormatInt(pos.Offset, 10)
	}
	return hashID("cx:msg:", file, string(kind), text, second)
}

func (p *Codex) toolCall(r *cxRecord, pos Position, index int) Event {
	pl := &r.Payload
	e := p.base(r, pos, index)
	e.Kind, e.ToolCallID = KindToolCall, pl.CallID
	e.Tool = pl.Name
	if pl.Namespace != "" && !strings.HasPrefix(pl.Name, pl.Namespace) {
		e.Tool = strings.TrimSuffix(pl.Namespace, "__") + "__" + pl.Name
	}
	if pl.CallID != "" {
		e.ID = "cx:call:" + pl.CallID
	} else {
		e.ID = positionID("cx:call:", pos, index, 0)
	}
	text := pl.Arguments
	args := decodeToolInput([]byte(text))
	e.FilePaths, e.Command, e.Query, e.URL = args.Paths, args.Command, args.Query, args.URL
	switch {
	case pl.Type == "local_shell_call":
		e.Tool = firstNonEmpty(e.Tool, "local_shell")
		e.Command = pl.Action.Command
		text = e.Command
	case pl.Type == "custom_tool_call":
		text = pl.Input
		e.FilePaths = appendUnique(e.FilePaths, patchPaths(text)...)
	case pl.Name == "apply_patch":
		text = firstNonEmpty(args.Patch, text)
		e.FilePaths = appendUnique(e.FilePaths, patchPaths(text)...)
	case pl.Name == "update_plan":
		e.Kind, e.Subtype, e.Todos, text = KindPlanUpdate, SubtypeTodos, args.Todos, args.Explanation
	}
	p.bound(&e, text)
	rememberCall(p.calls, pl.CallID, callInfo{tool: e.Tool, command: e.Command, paths: e.FilePaths})
	return e
}

// patchPaths lists the files an apply_patch input touches.
func patchPaths(patch string) []string {
	var paths []string
	for line := range strings.Lines(patch) {
		for _, h := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(line, h); ok {
				paths = appendUnique(paths, strings.TrimSpace(p))
			}
		}
	}
	return paths
}

func (p *Codex) toolOutput(r *cxRecord, pos Position, index int) Event {
	pl := &r.Payload
	e := p.base(r, pos, index)
	e.Kind, e.ToolCallID = KindToolResult, pl.CallID
	if pl.CallID != "" {
		e.ID = "cx:result:" + pl.CallID
	} else {
		e.ID = positionID("cx:result:", pos, index, 0)
	}
	if call, ok := p.calls[pl.CallID]; ok {
		e.Tool, e.Command, e.FilePaths = call.tool, call.command, call.paths
		delete(p.calls, pl.CallID)
	}
	text, code, known := codexOutput(pl.Output.Shown)
	if known {
		e.ExitCode = intPtr(code)
		e.OK = boolPtr(code == 0)
	} else if failedOutput(text) {
		e.OK = boolPtr(false)
	}
	p.bound(&e, text)
	return e
}

// codexOutput reads the exit code a tool output reports, in any of the
// shapes Codex versions use, and returns the output without its header:
//
//	{"output":"…","metadata":{"exit_code":1,…}}               (shell, ≤0.9x)
//	Exit code: 1\nWall time: …\nOutput:\n…                     (apply_patch)
//	Chunk ID: …\nProcess exited with code 1\n…\nOutput:\n…     (exec_command)
func codexOutput(s string) (text string, code int, known bool) {
	if strings.HasPrefix(s, `{"output":`) {
		var output string
		exit, found := 0, false
		it := jsonscan.NewObjectIter([]byte(s))
		for it.Next() {
			switch string(it.Key) {
			case "output":
				output = jsonString(it.Val)
			case "metadata":
				m := jsonscan.NewObjectIter(it.Val)
				for m.Next() {
					if string(m.Key) == "exit_code" {
						exit, found = jsonInt(m.Val), true
					}
				}
			}
		}
		if it.Err() == nil {
			return output, exit, found
		}
	}
	rest := s
	for range 6 { // the header is a handful of lines
		line, after, found := strings.Cut(rest, "\n")
		switch {
		case strings.HasPrefix(line, "Exit code: "):
			code, known = parseExitCode(line[len("Exit code: "):])
		case strings.HasPrefix(line, "Process exited with code "):
			code, known = parseExitCode(line[len("Process exited with code "):])
		case line == "Output:":
			if known {
				return after, code, true
			}
			return s, 0, false
		}
		if !found {
			break
		}
		rest = after
	}
	return s, code, known
}

// failedOutput recognises the failures Codex reports without an exit code
// ("write_stdin failed: …", "apply_patch verification failed: …").
func failedOutput(s string) bool {
	first, _, _ := strings.Cut(s, "\n")
	return strings.Contains(first, " failed: ") || strings.Contains(first, "verification failed") ||
		strings.HasPrefix(first, "error:") || strings.HasPrefix(first, "Error:")
}

func (p *Codex) eventMsg(out []Event, r *cxRecord, pos Position, index int) []Event {
	pl := &r.Payload
	switch pl.Type {
	case "user_message":
		text := strings.TrimSpace(pl.Message)
		shown := pl.Message
		for _, img := range pl.Images {
			shown = joinNonEmpty("\n", shown, img)
		}
		if strings.TrimSpace(shown) == "" {
			p.skip(pos, "empty_text")
			return out
		}
		sub, _ := codexBoilerplate(text)
		return p.paired(out, r, pos, index, KindUserPrompt, sub, text, shown, streamEvent)
	case "agent_message":
		text := strings.TrimSpace(pl.Message)
		if text == "" {
			p.skip(pos, "empty_text")
			return out
		}
		return p.paired(out, r, pos, index, KindAssistantMessage, "", text, pl.Message, streamEvent)
	case "item_completed":
		return p.itemCompleted(out, r, pos, index)
	case "turn_aborted":
		e := p.base(r, pos, index)
		e.ID = positionID("cx:", pos, index, 0)
		e.Kind, e.Subtype = KindSystem, "turn_aborted"
		if pl.Reason == "interrupted" {
			e.Subtype = SubtypeInterrupted
		}
		p.bound(&e, joinNonEmpty(": ", "turn aborted", pl.Reason))
		return append(out, e)
	case "error", "stream_error":
		e := p.base(r, pos, index)
		e.ID = positionID("cx:", pos, index, 0)
		e.Kind, e.Subtype = KindError, pl.Type
		p.bound(&e, pl.Message)
		return append(out, e)
	case "warning":
		e := p.base(r, pos, index)
		e.ID = positionID("cx:", pos, index, 0)
		e.Kind, e.Subtype = KindSystem, "warning"
		p.bound(&e, pl.Message)
		return append(out, e)
	case "agent_reasoning", "agent_reasoning_raw_content", "exec_command_end", "patch_apply_end",
		"web_search_end", "mcp_tool_call_end", "view_image_tool_call", "context_compacted", "plan_update":
		// The response_item stream (or the compacted record) holds the same.
		p.skip(pos, "duplicate")
	case "token_count", "task_started", "task_complete", "turn_diff", "exec_command_begin",
		"exec_command_output_delta", "patch_apply_begin", "mcp_tool_call_begin", "agent_message_delta",
		"agent_reasoning_delta", "agent_reasoning_section_break", "background_event",
		"item_started", "entered_review_mode", "exited_review_mode",
		"thread_settings_applied", "sub_agent_activity", "mcp_startup_update", "mcp_startup_complete",
		"user_message_delta", "shutdown_complete", "turn_context":
		p.skip(pos, "noise:event_msg:"+pl.Type)
	case "":
		p.skip(pos, "unknown_type:event_msg/<none>")
	default:
		p.skip(pos, "unknown_type:event_msg/"+pl.Type)
	}
	return out
}

// itemCompleted reads a 0.169 item_completed: a UserMessage or AgentMessage
// is the event_msg twin of a response_item message (the stream that 0.169
// writes instead of user_message and agent_message); every other item
// repeats a tool call or output of the response_item stream.
func (p *Codex) itemCompleted(out []Event, r *cxRecord, pos Position, index int) []Event {
	item := &r.Payload.Item
	var kind Kind
	switch item.Type {
	case "UserMessage":
		kind = KindUserPrompt
	case "AgentMessage":
		kind = KindAssistantMessage
	case "":
		p.skip(pos, "unknown_type:event_msg/item_completed/<none>")
		return out
	default:
		p.skip(pos, "duplicate")
		return out
	}
	text := strings.TrimSpace(item.Content.Text)
	if text == "" && strings.TrimSpace(item.Content.Shown) == "" {
		p.skip(pos, "empty_text")
		return out
	}
	sub := ""
	if kind == KindUserPrompt {
		var skip bool
		if sub, skip = codexBoilerplate(text); skip {
			p.skip(pos, "boilerplate")
			return out
		}
	}
	return p.paired(out, r, pos, index, kind, sub, text, item.Content.Shown, streamEvent)
}
