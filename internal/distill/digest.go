package distill

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/transcript"
)

// Entry is one line of a session digest: what happened, in words a model
// reads quickly, and the events it stands for (a tool call and its result
// share one entry). Entries are built from redacted events only.
type Entry struct {
	SessionID string   `json:"session_id"`
	EventIDs  []string `json:"event_ids"`
	Text      string   `json:"text"`
}

// Limits on what one entry keeps of an event, in bytes. The user's words
// and the agent's conclusions carry the save file; tool output is mostly
// noise except when it failed, so it is cut hardest (the shape measured in
// ../shared/eval/README.md: prompts to 4,000, agent messages to 3,000,
// failed results to 1,200, other results to 300).
const (
	maxPromptText  = 4000
	maxAgentText   = 3000
	maxFailureText = 1200
	maxResultText  = 300
	maxHarnessText = 200
	maxCallText    = 300
)

// Digest turns a session's events into entries in order. It reads the
// redacted events, so no secret the redactor caught reaches a model. A
// tool result joins the entry of its call when that call is in events.
func Digest(events []transcript.Event) []Entry {
	var out []Entry
	calls := map[string]int{} // tool call id → index in out
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case transcript.KindUserPrompt:
			switch {
			case e.Boilerplate:
				// Harness text in the user's role (hook feedback, command
				// wrappers): flagged, kept short, never read as the user.
				out = add(out, e, "[harness text, not the user: "+e.Subtype+"] "+cut(e.Text, maxHarnessText))
			case e.Subtype == transcript.SubtypeQueued:
				out = add(out, e, "user (typed while the agent worked): "+cut(e.Text, maxPromptText))
			default:
				out = add(out, e, "user: "+cut(e.Text, maxPromptText))
			}
		case transcript.KindAssistantMessage:
			out = add(out, e, "agent: "+cut(e.Text, maxAgentText))
		case transcript.KindCompactionSummary:
			out = add(out, e, "summary of the conversation so far (written by the agent's harness): "+cut(e.Text, maxAgentText))
		case transcript.KindPlanUpdate:
			out = add(out, e, "plan: "+plan(e))
		case transcript.KindError:
			out = add(out, e, "error: "+cut(e.Text, maxFailureText))
		case transcript.KindSystem:
			switch e.Subtype {
			case transcript.SubtypeInterrupted:
				out = add(out, e, "the user interrupted the agent")
			case transcript.SubtypeRejected:
				out = add(out, e, "the user rejected a tool call: "+cut(e.Text, maxFailureText))
			case transcript.SubtypeAPIError, transcript.SubtypeHookError:
				out = add(out, e, e.Subtype+": "+cut(e.Text, maxFailureText))
			case "artefact":
				// Posted evidence (the seed's artefacts), already one
				// bounded line per key.
				out = add(out, e, cut(e.Text, maxFailureText))
			}
		case transcript.KindToolCall:
			if e.ToolCallID != "" {
				calls[e.ToolCallID] = len(out)
			}
			out = add(out, e, "call "+call(e))
		case transcript.KindToolResult:
			text := result(e)
			if j, ok := calls[e.ToolCallID]; ok && e.ToolCallID != "" {
				delete(calls, e.ToolCallID)
				out[j].EventIDs = append(out[j].EventIDs, e.ID)
				out[j].Text += " → " + oneLine(text)
				continue
			}
			out = add(out, e, "result of "+orDash(e.Tool)+" → "+text)
		}
	}
	return out
}

func add(out []Entry, e *transcript.Event, text string) []Entry {
	return append(out, Entry{SessionID: e.SessionID, EventIDs: []string{e.ID}, Text: oneLine(text)})
}

// call names a tool call by what it acts on.
func call(e *transcript.Event) string {
	var b strings.Builder
	b.WriteString(orDash(e.Tool))
	switch {
	case e.Command != "":
		b.WriteString(" `" + cut(e.Command, maxCallText) + "`")
	case len(e.FilePaths) > 0:
		b.WriteString(" " + cut(strings.Join(e.FilePaths, ", "), maxCallText))
	case e.Query != "":
		b.WriteString(" " + strconv.Quote(cut(e.Query, maxCallText)))
	case e.URL != "":
		b.WriteString(" " + e.URL)
	case e.Text != "":
		b.WriteString(": " + cut(e.Text, maxCallText))
	}
	return b.String()
}

// result says how a tool call ended: failures with their message, other
// results briefly.
func result(e *transcript.Event) string {
	failed := e.OK != nil && !*e.OK
	status := "ok"
	if failed {
		status = "FAILED"
	}
	if e.ExitCode != nil {
		status += " (exit " + strconv.Itoa(*e.ExitCode) + ")"
	}
	limit := maxResultText
	switch {
	case failed:
		limit = maxFailureText
	case e.Command == "":
		// A read, search or edit that worked says nothing the call does
		// not: the file content is in the repository.
		return status
	}
	if t := strings.TrimSpace(e.Text); t != "" {
		return status + ": " + cut(t, limit)
	}
	return status
}

func plan(e *transcript.Event) string {
	if len(e.Todos) == 0 {
		return cut(e.Text, maxAgentText)
	}
	parts := make([]string, len(e.Todos))
	for i, t := range e.Todos {
		mark := "[ ]"
		switch t.Status {
		case "completed":
			mark = "[x]"
		case "in_progress":
			mark = "[>]"
		}
		parts[i] = mark + " " + cut(t.Content, maxCallText)
	}
	return strings.Join(parts, "; ")
}

func orDash(s string) string {
	if s == "" {
		return "tool"
	}
	return s
}

// cut folds s onto one line, keeps its head within n bytes (on a rune
// boundary) and says how much it left out.
func cut(s string, n int) string {
	s = oneLine(strings.TrimSpace(s))
	if len(s) <= n {
		return s
	}
	head := runeHead(s, n)
	return head + " […" + strconv.Itoa(len(s)-len(head)) + " bytes cut]"
}

// runeHead is the longest prefix of s within n bytes that ends on a rune
// boundary.
func runeHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// oneLine folds newlines so each entry is one line of the prompt, and an
// event's text cannot forge the next entry's handle at a line start.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.NewReplacer("\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ").Replace(s)), " ")
}

// Tokens estimates the tokens of s: 4 bytes a token, the rule the render
// package uses for the load budget.
func Tokens(s string) int { return (len(s) + 3) / 4 }

// Tokens estimates what e costs in a prompt: its text, its handle and the
// line break.
func (e Entry) Tokens() int { return Tokens(e.Text) + 4 }

// TotalTokens estimates what entries cost in a prompt.
func TotalTokens(entries []Entry) int {
	n := 0
	for _, e := range entries {
		n += e.Tokens()
	}
	return n
}

// Chunks splits entries into runs that fit maxTokens each (estimated),
// at entry boundaries, so a long backlog becomes several calls in order,
// never one giant prompt. The split depends only on the entries. An entry
// larger than maxTokens alone is its own chunk (its text is bounded).
func Chunks(entries []Entry, maxTokens int) [][]Entry {
	var out [][]Entry
	start, used := 0, 0
	for i, e := range entries {
		n := e.Tokens()
		if i > start && used+n > maxTokens {
			out = append(out, entries[start:i])
			start, used = i, 0
		}
		used += n
	}
	if start < len(entries) {
		out = append(out, entries[start:])
	}
	return out
}
