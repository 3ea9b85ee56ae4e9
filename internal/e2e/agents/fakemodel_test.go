package agents

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// fakeModel is the scripted model the real agent CLIs talk to, in the three
// wire protocols they speak:
//
//	Anthropic Messages   POST /v1/messages              (Claude Code; SSE when "stream")
//	OpenAI Responses     POST /v1/responses             (Codex CLI; SSE when "stream")
//	Gemini               POST /v1beta/models/M:generateContent, :streamGenerateContent?alt=sse
//
// The script is decided from the request alone: when the request offers the
// agent's shell tool and the conversation holds no tool result yet, the
// answer is one call of that tool running command; otherwise it is the text
// final. Side requests (titles, routing, next-speaker checks) get a plain or
// schema-shaped answer. Every request body is kept, so a test can look for
// what reached the model.
type fakeModel struct {
	command string // the shell command the tool call runs
	final   string // the last answer of a turn

	mu     sync.Mutex
	bodies []string
	n      int // answers given: makes each answer's ids unique, as a real API's are
}

// Requests returns the bodies received so far, in order.
func (m *fakeModel) Requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.bodies)
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.bodies = append(m.bodies, string(raw))
	m.n++
	id := fmt.Sprintf("fake%04d", m.n)
	m.mu.Unlock()
	if r.Method != http.MethodPost {
		// Model lists and probes: an empty list is enough for all three.
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, "fake model: body is not JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	stream, _ := body["stream"].(bool)
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 42})
	case strings.HasSuffix(p, "/messages"):
		m.anthropic(w, body, stream, id)
	case strings.HasSuffix(p, "/responses"):
		m.responses(w, body, stream, id)
	case strings.Contains(p, ":generateContent"):
		writeJSON(w, m.gemini(body))
	case strings.Contains(p, ":streamGenerateContent"):
		sse(w).event("", m.gemini(body))
	case strings.Contains(p, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 42})
	default:
		http.Error(w, "fake model: no such endpoint "+p, http.StatusNotFound)
	}
}

// anthropic answers a Messages request: a Bash tool_use, or text.
func (m *fakeModel) anthropic(w http.ResponseWriter, body map[string]any, stream bool, id string) {
	var block map[string]any
	stop := "end_turn"
	switch {
	case hasTool(body, "Bash") && !hasKey(body["messages"], "type", "tool_result"):
		block = map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": "Bash",
			"input": map[string]any{"command": m.command, "description": "scripted command"}}
		stop = "tool_use"
	case body["tools"] != nil:
		block = map[string]any{"type": "text", "text": m.final}
	default:
		block = map[string]any{"type": "text", "text": "Fake title"}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := map[string]any{"id": "msg_" + id, "type": "message", "role": "assistant", "model": body["model"],
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !stream {
		writeJSON(w, msg)
		return
	}
	s := sse(w)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	s.event("message_start", map[string]any{"type": "message_start", "message": start})
	var first, delta map[string]any
	if block["type"] == "text" {
		first = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": block["text"]}
	} else {
		input, _ := json.Marshal(block["input"])
		first = map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
	}
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": first})
	s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// responses answers an OpenAI Responses request: a call of Codex's shell
// tool (exec_command in 0.169, shell or shell_command before), or a message.
func (m *fakeModel) responses(w http.ResponseWriter, body map[string]any, stream bool, id string) {
	item := map[string]any{"type": "message", "id": "msg_" + id, "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": m.final, "annotations": []any{}}}}
	if !hasKey(body["input"], "type", "function_call_output") {
		args := map[string]map[string]any{
			"exec_command":  {"cmd": m.command},
			"shell_command": {"command": m.command},
			"shell":         {"command": []string{"bash", "-lc", m.command}},
		}
		for _, name := range []string{"exec_command", "shell_command", "shell"} {
			if hasTool(body, name) {
				a, _ := json.Marshal(args[name])
				item = map[string]any{"type": "function_call", "id": "fc_" + id, "status": "completed",
					"call_id": "call_" + id, "name": name, "arguments": string(a)}
				break
			}
		}
	}
	resp := map[string]any{"id": "resp_" + id, "object": "response", "created_at": 1, "status": "completed",
		"model": body["model"], "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}
	if !stream {
		writeJSON(w, resp)
		return
	}
	s := sse(w)
	seq := 0
	ev := func(typ string, d map[string]any) {
		d["type"], d["sequence_number"] = typ, seq
		seq++
		s.event(typ, d)
	}
	created := map[string]any{}
	for k, v := range resp {
		created[k] = v
	}
	created["status"], created["output"] = "in_progress", []any{}
	ev("response.created", map[string]any{"response": created})
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": item})
	if item["type"] == "message" {
		ev("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": m.final})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": resp})
}

// gemini answers a generateContent request: a run_shell_command call, the
// final text, or for a side call (no tools: routing, next-speaker check)
// JSON shaped by the response schema it asks for.
func (m *fakeModel) gemini(body map[string]any) map[string]any {
	var part map[string]any
	tools := geminiTools(body)
	switch {
	case slices.Contains(tools, "run_shell_command") && !hasKey(body["contents"], "functionResponse", ""):
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
			"args": map[string]any{"command": m.command, "description": "scripted command"}}}
	case len(tools) > 0:
		part = map[string]any{"text": m.final}
	default:
		part = map[string]any{"text": geminiSideAnswer(body)}
	}
	return map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "fake-model",
	}
}

func geminiTools(body map[string]any) []string {
	var names []string
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		decls, _ := asMap(t)["functionDeclarations"].([]any)
		for _, d := range decls {
			if n, ok := asMap(d)["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// geminiSideAnswer fills the JSON schema a side call asks for: the router
// wants a complexity_score (1–100), the next-speaker check "user".
func geminiSideAnswer(body map[string]any) string {
	cfg := asMap(body["generationConfig"])
	schema := asMap(cfg["responseJsonSchema"])
	if len(schema) == 0 {
		schema = asMap(cfg["responseSchema"])
	}
	if len(schema) == 0 && cfg["responseMimeType"] != "application/json" {
		return "fake side answer"
	}
	out := map[string]any{}
	for k, v := range asMap(schema["properties"]) {
		p := asMap(v)
		typ, _ := p["type"].(string)
		switch enum, _ := p["enum"].([]any); {
		case len(enum) > 0:
			out[k] = enum[0]
		case k == "next_speaker":
			out[k] = "user"
		case strings.EqualFold(typ, "string"):
			out[k] = "fake"
		case strings.EqualFold(typ, "boolean"):
			out[k] = false
		case strings.EqualFold(typ, "number"), strings.EqualFold(typ, "integer"):
			out[k] = 1
			if min, ok := p["minimum"]; ok {
				out[k] = min
			}
		default:
			out[k] = nil
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// hasTool: the request offers a tool of that name (Anthropic and Responses
// list tools as {name} or {type: function, name}).
func hasTool(body map[string]any, name string) bool {
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		if asMap(t)["name"] == name {
			return true
		}
	}
	return false
}

// hasKey: somewhere in v is an object whose key k holds val (or, with val
// empty, that has the key k at all).
func hasKey(v any, k, val string) bool {
	switch x := v.(type) {
	case map[string]any:
		if got, ok := x[k]; ok && (val == "" || got == val) {
			return true
		}
		for _, e := range x {
			if hasKey(e, k, val) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasKey(e, k, val) {
				return true
			}
		}
	}
	return false
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sseWriter writes server-sent events, flushing each.
type sseWriter struct{ w http.ResponseWriter }

func sse(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sseWriter{w}
}

func (s sseWriter) event(name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}
