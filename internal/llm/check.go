package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// CheckResult says what works with the endpoint, for `medallionctl llm
// check`. Lines holds one human sentence per finding, in order.
type CheckResult struct {
	Endpoint string
	Model    string
	// Reachable: an HTTP answer came back.
	Reachable bool
	// AuthOK: the server did not answer 401/403.
	AuthOK bool
	// JSONSchema: the server took response_format json_schema. False with
	// JSONObject true means only json_object works ("auto" falls back).
	JSONSchema bool
	JSONObject bool
	// Mode is the structured mode that produced the reply.
	Mode string
	// ValidJSON: the model's reply was a JSON object with the asked-for
	// property.
	ValidJSON bool
	// Tokens spent by the check (prompt + completion).
	Tokens int
	Lines  []string
}

// OK reports whether the endpoint is usable for curation.
func (r CheckResult) OK() bool { return r.Reachable && r.AuthOK && r.ValidJSON }

// String is the lines, one per line.
func (r CheckResult) String() string { return strings.Join(r.Lines, "\n") }

func (r *CheckResult) say(format string, args ...any) {
	r.Lines = append(r.Lines, fmt.Sprintf(format, args...))
}

// checkRequest is tiny on purpose: a check costs a few dozen tokens of the
// daily budget. The token cap leaves room for models that think first.
var checkRequest = Request{
	Messages: []Message{
		{Role: "system", Content: "You are a connectivity check. Answer with JSON only."},
		{Role: "user", Content: `Answer {"ok": true}.`},
	},
	SchemaName: "medallion_check",
	Schema:     json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`),
	MaxTokens:  128,
}

// Check sends one tiny structured request (two when json_schema is refused
// in "auto") and reports what works: reachability, authentication,
// json_schema support and whether the model answered valid JSON. It goes
// through the Budget like any call, and a refusal of json_schema it sees is
// remembered as Complete would remember it.
func (c *Client) Check(ctx context.Context) CheckResult {
	r := CheckResult{Endpoint: c.endpoint, Model: c.model}
	if err := c.checkBudget(ctx); err != nil {
		r.say("nothing sent: %s", brief(err))
		return r
	}
	c.calls.Add(1)
	modes := []string{ModeJSONSchema}
	if c.structured == ModeJSONObject {
		modes = []string{ModeJSONObject}
		r.say("json_schema not tested: structured output is set to json_object")
	}
	for i := 0; i < len(modes); i++ {
		mode := modes[i]
		reply, err := c.send(ctx, checkRequest, mode)
		r.Tokens += reply.PromptTokens + reply.CompletionTokens
		if err == nil {
			c.spend(ctx, reply)
			r.Reachable, r.AuthOK, r.Mode = true, true, mode
			r.say("%s answered for model %s", c.endpoint, c.model)
			r.say("authentication accepted")
			if mode == ModeJSONSchema {
				r.JSONSchema = true
				r.say("the server takes response_format json_schema (strict structured output)")
			} else {
				r.JSONObject = true
				r.say("the server takes response_format json_object (JSON, shape not enforced)")
			}
			r.checkReply(reply)
			return r
		}
		if !(errors.Is(err, ErrSchemaUnsupported) && mode == ModeJSONSchema && c.structured == ModeAuto) {
			c.recordFailure(err) // a refusal "auto" recovers from is no failure
		}
		var apiErr *APIError
		switch {
		case errors.Is(err, ErrUnreachable):
			r.say("cannot reach %s: %s", c.endpoint, brief(err))
			return r
		case ctx.Err() != nil:
			r.say("check interrupted: %v", ctx.Err())
			return r
		case errors.Is(err, ErrUnauthorized):
			r.Reachable = true
			r.say("%s answered but refused the API key: %s (is the key's environment variable set, and the key valid for model %s?)", c.endpoint, brief(err), c.model)
			return r
		case errors.Is(err, ErrSchemaUnsupported) && mode == ModeJSONSchema:
			r.Reachable, r.AuthOK = true, true
			r.say("the server refuses response_format json_schema: %s", brief(err))
			if c.structured == ModeAuto {
				c.fallBack(err)
				r.say("trying json_object, which \"auto\" falls back to")
				modes = append(modes, ModeJSONObject)
			} else {
				r.say("set structured output to \"auto\" or \"json_object\" to use this server")
			}
		case errors.As(err, &apiErr):
			r.Reachable, r.AuthOK = true, true
			r.say("%s answered %v", c.endpoint, apiErr)
			if apiErr.StatusCode == http.StatusNotFound {
				r.say("is the model name %q right, and is the model installed on the server?", c.model)
			}
			return r
		default:
			r.Reachable, r.AuthOK = true, true
			r.say("the server answered but the reply is unusable: %s", brief(err))
			return r
		}
	}
	return r
}

// checkReply judges the model's answer to checkRequest.
func (r *CheckResult) checkReply(reply Reply) {
	var v map[string]json.RawMessage
	if err := json.Unmarshal([]byte(strings.TrimSpace(reply.Content)), &v); err != nil {
		if reply.FinishReason == "length" {
			r.say("the model's reply was cut at %d tokens before the JSON ended", checkRequest.MaxTokens)
		} else {
			r.say("the model did not answer valid JSON: %v", err)
		}
		return
	}
	var ok bool
	if raw, found := v["ok"]; !found || json.Unmarshal(raw, &ok) != nil {
		r.say("the model answered JSON without the boolean property the schema asks for")
		return
	}
	r.ValidJSON = true
	r.say("the model answered valid JSON matching the schema (%d tokens)", r.Tokens)
}

// brief is an error for a sentence that already names the endpoint.
func brief(err error) string {
	s := strings.TrimPrefix(err.Error(), "llm: POST chat/completions: ")
	return strings.TrimPrefix(s, "llm: ")
}
