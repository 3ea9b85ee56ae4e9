// Package llm is Medallion's client for an OpenAI-compatible chat completions
// endpoint (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, DeepSeek, …), used by
// the optional Tier 1 curator.
//
// It asks for structured output — a strict JSON schema where the server takes
// one, plain JSON mode where it does not — at temperature 0, with request
// bodies that are byte-identical for identical requests so that recorded
// replies can be replayed. It adds what go-openai leaves to its users: a
// timeout per attempt, retries with backoff that honour Retry-After, a cap on
// the reply size, a daily token cap backed by a Ledger, and Stats for
// `medallionctl status`.
//
// The package sends nothing anywhere but the configured endpoint, and logs
// prompt and reply text only at Trace.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	openai "github.com/sashabaranov/go-openai"
)

// Structured output modes.
const (
	// ModeAuto tries json_schema and falls back to json_object, for the life
	// of the Client, when the server refuses it.
	ModeAuto = "auto"
	// ModeJSONSchema sends response_format {type: json_schema, strict: true}:
	// the server constrains decoding to the schema.
	ModeJSONSchema = "json_schema"
	// ModeJSONObject sends response_format {type: json_object} and puts the
	// schema in the system message: the server guarantees JSON, the shape is
	// up to the model.
	ModeJSONObject = "json_object"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout       = 120 * time.Second
	DefaultMaxReplyBytes = 256 << 10
	DefaultMaxRetries    = 3
	// maxWait caps one wait between attempts, Retry-After included, so that a
	// server asking for an hour does not stall curation silently.
	maxWait = 30 * time.Second
)

// Config of the endpoint.
type Config struct {
	// BaseURL is the API root, e.g. http://127.0.0.1:11434/v1; the client
	// POSTs to BaseURL + "/chat/completions".
	BaseURL string
	Model   string
	// APIKey is the key itself (the daemon reads it from the environment
	// variable the user names). Empty sends no Authorization header, as
	// local servers expect.
	APIKey string
	// Timeout bounds one HTTP attempt, reading the reply included; 0 means
	// DefaultTimeout. Retries each get their own.
	Timeout time.Duration
	// Structured is ModeAuto (also for ""), ModeJSONSchema or ModeJSONObject.
	Structured string
	// MaxReplyBytes caps a response body; a bigger one is an error
	// (ErrReplyTooLarge) and is never read whole. 0 means
	// DefaultMaxReplyBytes.
	MaxReplyBytes int64
	// MaxRetries is how many times an attempt is repeated after a 429, a 5xx
	// or a transport error; 0 means DefaultMaxRetries, a negative value none.
	// Other 4xx answers are never retried.
	MaxRetries int
	// HTTPClient is optional; its Transport (or http.DefaultTransport) does
	// the HTTP under the client's retry layer. The client is copied, not
	// modified; its own Timeout, if any, bounds a whole call, retries
	// included.
	HTTPClient *http.Client
	// Budget is an optional daily token cap. Without one, spending is still
	// counted in memory for Stats.
	Budget *Budget
	// Logger; nil discards.
	Logger hclog.Logger
}

// Message is one chat message; Role is "system", "user" or "assistant".
type Message struct {
	Role    string
	Content string
}

// Request is one structured completion.
type Request struct {
	Messages []Message
	// SchemaName names the schema for the server (letters, digits, _ and -,
	// at most 64, as OpenAI requires).
	SchemaName string
	// Schema is a strict JSON schema: an object whose properties are all
	// required, with additionalProperties false.
	Schema json.RawMessage
	// MaxTokens caps the reply; 0 leaves it to the server.
	MaxTokens int
}

// Reply is the model's answer.
type Reply struct {
	// Content is the model's message text, verbatim; the caller validates it.
	Content string
	// Mode is what the server accepted: ModeJSONSchema or ModeJSONObject.
	Mode string
	// PromptTokens and CompletionTokens come from the server's usage, or are
	// estimated (bytes/4) when it sends none; Estimated says which.
	PromptTokens     int
	CompletionTokens int
	Estimated        bool
	// FinishReason is the server's; "length" means the reply was cut at
	// MaxTokens and is most likely not valid JSON.
	FinishReason string
	// Attempts is the number of HTTP requests the reply took, retries and a
	// json_schema refusal included.
	Attempts int
}

// Client talks to one endpoint. It is safe for concurrent use.
type Client struct {
	api        *openai.Client
	rt         *retryTransport
	endpoint   string // BaseURL without credentials
	model      string
	structured string
	budget     *Budget
	log        hclog.Logger

	// fallback is set once the server refused json_schema (in ModeAuto):
	// later calls go straight to json_object instead of paying a refused
	// request each time.
	fallback atomic.Bool

	calls, failures, refused  atomic.Int64
	promptTokens, replyTokens atomic.Int64

	mu          sync.Mutex
	lastErr     string
	lastErrTime time.Time
}

// New validates cfg and returns a Client. It makes no request.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, &ConfigError{Field: "Model", Problem: "is empty"}
	}
	if cfg.Timeout < 0 {
		return nil, &ConfigError{Field: "Timeout", Problem: fmt.Sprintf("%s is negative", cfg.Timeout)}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch cfg.Structured {
	case "":
		cfg.Structured = ModeAuto
	case ModeAuto, ModeJSONSchema, ModeJSONObject:
	default:
		return nil, &ConfigError{Field: "Structured", Problem: fmt.Sprintf("%q is not one of auto, json_schema, json_object", cfg.Structured)}
	}
	if cfg.MaxReplyBytes < 0 {
		return nil, &ConfigError{Field: "MaxReplyBytes", Problem: fmt.Sprintf("%d is negative", cfg.MaxReplyBytes)}
	}
	if cfg.MaxReplyBytes == 0 {
		cfg.MaxReplyBytes = DefaultMaxReplyBytes
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	budget := cfg.Budget
	if budget == nil {
		budget = &Budget{Ledger: NewMemoryLedger()}
	} else if budget.Ledger == nil {
		return nil, &ConfigError{Field: "Budget.Ledger", Problem: "is nil (use NewMemoryLedger without a store)"}
	}
	log := cfg.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}

	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		copied := *cfg.HTTPClient
		hc = &copied
	}
	inner := hc.Transport
	if inner == nil {
		inner = http.DefaultTransport.(*http.Transport).Clone()
	}
	rt := &retryTransport{
		base:       inner,
		timeout:    cfg.Timeout,
		maxRetries: cfg.MaxRetries,
		maxBody:    cfg.MaxReplyBytes,
		maxWait:    maxWait,
		log:        log,
		sleep:      sleepContext,
		now:        time.Now,
	}
	hc.Transport = rt

	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = base.String()
	oc.HTTPClient = hc
	return &Client{
		api:        openai.NewClientWithConfig(oc),
		rt:         rt,
		endpoint:   redactURL(base),
		model:      model,
		structured: cfg.Structured,
		budget:     budget,
		log:        log,
	}, nil
}

func parseBaseURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, &ConfigError{Field: "BaseURL", Problem: "is empty"}
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Error quotes the URL, which may carry credentials.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &ConfigError{Field: "BaseURL", Problem: "not a URL: " + err.Error()}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &ConfigError{Field: "BaseURL", Problem: fmt.Sprintf("scheme %q is not http or https", u.Scheme)}
	}
	if u.Host == "" {
		return nil, &ConfigError{Field: "BaseURL", Problem: "has no host"}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		// go-openai appends the path to the base URL as a string; a query
		// would end up in the middle.
		return nil, &ConfigError{Field: "BaseURL", Problem: "must not have a query or fragment"}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// redactURL is the base URL as it may be shown: without user info.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

var schemaNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (r *Request) validate() error {
	if len(r.Messages) == 0 {
		return errors.New("llm: request: no messages")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleUser, openai.ChatMessageRoleAssistant:
		default:
			return fmt.Errorf("llm: request: message %d: role %q is not system, user or assistant", i, m.Role)
		}
	}
	if !schemaNameRE.MatchString(r.SchemaName) {
		return fmt.Errorf("llm: request: schema name %q: want 1-64 letters, digits, _ or -", r.SchemaName)
	}
	s := bytes.TrimSpace(r.Schema)
	if len(s) == 0 || s[0] != '{' || !json.Valid(s) {
		return errors.New("llm: request: schema is not a JSON object")
	}
	if r.MaxTokens < 0 {
		return fmt.Errorf("llm: request: max tokens %d is negative", r.MaxTokens)
	}
	return nil
}

// mode is the structured mode the next call starts with.
func (c *Client) mode() string {
	switch {
	case c.structured == ModeJSONObject:
		return ModeJSONObject
	case c.structured == ModeAuto && c.fallback.Load():
		return ModeJSONObject
	}
	return ModeJSONSchema
}

// Complete sends req and returns the model's reply. In ModeAuto a refusal of
// json_schema is answered by one more request in json_object, and remembered.
// With a Budget whose cap is reached it returns ErrBudget without sending.
func (c *Client) Complete(ctx context.Context, req Request) (Reply, error) {
	if err := req.validate(); err != nil {
		return Reply{}, err
	}
	if err := c.checkBudget(ctx); err != nil {
		return Reply{}, err
	}
	c.calls.Add(1)
	mode := c.mode()
	reply, err := c.send(ctx, req, mode)
	attempts := reply.Attempts
	if err != nil && mode == ModeJSONSchema && c.structured == ModeAuto && errors.Is(err, ErrSchemaUnsupported) {
		c.fallBack(err)
		reply, err = c.send(ctx, req, ModeJSONObject)
		reply.Attempts += attempts
	}
	if err != nil {
		c.recordFailure(err)
		return Reply{}, err
	}
	c.spend(ctx, reply)
	return reply, nil
}

func (c *Client) fallBack(cause error) {
	if !c.fallback.Swap(true) {
		// The server's message is not transcript content (it is truncated
		// and about our request's shape), so Warn is fine.
		c.log.Warn("llm server refuses json_schema, using json_object from now on", "model", c.model, "error", cause)
	}
}

// checkBudget refuses a call when today's spending has reached the cap. A
// ledger that cannot be read refuses too: the cap is the user's cost guard.
func (c *Client) checkBudget(ctx context.Context) error {
	b := c.budget
	if b.DailyTokens <= 0 {
		return nil
	}
	day := b.day()
	used, err := b.Ledger.Used(ctx, day)
	if err != nil {
		err = fmt.Errorf("llm: read token ledger for %s: %w", day, err)
		c.recordFailure(err)
		return err
	}
	if used >= b.DailyTokens {
		c.refused.Add(1)
		return fmt.Errorf("llm: %w: %d of %d tokens used on %s (UTC)", ErrBudget, used, b.DailyTokens, day)
	}
	return nil
}

// spend records a reply's tokens. A ledger write failure does not fail the
// call: the tokens are spent either way, and dropping the reply would waste
// them.
func (c *Client) spend(ctx context.Context, r Reply) {
	n := r.PromptTokens + r.CompletionTokens
	c.promptTokens.Add(int64(r.PromptTokens))
	c.replyTokens.Add(int64(r.CompletionTokens))
	day := c.budget.day()
	if err := c.budget.Ledger.Add(ctx, day, n); err != nil {
		err = fmt.Errorf("llm: record %d tokens for %s: %w", n, day, err)
		c.log.Error("llm token ledger write failed", "error", err)
		c.setLastError(err)
	}
}

func (c *Client) recordFailure(err error) {
	c.failures.Add(1)
	c.setLastError(err)
}

func (c *Client) setLastError(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = err.Error()
	c.lastErrTime = time.Now()
}

// schemaInstruction tells the model the shape when the server cannot enforce
// it (json_object). It is derived from the schema alone, so the bodies stay
// deterministic.
func schemaInstruction(schema json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, schema); err != nil {
		b.Reset()
		b.Write(bytes.TrimSpace(schema))
	}
	return "Reply with one JSON object and nothing else. It must match this JSON schema (every property present, no others): " + b.String()
}

// chatRequest builds the go-openai request for mode; promptBytes is the text
// sent, for estimating tokens.
func (c *Client) chatRequest(req Request, mode string) (cr openai.ChatCompletionRequest, promptBytes int) {
	msgs := make([]openai.ChatCompletionMessage, 0, len(req.Messages)+1)
	for _, m := range req.Messages {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
	}
	cr = openai.ChatCompletionRequest{Model: c.model}
	switch mode {
	case ModeJSONObject:
		line := schemaInstruction(req.Schema)
		i := 0
		for i < len(msgs) && msgs[i].Role != openai.ChatMessageRoleSystem {
			i++
		}
		if i < len(msgs) {
			if msgs[i].Content == "" {
				msgs[i].Content = line
			} else {
				msgs[i].Content += "\n\n" + line
			}
		} else {
			msgs = append([]openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: line}}, msgs...)
		}
		cr.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	default:
		cr.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:   req.SchemaName,
				Schema: json.RawMessage(bytes.TrimSpace(req.Schema)),
				Strict: true,
			},
		}
		promptBytes += len(req.Schema)
	}
	cr.Messages = msgs
	for _, m := range msgs {
		promptBytes += len(m.Content)
	}
	if req.MaxTokens > 0 {
		// max_tokens is what every OpenAI-compatible server takes; OpenAI's
		// reasoning models (which go-openai recognises by name) take only
		// max_completion_tokens.
		//lint:ignore SA1019 max_tokens is deprecated by OpenAI only; local servers still need it.
		cr.MaxTokens = req.MaxTokens
		if errors.Is(openai.NewReasoningValidator().Validate(cr), openai.ErrReasoningModelMaxTokensDeprecated) {
			//lint:ignore SA1019 see above.
			cr.MaxTokens = 0
			cr.MaxCompletionTokens = req.MaxTokens
		}
	}
	return cr, promptBytes
}

// send makes one structured request in mode (with the transport's retries)
// and turns the answer into a Reply or an error. It leaves stats and the
// budget to its callers.
func (c *Client) send(ctx context.Context, req Request, mode string) (Reply, error) {
	cr, promptBytes := c.chatRequest(req, mode)
	tr := &trace{}
	start := time.Now()
	if c.log.IsTrace() {
		for i, m := range cr.Messages {
			c.log.Trace("llm request message", "index", i, "role", m.Role, "content", m.Content)
		}
	}
	resp, err := c.api.CreateChatCompletion(withTrace(ctx, tr), cr)
	if err != nil {
		err = c.convertError(ctx, err, tr.attempts)
		c.log.Debug("llm request failed", "mode", mode, "attempts", tr.attempts, "duration", time.Since(start), "error", err)
		return Reply{Attempts: tr.attempts}, err
	}
	if len(resp.Choices) == 0 {
		return Reply{Attempts: tr.attempts}, fmt.Errorf("llm: POST chat/completions: %w: no choices", ErrEmptyReply)
	}
	ch := resp.Choices[0]
	r := Reply{
		Content:          ch.Message.Content,
		Mode:             mode,
		PromptTokens:     resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens,
		FinishReason:     string(ch.FinishReason),
		Attempts:         tr.attempts,
	}
	if r.PromptTokens <= 0 {
		r.PromptTokens, r.Estimated = estimateTokens(promptBytes), true
	}
	if r.CompletionTokens <= 0 {
		r.CompletionTokens, r.Estimated = estimateTokens(len(r.Content)), true
	}
	if strings.TrimSpace(r.Content) == "" {
		why := "empty content"
		if ch.Message.Refusal != "" {
			why = "the model refused: " + truncate(ch.Message.Refusal, maxMessageLen)
		} else if r.FinishReason != "" {
			why += ", finish reason " + r.FinishReason
		}
		// The server may still have spent tokens on it (reasoning models
		// think into another field): count them.
		c.spend(ctx, Reply{PromptTokens: r.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens})
		return Reply{Attempts: tr.attempts}, fmt.Errorf("llm: POST chat/completions: %w: %s", ErrEmptyReply, why)
	}
	c.log.Debug("llm reply", "mode", mode, "attempts", tr.attempts, "duration", time.Since(start),
		"prompt_tokens", r.PromptTokens, "completion_tokens", r.CompletionTokens, "estimated", r.Estimated,
		"finish_reason", r.FinishReason, "bytes", len(r.Content))
	if r.FinishReason == string(openai.FinishReasonLength) {
		c.log.Warn("llm reply cut at max tokens", "max_tokens", req.MaxTokens, "completion_tokens", r.CompletionTokens)
	}
	c.log.Trace("llm reply content", "content", r.Content)
	return r, nil
}

// estimateTokens is the usual bytes/4, rounded up, for servers that report
// no usage; the budget needs some number.
func estimateTokens(n int) int { return (n + 3) / 4 }

// convertError maps what go-openai and the HTTP stack return onto this
// package's errors.
func (c *Client) convertError(ctx context.Context, err error, attempts int) error {
	const op = "llm: POST chat/completions"
	var oe *openai.APIError
	var re *openai.RequestError
	switch {
	// RequestError first: when go-openai cannot parse an error body it may
	// wrap an empty APIError in one.
	case errors.As(err, &re):
		return fmt.Errorf("%s: %w", op, newAPIError(re.HTTPStatusCode, re.HTTPStatus, bodyMessage(re.Body), attempts))
	case errors.As(err, &oe):
		msg := oe.Message
		if oe.Param != nil && *oe.Param != "" && !strings.Contains(msg, *oe.Param) {
			msg += " (param " + *oe.Param + ")"
		}
		return fmt.Errorf("%s: %w", op, newAPIError(oe.HTTPStatusCode, oe.HTTPStatus, msg, attempts))
	case errors.Is(err, ErrReplyTooLarge):
		return fmt.Errorf("%s: %w", op, unwrapURLError(err))
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", op, ctx.Err())
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		inner := ue.Err
		if attempts > 1 {
			return fmt.Errorf("%s: %w after %d attempts: %w", op, ErrUnreachable, attempts, inner)
		}
		return fmt.Errorf("%s: %w: %w", op, ErrUnreachable, inner)
	}
	// A 2xx body that is not a chat completion (a proxy's HTML page, say).
	return fmt.Errorf("%s: decode reply: %w", op, err)
}

func newAPIError(code int, status, msg string, attempts int) *APIError {
	if status == "" {
		status = fmt.Sprintf("%d %s", code, http.StatusText(code))
	}
	return &APIError{
		StatusCode:    code,
		Status:        status,
		Message:       truncate(msg, maxMessageLen),
		Attempts:      attempts,
		formatRefused: isFormatRefusal(code, msg),
	}
}

// bodyMessage finds the message in an error body go-openai could not parse:
// {"error": "text"} (Ollama, some proxies), {"detail": …} (FastAPI servers),
// {"message": …} (vLLM), or the body itself.
func bodyMessage(body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) == nil {
		for _, k := range []string{"error", "message", "detail"} {
			switch v := m[k].(type) {
			case string:
				return v
			case map[string]any:
				if s, ok := v["message"].(string); ok {
					return s
				}
			case nil:
			default:
				if b, err := json.Marshal(v); err == nil {
					return string(b)
				}
			}
		}
	}
	return string(body)
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
