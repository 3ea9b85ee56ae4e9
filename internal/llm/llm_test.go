package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// chatBody is what the fake server decodes from a request: the parts of the
// chat completions API the client uses.
type chatBody struct {
	Model       string   `json:"model"`
	Temperature *float64 `json:"temperature"`
	Messages    []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Strict bool            `json:"strict"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	MaxTokens int `json:"max_tokens"`
}

// fakeServer speaks the OpenAI chat completions API through handle and
// records every request.
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	raw    [][]byte
	bodies []chatBody
	auth   []string
}

type handler func(w http.ResponseWriter, r *http.Request, n int, body chatBody)

func newFakeServer(t *testing.T, h handler) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body chatBody
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.raw = append(f.raw, raw)
		f.bodies = append(f.bodies, body)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		n := len(f.bodies)
		f.mu.Unlock()
		h(w, r, n, body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests() []chatBody {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]chatBody(nil), f.bodies...)
}

func (f *fakeServer) rawBodies() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.raw...)
}

// modes counts requests per response_format type.
func (f *fakeServer) modes() map[string]int {
	m := map[string]int{}
	for _, b := range f.requests() {
		m[b.ResponseFormat.Type]++
	}
	return m
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// completion is a chat completion answer; negative token counts leave usage
// out.
func completion(content string, prompt, reply int) map[string]any {
	m := map[string]any{
		"id":      "chatcmpl-1",
		"object":  "chat.completion",
		"created": 1,
		"model":   "test-model",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"finish_reason": "stop",
		}},
	}
	if prompt >= 0 {
		m["usage"] = map[string]any{"prompt_tokens": prompt, "completion_tokens": reply, "total_tokens": prompt + reply}
	}
	return m
}

func apiErrorBody(msg string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}}
}

func answer(content string, prompt, reply int) handler {
	return func(w http.ResponseWriter, _ *http.Request, _ int, _ chatBody) {
		writeJSON(w, http.StatusOK, completion(content, prompt, reply))
	}
}

// refusesSchema rejects json_schema the way OpenAI does for models without
// structured outputs, and answers json_object.
func refusesSchema(content string) handler {
	return func(w http.ResponseWriter, _ *http.Request, _ int, b chatBody) {
		if b.ResponseFormat.Type == "json_schema" {
			writeJSON(w, http.StatusBadRequest, apiErrorBody("Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."))
			return
		}
		writeJSON(w, http.StatusOK, completion(content, 30, 5))
	}
}

const testSchema = `{
  "type": "object",
  "properties": {"summary": {"type": "string"}},
  "required": ["summary"],
  "additionalProperties": false
}`

func testRequest() Request {
	return Request{
		Messages: []Message{
			{Role: "system", Content: "You curate transcripts."},
			{Role: "user", Content: "Summarise: the build failed, then passed."},
		},
		SchemaName: "summary",
		Schema:     json.RawMessage(testSchema),
		MaxTokens:  200,
	}
}

// sleeps records the waits the client asked for instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newTestClient makes a client for srv whose waits are recorded, not slept.
func newTestClient(t *testing.T, srv *fakeServer, edit func(*Config)) (*Client, *sleeps) {
	t.Helper()
	cfg := Config{BaseURL: "http://127.0.0.1:1/v1", Model: "test-model", Timeout: 5 * time.Second}
	if srv != nil {
		cfg.BaseURL = srv.URL + "/v1"
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s := &sleeps{}
	c.rt.sleep = s.sleep
	return c, s
}

func TestCompleteGoodAnswer(t *testing.T) {
	srv := newFakeServer(t, answer(`{"summary":"build fixed"}`, 42, 7))
	c, waits := newTestClient(t, srv, func(cfg *Config) { cfg.APIKey = "sk-test" })

	reply, err := c.Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := Reply{Content: `{"summary":"build fixed"}`, Mode: ModeJSONSchema, PromptTokens: 42, CompletionTokens: 7, FinishReason: "stop", Attempts: 1}
	if reply != want {
		t.Errorf("reply = %+v, want %+v", reply, want)
	}
	if len(waits.waits()) != 0 {
		t.Errorf("waited %v on a good answer", waits.waits())
	}

	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	b := reqs[0]
	if b.Model != "test-model" {
		t.Errorf("model = %q", b.Model)
	}
	if b.Temperature == nil || *b.Temperature != 0 {
		t.Errorf("temperature = %v, want an explicit 0", b.Temperature)
	}
	if b.MaxTokens != 200 {
		t.Errorf("max_tokens = %d, want 200", b.MaxTokens)
	}
	if b.ResponseFormat.Type != "json_schema" || b.ResponseFormat.JSONSchema == nil {
		t.Fatalf("response_format = %+v, want json_schema", b.ResponseFormat)
	}
	js := b.ResponseFormat.JSONSchema
	if js.Name != "summary" || !js.Strict {
		t.Errorf("json_schema name %q strict %v, want summary, true", js.Name, js.Strict)
	}
	var got, wantSchema any
	_ = json.Unmarshal(js.Schema, &got)
	_ = json.Unmarshal([]byte(testSchema), &wantSchema)
	if fmt.Sprint(got) != fmt.Sprint(wantSchema) {
		t.Errorf("schema sent = %s", js.Schema)
	}
	if len(b.Messages) != 2 || b.Messages[0].Content != "You curate transcripts." {
		t.Errorf("messages = %+v, want the request's, unchanged", b.Messages)
	}
	if srv.auth[0] != "Bearer sk-test" {
		t.Errorf("Authorization = %q", srv.auth[0])
	}

	st := c.Stats()
	if st.Calls != 1 || st.Failures != 0 || st.Requests != 1 || st.TokensToday != 49 || st.Mode != ModeJSONSchema {
		t.Errorf("stats = %+v", st)
	}
}

func TestCompleteWithoutKeySendsNoAuthorization(t *testing.T) {
	srv := newFakeServer(t, answer(`{"summary":"x"}`, 1, 1))
	c, _ := newTestClient(t, srv, nil)
	if _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	if srv.auth[0] != "" {
		t.Errorf("Authorization = %q, want none", srv.auth[0])
	}
}

func TestCompleteEstimatesTokensWithoutUsage(t *testing.T) {
	content := `{"summary":"0123456789abcdef"}` // 31 bytes
	srv := newFakeServer(t, answer(content, -1, -1))
	c, _ := newTestClient(t, srv, nil)
	reply, err := c.Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if !reply.Estimated || reply.CompletionTokens != 8 || reply.PromptTokens <= 0 {
		t.Errorf("reply = %+v, want estimated tokens (8 for the reply)", reply)
	}
	if got := c.Stats().TokensToday; got != reply.PromptTokens+reply.CompletionTokens {
		t.Errorf("tokens today = %d, want the estimate %d", got, reply.PromptTokens+reply.CompletionTokens)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		status     int
		retryAfter string
		want       time.Duration
	}{
		{"429 seconds", http.StatusTooManyRequests, "1", time.Second},
		{"503 http date", http.StatusServiceUnavailable, now.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second},
		{"429 capped", http.StatusTooManyRequests, "3600", maxWait},
		{"429 date in the past", http.StatusTooManyRequests, now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, n int, b chatBody) {
				if n == 1 {
					w.Header().Set("Retry-After", tt.retryAfter)
					writeJSON(w, tt.status, apiErrorBody("slow down"))
					return
				}
				answer(`{"summary":"ok"}`, 10, 2)(w, r, n, b)
			})
			c, s := newTestClient(t, srv, nil)
			c.rt.now = func() time.Time { return now }
			reply, err := c.Complete(context.Background(), testRequest())
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if reply.Attempts != 2 || len(srv.requests()) != 2 {
				t.Errorf("attempts = %d, server saw %d, want 2", reply.Attempts, len(srv.requests()))
			}
			if w := s.waits(); len(w) != 1 || w[0] != tt.want {
				t.Errorf("waits = %v, want [%v]", w, tt.want)
			}
		})
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		attempts   int
	}{
		{"default", 0, 1 + DefaultMaxRetries},
		{"two", 2, 3},
		{"none", -1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ chatBody) {
				writeJSON(w, http.StatusInternalServerError, apiErrorBody("model crashed"))
			})
			c, s := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = tt.maxRetries })
			_, err := c.Complete(context.Background(), testRequest())
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			if apiErr.StatusCode != 500 || apiErr.Attempts != tt.attempts {
				t.Errorf("status %d attempts %d, want 500 and %d", apiErr.StatusCode, apiErr.Attempts, tt.attempts)
			}
			if got := len(srv.requests()); got != tt.attempts {
				t.Errorf("server saw %d requests, want %d", got, tt.attempts)
			}
			if got := len(s.waits()); got != tt.attempts-1 {
				t.Errorf("waited %d times, want %d", got, tt.attempts-1)
			}
			for _, w := range s.waits() {
				if w <= 0 || w > maxWait {
					t.Errorf("backoff %v out of (0, %v]", w, maxWait)
				}
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "llm: POST chat/completions: 500 Internal Server Error") || !strings.Contains(msg, "model crashed") {
				t.Errorf("error = %q", msg)
			}
			if tt.attempts > 1 && !strings.Contains(msg, fmt.Sprintf("after %d attempts", tt.attempts)) {
				t.Errorf("error %q does not count the attempts", msg)
			}
			st := c.Stats()
			if st.Failures != 1 || st.Requests != int64(tt.attempts) || st.LastError != msg || st.LastErrorAt.IsZero() {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		body         any
		unauthorized bool
		wantMsg      string
	}{
		{"401", http.StatusUnauthorized, apiErrorBody("Incorrect API key provided"), true, "Incorrect API key"},
		{"403", http.StatusForbidden, map[string]any{"error": "forbidden"}, true, "forbidden"},
		{"404 model", http.StatusNotFound, apiErrorBody("model 'x' not found"), false, "not found"},
		{"400 context", http.StatusBadRequest, map[string]any{"detail": "context length exceeded"}, false, "context length exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ chatBody) {
				writeJSON(w, tt.status, tt.body)
			})
			c, s := newTestClient(t, srv, nil)
			_, err := c.Complete(context.Background(), testRequest())
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, ErrUnauthorized); got != tt.unauthorized {
				t.Errorf("errors.Is(err, ErrUnauthorized) = %v: %v", got, err)
			}
			if errors.Is(err, ErrSchemaUnsupported) {
				t.Errorf("read as a refusal of json_schema: %v", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q lacks the server's message %q", err, tt.wantMsg)
			}
			if n := len(srv.requests()); n != 1 || len(s.waits()) != 0 {
				t.Errorf("server saw %d requests, waits %v: want 1 and none", n, s.waits())
			}
		})
	}
}

func TestTimeoutPerAttempt(t *testing.T) {
	srv := newFakeServer(t, func(_ http.ResponseWriter, r *http.Request, _ int, _ chatBody) {
		<-r.Context().Done()
	})
	c, s := newTestClient(t, srv, func(cfg *Config) {
		cfg.Timeout = 50 * time.Millisecond
		cfg.MaxRetries = 1
	})
	_, err := c.Complete(context.Background(), testRequest())
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if !strings.Contains(err.Error(), "no answer within 50ms") || !strings.Contains(err.Error(), "after 2 attempts") {
		t.Errorf("error = %q", err)
	}
	if len(s.waits()) != 1 {
		t.Errorf("waits = %v, want one retry", s.waits())
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("error is not a net.Error timeout: %v", err)
	}
}

func TestCallerCancelIsNotRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := newFakeServer(t, func(_ http.ResponseWriter, r *http.Request, _ int, _ chatBody) {
		cancel()
		<-r.Context().Done()
	})
	c, s := newTestClient(t, srv, nil)
	_, err := c.Complete(ctx, testRequest())
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want context.Canceled only", err)
	}
	if len(s.waits()) != 0 || len(srv.requests()) != 1 {
		t.Errorf("retried after the caller gave up: waits %v", s.waits())
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, s := newTestClient(t, nil, func(cfg *Config) {
		cfg.BaseURL = "http://" + addr + "/v1"
		cfg.MaxRetries = 2
	})
	_, err = c.Complete(context.Background(), testRequest())
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("error = %q", err)
	}
	if len(s.waits()) != 2 {
		t.Errorf("waits = %v, want 2", s.waits())
	}
}

func TestFallbackToJSONObject(t *testing.T) {
	srv := newFakeServer(t, refusesSchema(`{"summary":"ok"}`))
	c, _ := newTestClient(t, srv, nil)
	ctx := context.Background()

	reply, err := c.Complete(ctx, testRequest())
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	if reply.Mode != ModeJSONObject || reply.Attempts != 2 {
		t.Errorf("first reply mode %q attempts %d, want json_object after 2", reply.Mode, reply.Attempts)
	}
	if m := srv.modes(); m["json_schema"] != 1 || m["json_object"] != 1 {
		t.Errorf("requests per mode after the first call = %v", m)
	}
	obj := srv.requests()[1]
	if obj.ResponseFormat.JSONSchema != nil {
		t.Errorf("json_object request carries a json_schema")
	}
	sys := obj.Messages[0].Content
	if !strings.HasPrefix(sys, "You curate transcripts.\n\n") || !strings.Contains(sys, `"required":["summary"]`) {
		t.Errorf("system message does not carry the schema: %q", sys)
	}
	if len(obj.Messages) != 2 || obj.Messages[1].Content != testRequest().Messages[1].Content {
		t.Errorf("other messages changed: %+v", obj.Messages)
	}

	reply, err = c.Complete(ctx, testRequest())
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	if reply.Mode != ModeJSONObject || reply.Attempts != 1 {
		t.Errorf("second reply mode %q attempts %d, want json_object at once", reply.Mode, reply.Attempts)
	}
	if m := srv.modes(); m["json_schema"] != 1 || m["json_object"] != 2 {
		t.Errorf("requests per mode after the second call = %v, want json_schema 1, json_object 2", m)
	}
	if st := c.Stats(); st.Mode != ModeJSONObject || st.Structured != ModeAuto || st.Failures != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestFallbackIsSafeConcurrently(t *testing.T) {
	srv := newFakeServer(t, refusesSchema(`{"summary":"ok"}`))
	c, _ := newTestClient(t, srv, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			r, err := c.Complete(context.Background(), testRequest())
			if err == nil && r.Mode != ModeJSONObject {
				err = fmt.Errorf("mode %q", r.Mode)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if m := srv.modes(); m["json_object"] != 8 || m["json_schema"] > 8 {
		t.Errorf("requests per mode = %v", m)
	}
}

func TestForcedModes(t *testing.T) {
	t.Run("json_schema refused is an error", func(t *testing.T) {
		srv := newFakeServer(t, refusesSchema(`{"summary":"ok"}`))
		c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Structured = ModeJSONSchema })
		for range 2 {
			_, err := c.Complete(context.Background(), testRequest())
			if !errors.Is(err, ErrSchemaUnsupported) {
				t.Fatalf("err = %v, want ErrSchemaUnsupported", err)
			}
		}
		if m := srv.modes(); m["json_schema"] != 2 || m["json_object"] != 0 {
			t.Errorf("requests per mode = %v", m)
		}
	})
	t.Run("json_object without a system message", func(t *testing.T) {
		srv := newFakeServer(t, answer(`{"summary":"ok"}`, 3, 3))
		c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Structured = ModeJSONObject })
		req := testRequest()
		req.Messages = req.Messages[1:]
		reply, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		b := srv.requests()[0]
		if reply.Mode != ModeJSONObject || b.ResponseFormat.Type != "json_object" {
			t.Errorf("mode %q, sent %q", reply.Mode, b.ResponseFormat.Type)
		}
		if len(b.Messages) != 2 || b.Messages[0].Role != "system" || !strings.Contains(b.Messages[0].Content, "JSON schema") {
			t.Errorf("messages = %+v, want a system message with the schema first", b.Messages)
		}
	})
}

func TestReplyTooLarge(t *testing.T) {
	big := `{"summary":"` + strings.Repeat("x", 4096) + `"}`
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ chatBody) {
				b, _ := json.Marshal(completion(big, 1, 1))
				w.Header().Set("Content-Type", "application/json")
				if chunked {
					// Flushing before writing hides the length.
					w.(http.Flusher).Flush()
				} else {
					w.Header().Set("Content-Length", fmt.Sprint(len(b)))
				}
				_, _ = w.Write(b)
			})
			c, s := newTestClient(t, srv, func(cfg *Config) { cfg.MaxReplyBytes = 1024 })
			_, err := c.Complete(context.Background(), testRequest())
			if !errors.Is(err, ErrReplyTooLarge) {
				t.Fatalf("err = %v, want ErrReplyTooLarge", err)
			}
			if len(srv.requests()) != 1 || len(s.waits()) != 0 {
				t.Errorf("a too-large reply was retried")
			}
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		b, _ := json.Marshal(completion(`{"summary":"ok"}`, 1, 1))
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ chatBody) {
			_, _ = w.Write(b)
		})
		c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxReplyBytes = int64(len(b)) })
		if _, err := c.Complete(context.Background(), testRequest()); err != nil {
			t.Fatalf("a reply of exactly MaxReplyBytes: %v", err)
		}
	})
}

func TestEmptyReplies(t *testing.T) {
	tests := []struct {
		name string
		body map[string]any
	}{
		{"no choices", map[string]any{"choices": []any{}}},
		{"empty content", completion("", 5, 0)},
		{"refusal", map[string]any{"choices": []any{map[string]any{
			"message": map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."},
		}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ chatBody) {
				writeJSON(w, http.StatusOK, tt.body)
			})
			c, _ := newTestClient(t, srv, nil)
			_, err := c.Complete(context.Background(), testRequest())
			if !errors.Is(err, ErrEmptyReply) {
				t.Fatalf("err = %v, want ErrEmptyReply", err)
			}
		})
	}
}

func TestNotAChatCompletion(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ chatBody) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>proxy login</html>")
	})
	c, _ := newTestClient(t, srv, nil)
	_, err := c.Complete(context.Background(), testRequest())
	if err == nil || !strings.Contains(err.Error(), "decode reply") {
		t.Fatalf("err = %v, want a decode error", err)
	}
}

func TestDailyBudget(t *testing.T) {
	now := time.Date(2026, 11, 25, 23, 30, 0, 0, time.FixedZone("UTC-2", -2*3600)) // 2026-11-26 in UTC
	t.Run("cap reached sends nothing", func(t *testing.T) {
		srv := newFakeServer(t, answer(`{"summary":"ok"}`, 10, 10))
		ledger := NewMemoryLedger()
		_ = ledger.Add(context.Background(), "2026-11-26", 1000)
		c, _ := newTestClient(t, srv, func(cfg *Config) {
			cfg.Budget = &Budget{Ledger: ledger, DailyTokens: 1000, Now: func() time.Time { return now }}
		})
		_, err := c.Complete(context.Background(), testRequest())
		if !errors.Is(err, ErrBudget) {
			t.Fatalf("err = %v, want ErrBudget", err)
		}
		if n := len(srv.requests()); n != 0 {
			t.Errorf("server saw %d requests, want 0", n)
		}
		if r := c.Check(context.Background()); r.Reachable || len(srv.requests()) != 0 {
			t.Errorf("Check sent a request over budget: %+v", r)
		}
		st := c.Stats()
		if st.BudgetRefusals != 2 || st.Calls != 0 || st.TokensToday != 1000 || st.DailyCap != 1000 {
			t.Errorf("stats = %+v", st)
		}
	})
	t.Run("spending is recorded and then refused", func(t *testing.T) {
		srv := newFakeServer(t, answer(`{"summary":"ok"}`, 60, 40))
		ledger := NewMemoryLedger()
		c, _ := newTestClient(t, srv, func(cfg *Config) {
			cfg.Budget = &Budget{Ledger: ledger, DailyTokens: 150, Now: func() time.Time { return now }}
		})
		ctx := context.Background()
		for i := range 2 {
			if _, err := c.Complete(ctx, testRequest()); err != nil {
				t.Fatalf("call %d under the cap: %v", i, err)
			}
		}
		if used, _ := ledger.Used(ctx, "2026-11-26"); used != 200 {
			t.Errorf("ledger has %d tokens for the UTC day, want 200", used)
		}
		if _, err := c.Complete(ctx, testRequest()); !errors.Is(err, ErrBudget) {
			t.Errorf("third call: err = %v, want ErrBudget", err)
		}
		if n := len(srv.requests()); n != 2 {
			t.Errorf("server saw %d requests, want 2", n)
		}
	})
	t.Run("unreadable ledger refuses", func(t *testing.T) {
		srv := newFakeServer(t, answer(`{"summary":"ok"}`, 1, 1))
		c, _ := newTestClient(t, srv, func(cfg *Config) {
			cfg.Budget = &Budget{Ledger: failingLedger(), DailyTokens: 10}
		})
		if _, err := c.Complete(context.Background(), testRequest()); err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Errorf("err = %v, want the ledger's error", err)
		}
		if len(srv.requests()) != 0 {
			t.Error("sent a request without knowing the budget")
		}
		if st := c.Stats(); st.TokensToday != -1 || st.LedgerError == "" {
			t.Errorf("stats = %+v", st)
		}
	})
}

// fakeLedger is a Ledger made of funcs.
func TestLedgerWriteFailureKeepsTheReply(t *testing.T) {
	srv := newFakeServer(t, answer(`{"summary":"ok"}`, 5, 5))
	l := failingLedger()
	l.used = func(context.Context, string) (int, error) { return 0, nil }
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Budget = &Budget{Ledger: l, DailyTokens: 100} })
	reply, err := c.Complete(context.Background(), testRequest())
	if err != nil || reply.Content == "" {
		t.Fatalf("reply %+v, err %v: want the reply despite the ledger", reply, err)
	}
	if st := c.Stats(); !strings.Contains(st.LastError, "disk on fire") || st.Failures != 0 {
		t.Errorf("stats = %+v, want the ledger error shown, no failed call", st)
	}
}

type fakeLedger struct {
	used func(ctx context.Context, day string) (int, error)
	add  func(ctx context.Context, day string, tokens int) error
}

var _ Ledger = fakeLedger{}

func (f fakeLedger) Used(ctx context.Context, day string) (int, error) { return f.used(ctx, day) }
func (f fakeLedger) Add(ctx context.Context, day string, n int) error  { return f.add(ctx, day, n) }

func failingLedger() fakeLedger {
	fail := errors.New("disk on fire")
	return fakeLedger{
		used: func(context.Context, string) (int, error) { return 0, fail },
		add:  func(context.Context, string, int) error { return fail },
	}
}

func TestRequestBodiesAreDeterministic(t *testing.T) {
	for _, mode := range []string{ModeJSONSchema, ModeJSONObject} {
		t.Run(mode, func(t *testing.T) {
			srv := newFakeServer(t, answer(`{"summary":"ok"}`, 1, 1))
			ctx := context.Background()
			// Two clients, two calls each: nothing per-client or per-call
			// (ids, clocks) may reach the body.
			for range 2 {
				c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Structured = mode })
				for range 2 {
					if _, err := c.Complete(ctx, testRequest()); err != nil {
						t.Fatal(err)
					}
				}
			}
			raw := srv.rawBodies()
			for i := 1; i < len(raw); i++ {
				if !bytes.Equal(raw[0], raw[i]) {
					t.Errorf("body %d differs:\n%s\n%s", i, raw[0], raw[i])
				}
			}
			if !bytes.HasPrefix(raw[0], []byte(`{"temperature":0,"model":"test-model",`)) {
				t.Errorf("body = %s", raw[0])
			}
		})
	}
}

func TestRetriesResendTheSameBody(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, n int, b chatBody) {
		if n == 1 {
			writeJSON(w, http.StatusBadGateway, apiErrorBody("upstream"))
			return
		}
		answer(`{"summary":"ok"}`, 1, 1)(w, r, n, b)
	})
	c, _ := newTestClient(t, srv, nil)
	if _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	raw := srv.rawBodies()
	if len(raw) != 2 || !bytes.Equal(raw[0], raw[1]) || len(raw[0]) == 0 {
		t.Errorf("retry body differs or is empty:\n%s\n%s", raw[0], raw[1])
	}
}

func TestMaxTokensForReasoningModels(t *testing.T) {
	srv := newFakeServer(t, answer(`{"summary":"ok"}`, 1, 1))
	c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Model = "o3-mini" })
	if _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	raw := string(srv.rawBodies()[0])
	if strings.Contains(raw, `"max_tokens"`) || !strings.Contains(raw, `"max_completion_tokens":200`) {
		t.Errorf("body = %s, want max_completion_tokens only", raw)
	}
}

func TestCheck(t *testing.T) {
	ok := `{"ok":true}`
	tests := []struct {
		name       string
		h          handler
		structured string
		want       CheckResult
		requests   map[string]int
		wantLine   string
	}{
		{
			name:     "good server",
			h:        answer(ok, 30, 4),
			want:     CheckResult{Reachable: true, AuthOK: true, JSONSchema: true, Mode: ModeJSONSchema, ValidJSON: true, Tokens: 34},
			requests: map[string]int{"json_schema": 1},
			wantLine: "takes response_format json_schema",
		},
		{
			name:     "refuses json_schema",
			h:        refusesSchema(ok),
			want:     CheckResult{Reachable: true, AuthOK: true, JSONObject: true, Mode: ModeJSONObject, ValidJSON: true, Tokens: 35},
			requests: map[string]int{"json_schema": 1, "json_object": 1},
			wantLine: "refuses response_format json_schema",
		},
		{
			name:       "refuses json_schema, forced",
			h:          refusesSchema(ok),
			structured: ModeJSONSchema,
			want:       CheckResult{Reachable: true, AuthOK: true},
			requests:   map[string]int{"json_schema": 1},
			wantLine:   `set structured output to "auto" or "json_object"`,
		},
		{
			name: "unauthorized",
			h: func(w http.ResponseWriter, _ *http.Request, _ int, _ chatBody) {
				writeJSON(w, http.StatusUnauthorized, apiErrorBody("invalid api key"))
			},
			want:     CheckResult{Reachable: true},
			requests: map[string]int{"json_schema": 1},
			wantLine: "refused the API key",
		},
		{
			name:     "answers prose",
			h:        answer("Sure! ok is true.", 30, 6),
			want:     CheckResult{Reachable: true, AuthOK: true, JSONSchema: true, Mode: ModeJSONSchema, Tokens: 36},
			requests: map[string]int{"json_schema": 1},
			wantLine: "did not answer valid JSON",
		},
		{
			name: "unknown model",
			h: func(w http.ResponseWriter, _ *http.Request, _ int, _ chatBody) {
				writeJSON(w, http.StatusNotFound, apiErrorBody(`model "test-model" not found, try pulling it first`))
			},
			want:     CheckResult{Reachable: true, AuthOK: true},
			requests: map[string]int{"json_schema": 1},
			wantLine: "is the model name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.h)
			c, _ := newTestClient(t, srv, func(cfg *Config) { cfg.Structured = tt.structured })
			got := c.Check(context.Background())
			tt.want.Endpoint, tt.want.Model = srv.URL+"/v1", "test-model"
			lines := got.Lines
			got.Lines = nil
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("result = %+v\nwant     %+v", got, tt.want)
			}
			got.Lines = lines
			if got.OK() != tt.want.ValidJSON {
				t.Errorf("OK() = %v", got.OK())
			}
			if !strings.Contains(got.String(), tt.wantLine) {
				t.Errorf("lines lack %q:\n%s", tt.wantLine, got)
			}
			if m := srv.modes(); fmt.Sprint(m) != fmt.Sprint(tt.requests) {
				t.Errorf("requests per mode = %v, want %v", m, tt.requests)
			}
			if len(srv.requests()) > 0 && srv.requests()[0].MaxTokens > 256 {
				t.Errorf("check asks for %d tokens", srv.requests()[0].MaxTokens)
			}
			st := c.Stats()
			if st.TokensToday != tt.want.Tokens {
				t.Errorf("tokens today = %d, want the check's %d", st.TokensToday, tt.want.Tokens)
			}
			// A reply, valid JSON or not, is no failure of the call.
			if wantFailures := map[bool]int64{true: 0, false: 1}[got.Mode != ""]; st.Calls != 1 || st.Failures != wantFailures {
				t.Errorf("calls %d failures %d, want 1 and %d", st.Calls, st.Failures, wantFailures)
			}
		})
	}

	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c, _ := newTestClient(t, nil, func(cfg *Config) { cfg.BaseURL = "http://" + addr + "/v1"; cfg.MaxRetries = -1 })
		r := c.Check(context.Background())
		if r.Reachable || r.OK() || !strings.Contains(r.String(), "cannot reach") {
			t.Errorf("result = %+v", r)
		}
	})

	t.Run("refusal is remembered", func(t *testing.T) {
		srv := newFakeServer(t, refusesSchema(`{"summary":"ok"}`))
		c, _ := newTestClient(t, srv, nil)
		c.Check(context.Background())
		if _, err := c.Complete(context.Background(), testRequest()); err != nil {
			t.Fatal(err)
		}
		if m := srv.modes(); m["json_schema"] != 1 || m["json_object"] != 2 {
			t.Errorf("requests per mode = %v", m)
		}
	})
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"empty url", Config{Model: "m"}, "BaseURL"},
		{"bad url", Config{BaseURL: "http://[::1", Model: "m"}, "BaseURL"},
		{"no scheme", Config{BaseURL: "localhost:11434/v1", Model: "m"}, "BaseURL"},
		{"ftp", Config{BaseURL: "ftp://host/v1", Model: "m"}, "BaseURL"},
		{"query", Config{BaseURL: "http://host/v1?key=x", Model: "m"}, "BaseURL"},
		{"no model", Config{BaseURL: "http://host/v1", Model: " "}, "Model"},
		{"mode", Config{BaseURL: "http://host/v1", Model: "m", Structured: "xml"}, "Structured"},
		{"timeout", Config{BaseURL: "http://host/v1", Model: "m", Timeout: -time.Second}, "Timeout"},
		{"reply bytes", Config{BaseURL: "http://host/v1", Model: "m", MaxReplyBytes: -1}, "MaxReplyBytes"},
		{"ledger", Config{BaseURL: "http://host/v1", Model: "m", Budget: &Budget{DailyTokens: 5}}, "Budget.Ledger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Fatalf("err = %v, want a ConfigError on %s", err, tt.field)
			}
			if !strings.HasPrefix(err.Error(), "llm: config: "+tt.field+": ") {
				t.Errorf("error = %q", err)
			}
		})
	}
}

func TestStatsHidesCredentials(t *testing.T) {
	c, err := New(Config{BaseURL: "https://user:s3cret@llm.example.com/v1/", Model: "m", APIKey: "sk-hidden"})
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	if st.Endpoint != "https://llm.example.com/v1" {
		t.Errorf("endpoint = %q", st.Endpoint)
	}
	if s := fmt.Sprintf("%+v", st); strings.Contains(s, "s3cret") || strings.Contains(s, "sk-hidden") {
		t.Errorf("stats leak a credential: %s", s)
	}
	if st.Structured != ModeAuto || st.Mode != ModeJSONSchema || st.TokensToday != 0 || st.DailyCap != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestRequestValidation(t *testing.T) {
	c, _ := newTestClient(t, nil, nil)
	tests := []struct {
		name string
		edit func(*Request)
	}{
		{"no messages", func(r *Request) { r.Messages = nil }},
		{"bad role", func(r *Request) { r.Messages[0].Role = "tool" }},
		{"schema name", func(r *Request) { r.SchemaName = "has space" }},
		{"no schema", func(r *Request) { r.Schema = nil }},
		{"schema not an object", func(r *Request) { r.Schema = json.RawMessage(`[1]`) }},
		{"schema invalid", func(r *Request) { r.Schema = json.RawMessage(`{"type":`) }},
		{"negative max tokens", func(r *Request) { r.MaxTokens = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRequest()
			tt.edit(&r)
			if _, err := c.Complete(context.Background(), r); err == nil || !strings.HasPrefix(err.Error(), "llm: request: ") {
				t.Errorf("err = %v", err)
			}
		})
	}
	if st := c.Stats(); st.Requests != 0 {
		t.Errorf("invalid requests were sent: %d", st.Requests)
	}
}

func TestWithTemperatureZero(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"model":"m"}`, `{"temperature":0,"model":"m"}`},
		{`{}`, `{"temperature":0}`},
		{`{"temperature":0.5,"model":"m"}`, `{"temperature":0.5,"model":"m"}`},
		{`{"model":"say \"temperature\": hot"}`, `{"temperature":0,"model":"say \"temperature\": hot"}`},
		{``, ``},
	}
	for _, tt := range tests {
		if got := string(withTemperatureZero([]byte(tt.in))); got != tt.want {
			t.Errorf("withTemperatureZero(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestIsFormatRefusal(t *testing.T) {
	tests := []struct {
		status int
		msg    string
		want   bool
	}{
		{400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", true},
		{400, "This response_format type is unavailable now", true},
		{422, "Extra inputs are not permitted", true},
		{400, "This model's maximum context length is 8192 tokens", false},
		{500, "json_schema crashed", false},
		{401, "response_format", false},
		{400, "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.", false},
		{400, "unknown field: guided_json", true},
	}
	for _, tt := range tests {
		if got := isFormatRefusal(tt.status, tt.msg); got != tt.want {
			t.Errorf("isFormatRefusal(%d, %q) = %v", tt.status, tt.msg, got)
		}
	}
}

func TestMemoryLedgerConcurrent(t *testing.T) {
	l := NewMemoryLedger()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { _ = l.Add(context.Background(), "d", 2) })
	}
	wg.Wait()
	if n, _ := l.Used(context.Background(), "d"); n != 100 {
		t.Errorf("used = %d, want 100", n)
	}
	var zero MemoryLedger
	if err := zero.Add(context.Background(), "d", 1); err != nil {
		t.Error(err)
	}
}
