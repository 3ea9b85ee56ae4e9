package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Sentinel errors a caller can branch on with errors.Is. Every error this
// package returns starts with "llm: " and wraps one of these where it fits.
var (
	// ErrBudget means today's token cap (Budget.DailyTokens) is used up;
	// nothing was sent.
	ErrBudget = errors.New("daily token budget exhausted")
	// ErrUnauthorized means the server answered 401 or 403: the API key is
	// missing, wrong or not allowed to use the model.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnreachable means no HTTP answer came back: connection refused, DNS
	// failure, TLS failure or no answer within Config.Timeout.
	ErrUnreachable = errors.New("endpoint unreachable")
	// ErrReplyTooLarge means the response body was bigger than
	// Config.MaxReplyBytes; it was not read further.
	ErrReplyTooLarge = errors.New("reply too large")
	// ErrEmptyReply means the server answered 200 without any message text
	// (no choices, empty content, or a refusal).
	ErrEmptyReply = errors.New("empty reply")
	// ErrSchemaUnsupported means the server refused the response_format it
	// was sent (usually json_schema). In Structured "auto" the client handles
	// it by falling back to json_object; a caller sees it only when a mode is
	// forced.
	ErrSchemaUnsupported = errors.New("response format not supported")
)

// ConfigError is a bad Config; Field names the field as spelled in Config.
type ConfigError struct {
	Field   string
	Problem string
}

func (e *ConfigError) Error() string {
	return "llm: config: " + e.Field + ": " + e.Problem
}

// maxMessageLen caps the server's error text we keep: some servers echo part
// of the request (that is, transcript content) in their error messages, and
// the text ends up in logs and in `medallionctl status`.
const maxMessageLen = 300

// APIError is a non-2xx HTTP answer from the server, after retries.
type APIError struct {
	StatusCode int    // e.g. 503
	Status     string // e.g. "503 Service Unavailable"
	Message    string // the server's error message, truncated
	Attempts   int    // HTTP attempts made, retries included
	// formatRefused records that the answer reads as a refusal of the
	// response_format we sent (see isFormatRefusal).
	formatRefused bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Status)
	if e.Status == "" {
		fmt.Fprintf(&b, "%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Is lets errors.Is(err, ErrUnauthorized) and errors.Is(err,
// ErrSchemaUnsupported) work on an *APIError.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case ErrSchemaUnsupported:
		return e.formatRefused
	}
	return false
}

// refusalHints are what servers put in the error text when they do not take
// a response_format. strongHints name it: OpenAI ("Invalid parameter:
// 'response_format' of type 'json_schema' is not supported with this model"),
// DeepSeek ("This response_format type is unavailable now"). weakHints are
// generic (vLLM/pydantic "Extra inputs are not permitted", proxies'
// "unsupported", "unknown field") and count only when the message does not
// name another parameter we send — OpenAI's reasoning models answer
// "Unsupported value: 'temperature' …", which json_object would not cure.
var (
	strongHints = []string{"response_format", "response format", "json_schema", "json schema", "structured output"}
	weakHints   = []string{"schema", "not supported", "unsupported", "unavailable", "not permitted", "unknown field", "unrecognized"}
	otherParams = []string{"temperature", "max_tokens", "max_completion_tokens", "context length", "context window", "messages"}
)

// isFormatRefusal reports whether a 400/422 answer refuses the
// response_format. It is a heuristic on purpose: servers have no common error
// code for it, and a false positive costs one json_object request (and the
// json_schema mode for the Client's life, which the Warn log names).
func isFormatRefusal(status int, message string) bool {
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity {
		return false
	}
	m := strings.ToLower(message)
	if containsAny(m, strongHints) {
		return true
	}
	return containsAny(m, weakHints) && !containsAny(m, otherParams)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
