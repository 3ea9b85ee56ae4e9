// Package llmtest is a fake model for tests: an OpenAI chat completions
// handler that answers with scripted replies and keeps what it was sent.
// Tests serve it with httptest and point the llm client (or the daemon's
// llm block) at it.
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
)

// Model answers the n-th request with Replies[n] (the last one repeats),
// reporting PromptTokens and CompletionTokens as its usage.
type Model struct {
	Replies                        []string
	PromptTokens, CompletionTokens int

	mu     sync.Mutex
	bodies []string
}

// ServeHTTP implements http.Handler.
func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.bodies = append(m.bodies, string(body))
	reply := m.Replies[min(len(m.bodies), len(m.Replies))-1]
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "c", "object": "chat.completion", "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": reply}}},
		"usage": map[string]any{"prompt_tokens": m.PromptTokens, "completion_tokens": m.CompletionTokens,
			"total_tokens": m.PromptTokens + m.CompletionTokens},
	})
}

// Requests returns the bodies of the requests so far, in order.
func (m *Model) Requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.bodies)
}
