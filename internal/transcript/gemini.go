package transcript

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/medallionhq/medallion/internal/shasum"
)

// Gemini reads Gemini CLI chat recordings, in both formats Gemini CLI has
// written:
//
//   - since 0.39, ~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl
//     (subagents: chats/<parent session>/<session>.jsonl), appended: a
//     header {sessionId, projectHash, startTime, lastUpdated, kind}, then
//     message records, {"$set": {…}} metadata patches (a "messages" array
//     in it replaces the whole conversation) and {"$rewindTo": "<id>"},
//     which takes back that message and every later one. A message updated
//     (tool calls added, their results, token counts) is appended again
//     under the same id: the last one wins.
//   - up to 0.38, chats/session-<time>-<id8>.json: one JSON object, the
//     header with a "messages" array, rewritten whole on every change. The
//     ingest pipeline hands such a file to ParseLine whole (see WholeFile).
//
// Messages are {id, timestamp, type, content, …}: type "user" (content a
// string or a list of parts: text, or a functionResponse that repeats a
// tool result), "gemini" (content, thoughts, toolCalls), "info", "warning",
// "error". A tool call {id, name, args, status, result} becomes a tool_call
// when first seen and a tool_result once its status is final (success,
// error, cancelled); the exit code of a shell command comes from its
// output's "Exit Code: N" line.
//
// Exactly once: every event's id comes from ids in the record, never from
// what the parser learnt from earlier lines ("gm:msg:<message id>",
// "gm:call:<tool call id>", "gm:result:…", "gm:thought:<message id>:<n>",
// "gm:meta:<session>"), and the parser remembers (bounded,
// saved with the offset through Stateful) which ids it emitted, so a
// message appended again, a conversation re-sent by $set, or a whole .json
// file read again after a rewrite yields only what is new. A file
// rewritten under a new inode (Gemini's temp+rename on resume, the .json →
// .jsonl migration) is read by a fresh parser; its events keep their ids
// and the store drops the ones it holds.
//
// Gemini writes context a SessionStart hook adds into the user's prompt as
// <hook_context>…</hook_context>, and the environment it sends as a user
// message starting with <session_context>: both are cut out before
// anything else sees the prompt, so the save file never comes back as the
// user's words. The records carry no cwd: it comes from the project folder
// (.project_root in it, or ~/.gemini/projects.json, which maps project
// paths to folder names; folders named by the hash of the path before 0.29).
type Gemini struct {
	core
	paths pathCache

	session, parent, cwd string
	headerSeen           bool
	lookedUp             bool // the project's path was looked up
	// emitted holds hashes of the ids of emitted events, oldest first in
	// order, bounded by maxEmitted.
	emitted    map[string]struct{}
	order      []string
	maxEmitted int
	rewinds    int

	// projectRoot finds a project's path from a transcript path and the
	// header's projectHash; tests replace it.
	projectRoot func(path, projectHash string) string
}

// Bounds of what a Gemini parser remembers. An appended file updates only
// its last message, and a $set re-sends the conversation rarely; a legacy
// .json file is read whole at every rewrite, so its parser remembers all.
const (
	maxGeminiEmitted       = 1024
	maxGeminiLegacyEmitted = 16384
)

var _ Parser = (*Gemini)(nil)
var _ WholeFile = (*Gemini)(nil)

// NewGemini returns a parser for one Gemini CLI chat file.
func NewGemini(opts Options) *Gemini {
	return &Gemini{core: newCore(opts), emitted: map[string]struct{}{}, projectRoot: GeminiProjectRoot}
}

// Format returns FormatGemini.
func (p *Gemini) Format() Format { return FormatGemini }

// WholeFile reports whether the file at path is a legacy whole-file .json
// recording.
func (p *Gemini) WholeFile(path string) bool { return strings.HasSuffix(path, ".json") }

// gmRecord is one line of a chat file, or a whole legacy file.
type gmRecord struct {
	// header
	SessionID   string   `json:"sessionId"`
	ProjectHash string   `json:"projectHash"`
	Kind        string   `json:"kind"`
	Directories []string `json:"directories"`
	Messages    []gmMessage
	// message
	gmMessage
	// patches
	Set      map[string]json.RawMessage `json:"$set"`
	RewindTo *string                    `json:"$rewindTo"`
}

type gmMessage struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Thoughts  []struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
	} `json:"thoughts"`
	ToolCalls []gmToolCall `json:"toolCalls"`
}

type gmToolCall struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Args          json.RawMessage `json:"args"`
	Result        json.RawMessage `json:"result"`
	Status        string          `json:"status"`
	Timestamp     string          `json:"timestamp"`
	ResultDisplay json.RawMessage `json:"resultDisplay"`
}

// ParseLine returns the events of one line of a chat file, or of a whole
// legacy file.
func (p *Gemini) ParseLine(line []byte, pos Position) []Event {
	if p.maxEmitted == 0 {
		p.maxEmitted = maxGeminiEmitted
		if p.WholeFile(pos.Path) {
			p.maxEmitted = maxGeminiLegacyEmitted
		}
	}
	if p.session == "" {
		// Until the header says (a file read from the middle has its
		// session in the saved state), the file name does.
		p.session = p.paths.get(pos.Path).SessionID
	}
	var out []Event
	p.eachRecord(line, pos, func(raw []byte, index int) {
		var r gmRecord
		if !p.decode(raw, &r, pos) {
			return
		}
		out = p.record(out, &r, pos, index)
	})
	return p.counted(out)
}

func (p *Gemini) record(out []Event, r *gmRecord, pos Position, index int) []Event {
	switch {
	case r.ID != "":
		return p.message(out, &r.gmMessage, pos, index)
	case r.SessionID != "" && r.ProjectHash != "":
		out = p.header(out, r, pos, index)
		for i := range r.Messages {
			out = p.message(out, &r.Messages[i], pos, index)
		}
		return out
	case r.Set != nil:
		if raw, ok := r.Set["messages"]; ok {
			var msgs []gmMessage
			if err := json.Unmarshal(raw, &msgs); err != nil {
				p.skip(pos, "field_type_mismatch")
			}
			for i := range msgs {
				out = p.message(out, &msgs[i], pos, index)
			}
		}
		if raw, ok := r.Set["directories"]; ok && p.cwd == "" {
			var dirs []string
			_ = json.Unmarshal(raw, &dirs)
			p.resolveCWD(pos, "", dirs)
		}
		if len(r.Set) > 0 && (len(r.Set) > 1 || r.Set["messages"] == nil) {
			p.skip(pos, "noise:$set")
		}
		return out
	case r.RewindTo != nil:
		p.rewinds++
		e := p.base(pos, index, "")
		e.ID = positionID("gm:", pos, index, 0)
		e.Kind, e.Subtype = KindSystem, "rewind"
		p.bound(&e, "the user rewound the conversation: message "+*r.RewindTo+" and everything after it were taken back")
		return append(out, e)
	}
	p.skip(pos, "unknown_type:<none>")
	return out
}

func (p *Gemini) header(out []Event, r *gmRecord, pos Position, index int) []Event {
	if !p.headerSeen {
		p.headerSeen, p.session = true, r.SessionID
		if dir := filepath.Base(filepath.Dir(pos.Path)); r.Kind == "subagent" && dir != "chats" && dir != "." {
			p.parent = dir // chats/<parent session>/<session>.jsonl
		}
	}
	p.resolveCWD(pos, r.ProjectHash, r.Directories)
	e := p.base(pos, index, "")
	e.ID = "gm:meta:" + p.sessionID()
	e.Kind, e.Subtype = KindSystem, SubtypeSessionStart
	if !p.first(e.ID) {
		p.skip(pos, "duplicate")
		return out
	}
	p.bound(&e, joinNonEmpty(" ", "gemini", parenthesize(r.Kind)))
	return append(out, e)
}

// resolveCWD finds the session's cwd: the project's path, looked up once
// per file, else the first workspace folder the records name.
func (p *Gemini) resolveCWD(pos Position, projectHash string, dirs []string) {
	if p.cwd != "" {
		return
	}
	if !p.lookedUp {
		p.cwd, p.lookedUp = p.projectRoot(pos.Path, projectHash), true
	}
	if p.cwd == "" && len(dirs) > 0 && filepath.IsAbs(dirs[0]) {
		p.cwd = dirs[0]
	}
}

// sessionID is the session's id as events carry it: a subagent's is
// "<parent>/agent-<id>".
func (p *Gemini) sessionID() string {
	if p.parent != "" {
		return p.parent + "/agent-" + p.session
	}
	return p.session
}

func (p *Gemini) base(pos Position, index int, ts string) Event {
	e := Event{
		Agent:     AgentGemini,
		SessionID: p.sessionID(),
		CWD:       p.cwd,
		Time:      parseTime(ts),
		Source:    Source{File: pos.File, Path: pos.Path, Offset: pos.Offset, Index: index},
	}
	if p.parent != "" {
		e.ParentSessionID, e.AgentID = p.parent, p.session
	}
	return e
}

// first reports whether id was not emitted before, and remembers it.
func (p *Gemini) first(id string) bool {
	key := textKey(id)
	if _, seen := p.emitted[key]; seen {
		return false
	}
	p.emitted[key] = struct{}{}
	p.order = append(p.order, key)
	if len(p.order) > p.maxEmitted {
		delete(p.emitted, p.order[0])
		p.order = p.order[1:]
	}
	return true
}

func (p *Gemini) message(out []Event, m *gmMessage, pos Position, index int) []Event {
	if m.ID == "" {
		p.skip(pos, "unknown_type:message/<no id>")
		return out
	}
	msgID := "gm:msg:" + m.ID
	switch m.Type {
	case "user":
		return p.userMessage(out, m, msgID, pos, index)
	case "gemini":
		return p.modelMessage(out, m, msgID, pos, index)
	case "info", "warning", "error":
		if !p.first(msgID) {
			p.skip(pos, "duplicate")
			return out
		}
		text, _ := gmContent(m.Content)
		e := p.base(pos, index, m.Timestamp)
		e.ID = msgID
		e.Kind, e.Subtype = KindSystem, m.Type
		if m.Type == "error" {
			e.Kind = KindError
		}
		p.bound(&e, text)
		return append(out, e)
	}
	p.skip(pos, "unknown_type:message/"+m.Type)
	return out
}

func (p *Gemini) userMessage(out []Event, m *gmMessage, id string, pos Position, index int) []Event {
	text, responses := gmContent(m.Content)
	text = strings.TrimSpace(stripHookContext(text))
	switch {
	case text == "" && responses:
		// The tool results sent back to the model: the gemini message's
		// toolCalls hold the same.
		p.skip(pos, "duplicate")
		return out
	case text == "", strings.HasPrefix(text, "<session_context>"), isSaveFile(text):
		if strings.HasPrefix(text, "<session_context>") && p.cwd == "" {
			p.resolveCWD(pos, "", workspaceDirs(text))
		}
		p.skip(pos, "boilerplate")
		return out
	}
	if !p.first(id) {
		p.skip(pos, "duplicate")
		return out
	}
	e := p.base(pos, index, m.Timestamp)
	e.ID, e.Kind = id, KindUserPrompt
	switch {
	case strings.HasPrefix(text, "/") || strings.HasPrefix(text, "?"):
		// Slash commands and help, as Gemini CLI itself tells them.
		e.Subtype, e.Boilerplate = "command", true
	case strings.HasPrefix(text, "<state_snapshot>"):
		// The summary a compression put in place of the history.
		e.Kind = KindCompactionSummary
	}
	p.bound(&e, text)
	return append(out, e)
}

func (p *Gemini) modelMessage(out []Event, m *gmMessage, id string, pos Position, index int) []Event {
	fresh := 0
	for i, th := range m.Thoughts {
		tid := fmt.Sprintf("gm:thought:%s:%d", m.ID, i)
		text := joinNonEmpty(": ", strings.TrimSpace(th.Subject), strings.TrimSpace(th.Description))
		if text == "" || !p.first(tid) {
			continue
		}
		e := p.base(pos, index, m.Timestamp)
		e.ID, e.Kind, e.MessageID = tid, KindReasoning, m.ID
		p.bound(&e, text)
		out = append(out, e)
		fresh++
	}
	text, _ := gmContent(m.Content)
	if strings.TrimSpace(text) != "" && p.first(id) {
		e := p.base(pos, index, m.Timestamp)
		e.ID, e.Kind, e.MessageID = id, KindAssistantMessage, m.ID
		p.bound(&e, text)
		out = append(out, e)
		fresh++
	}
	for i := range m.ToolCalls {
		n := len(out)
		out = p.toolCall(out, &m.ToolCalls[i], m, pos, index)
		fresh += len(out) - n
	}
	switch {
	case fresh > 0:
	case strings.TrimSpace(text) == "" && len(m.Thoughts) == 0 && len(m.ToolCalls) == 0:
		p.skip(pos, "empty_text") // its tool calls come when it is appended again
	default:
		// The same message appended again: token counts, a tool still
		// running.
		p.skip(pos, "duplicate")
	}
	return out
}

func (p *Gemini) toolCall(out []Event, tc *gmToolCall, m *gmMessage, pos Position, index int) []Event {
	if tc.ID == "" {
		p.skip(pos, "unknown_type:toolCall/<no id>")
		return out
	}
	args := decodeToolInput(tc.Args)
	var todos []Todo
	if tc.Name == "write_todos" {
		todos = gmTodos(tc.Args)
	}
	callID := "gm:call:" + tc.ID
	if p.first(callID) {
		e := p.base(pos, index, firstNonEmpty(tc.Timestamp, m.Timestamp))
		e.ID, e.Kind, e.Tool, e.ToolCallID, e.MessageID = callID, KindToolCall, tc.Name, tc.ID, m.ID
		e.FilePaths, e.Command, e.Query, e.URL = args.Paths, args.Command, args.Query, args.URL
		text := compactJSON(tc.Args)
		if todos != nil {
			e.Kind, e.Subtype, e.Todos, text = KindPlanUpdate, SubtypeTodos, todos, ""
		}
		p.bound(&e, text)
		out = append(out, e)
	}
	switch tc.Status {
	case "success", "error", "cancelled":
	default: // scheduled, validating, awaiting_approval, executing
		return out
	}
	resID := "gm:result:" + tc.ID
	if !p.first(resID) {
		return out
	}
	e := p.base(pos, index, firstNonEmpty(tc.Timestamp, m.Timestamp))
	e.ID, e.Kind, e.Tool, e.ToolCallID, e.MessageID = resID, KindToolResult, tc.Name, tc.ID, m.ID
	e.FilePaths, e.Command = args.Paths, args.Command
	output, errText := gmToolOutput(tc.Result)
	if output == "" && errText == "" {
		output = rawText(orNull(tc.ResultDisplay))
	}
	text := joinNonEmpty("\n", output, errText)
	code, known := gmExitCode(text, tc.Name)
	switch {
	case tc.Status == "cancelled":
		e.OK, e.Subtype = boolPtr(false), SubtypeInterrupted
	case tc.Status == "error" || errText != "":
		e.OK = boolPtr(false)
	case known:
		e.OK = boolPtr(code == 0)
	default:
		e.OK = boolPtr(true)
	}
	if known {
		e.ExitCode = intPtr(code)
	}
	p.bound(&e, text)
	return append(out, e)
}

// compactJSON is raw on one line (a legacy file is pretty-printed).
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return rawText(orNull(raw))
	}
	return rawText(b.Bytes())
}

func orNull(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}

// gmContent reads a message's content: a string, a part, or a list of
// parts. It returns the text of its text parts, and whether it holds
// function responses (tool results sent back to the model).
func gmContent(raw json.RawMessage) (text string, responses bool) {
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		return jsonString(raw), false
	case '{':
		raw = append(append([]byte{'['}, raw...), ']')
	case '[':
	default:
		return "", false
	}
	var parts []struct {
		Text             *string         `json:"text"`
		Thought          bool            `json:"thought"`
		FunctionResponse json.RawMessage `json:"functionResponse"`
		InlineData       *struct {
			MimeType string `json:"mimeType"`
			Data     string `json:"data"`
		} `json:"inlineData"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var texts []string
	for _, part := range parts {
		switch {
		case part.FunctionResponse != nil:
			responses = true
		case part.InlineData != nil:
			texts = append(texts, imagePlaceholder(part.InlineData.MimeType, len(part.InlineData.Data)))
		case part.Text != nil && !part.Thought:
			texts = append(texts, *part.Text)
		}
	}
	return strings.Join(texts, ""), responses
}

// stripHookContext cuts every <hook_context>…</hook_context> block out of
// text: what a hook (our SessionStart save file among them) added, which
// Gemini CLI writes into the user's prompt and into tool results.
func stripHookContext(text string) string {
	for {
		i := strings.Index(text, "<hook_context>")
		if i < 0 {
			return text
		}
		j := strings.Index(text[i:], "</hook_context>")
		if j < 0 {
			return text[:i]
		}
		text = text[:i] + text[i+j+len("</hook_context>"):]
	}
}

// gmToolOutput reads a tool call's result: a list of parts whose
// functionResponse.response holds output or error.
func gmToolOutput(raw json.RawMessage) (output, errText string) {
	if len(raw) == 0 || raw[0] != '[' {
		return "", ""
	}
	var parts []struct {
		FunctionResponse *struct {
			Response map[string]json.RawMessage `json:"response"`
		} `json:"functionResponse"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", ""
	}
	var outs, errs []string
	for _, part := range parts {
		switch {
		case part.FunctionResponse != nil:
			if v, ok := part.FunctionResponse.Response["output"]; ok {
				outs = append(outs, rawText(v))
			}
			if v, ok := part.FunctionResponse.Response["error"]; ok {
				errs = append(errs, rawText(v))
			}
		case part.Text != nil:
			outs = append(outs, *part.Text)
		}
	}
	output = strings.Join(outs, "\n")
	output = strings.TrimSpace(stripHookContext(output))
	// Tool output is wrapped as untrusted data since 0.5x.
	if inner, ok := strings.CutPrefix(output, "<untrusted_context>"); ok {
		output = strings.TrimSpace(strings.TrimSuffix(inner, "</untrusted_context>"))
	}
	return output, strings.Join(errs, "\n")
}

// Compiled on first use, not at init: every process that links this package
// (medallionctl, through internal/episode, and its SessionStart hook) would
// otherwise compile both at start, 6-7 % of the hook's whole process.
var exitCodeLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\[?Exit Code: (-?\d+)`) })

// gmExitCode reads a shell command's exit code from its output: an
// "Exit Code: N" line (every run before 0.5x; since then only a failing
// one), else 0 for a shell output that has its "Output:" section.
func gmExitCode(text, tool string) (int, bool) {
	if m := exitCodeLine().FindStringSubmatch(text); m != nil {
		return parseExitCode(m[1])
	}
	if tool == "run_shell_command" && (strings.HasPrefix(text, "Output: ") || strings.Contains(text, "\nOutput: ")) {
		return 0, true
	}
	return 0, false
}

// gmTodos reads write_todos' {todos: [{description, status}]}.
func gmTodos(args json.RawMessage) []Todo {
	var in struct {
		Todos []struct {
			Description string `json:"description"`
			Status      string `json:"status"`
		} `json:"todos"`
	}
	if json.Unmarshal(args, &in) != nil {
		return nil
	}
	todos := []Todo{}
	for _, t := range in.Todos {
		todos = append(todos, Todo{Content: t.Description, Status: t.Status})
	}
	return todos
}

var workspaceDirLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\*\*Workspace Directories:\*\*\n\s*- (/[^\n]*)`)
})

// workspaceDirs reads the workspace folders a <session_context> message
// lists, the last way to a session's cwd.
func workspaceDirs(text string) []string {
	if m := workspaceDirLine().FindStringSubmatch(text); m != nil {
		return []string{strings.TrimSpace(m[1])}
	}
	return nil
}

// GeminiProjectRoot finds the project path of a Gemini CLI chat file
// (<gemini home>/tmp/<project>/chats/…): the path in <project>/.project_root,
// else the entry of <gemini home>/projects.json that names <project>, else
// the one whose SHA-256 is the project folder's name or projectHash (the
// folder names before Gemini CLI 0.29). "" when none says.
func GeminiProjectRoot(path, projectHash string) string {
	dir := filepath.Dir(path)
	for filepath.Base(dir) != "chats" {
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
	project := filepath.Dir(dir)
	if b, err := os.ReadFile(filepath.Join(project, ".project_root")); err == nil {
		if root := strings.TrimSpace(string(b)); filepath.IsAbs(root) {
			return root
		}
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(project)), "projects.json"))
	if err != nil {
		return ""
	}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if json.Unmarshal(b, &reg) != nil {
		return ""
	}
	name := filepath.Base(project)
	for root, slug := range reg.Projects {
		if slug == name {
			return root
		}
	}
	for root := range reg.Projects {
		sum := shasum.Sum256([]byte(root))
		if h := hex.EncodeToString(sum[:]); h == name || h == projectHash {
			return root
		}
	}
	return ""
}
