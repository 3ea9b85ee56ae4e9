package api

// LLM endpoints (Tier 1, the optional model curator):
//
//	GET  /v1/status       Status.LLM (absent when the config has no llm block)
//	POST /v1/llm/check    LLMCheck; 404 NoLLMMessage without an llm block
//
// A check sends one tiny structured request to the configured endpoint; it
// may take as long as the llm block's timeout.

// NoLLMMessage is the error of the LLM endpoints when the config has no
// llm block.
const NoLLMMessage = "no llm block in the config: see config.hcl.example"

// LLMStatus is the Tier 1 part of Status. Counts are since the daemon
// started unless they say "today", which is the UTC day the daily cap
// counts (kept across restarts).
type LLMStatus struct {
	// Endpoint is the base URL, without credentials (the key lives in the
	// variable the config names, and is never reported).
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	// Structured is how replies are held to the schema: "json_schema" or
	// "json_object" once known, "auto" until the first call tells.
	Structured string `json:"structured"`
	// Calls counts model calls since the daemon started (repairs
	// included).
	Calls int64 `json:"calls"`
	// TokensToday counts prompt and reply tokens today; DailyTokens is the
	// cap (0: none).
	TokensToday int64 `json:"tokens_today"`
	DailyTokens int64 `json:"daily_tokens"`
	// Passes counts Tier 1 passes that stored a version.
	Passes int64 `json:"passes"`
	// Fallbacks counts passes that failed (transport, invalid answers after
	// the repair, the cap) and left the Tier 0 version standing.
	Fallbacks int64 `json:"fallbacks"`
	// Refused counts operations of valid answers that were dropped
	// (unknown targets or evidence, caps, items a user rejected).
	Refused int64 `json:"refused"`
	// LastError and LastErrorAt (RFC 3339) describe the latest failure;
	// empty when there was none.
	LastError   string `json:"last_error,omitempty"`
	LastErrorAt string `json:"last_error_at,omitempty"`
	// PendingReview counts model-made items awaiting review in every
	// medallion; the server fills it in.
	PendingReview int `json:"pending_review"`
}

// LLMCheck answers POST /v1/llm/check: what works with the configured
// endpoint, each step as a flag and as one sentence for a person.
type LLMCheck struct {
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	// Reachable: the endpoint answered HTTP at all.
	Reachable bool `json:"reachable"`
	// AuthOK: it accepted the key (or needs none).
	AuthOK bool `json:"auth_ok"`
	// JSONSchema: it accepts a strict json_schema response format (when
	// not, structured "auto" falls back to json_object).
	JSONSchema bool `json:"json_schema"`
	// ValidJSON: the model answered JSON that fits the test schema.
	ValidJSON bool `json:"valid_json"`
	// Lines say what was found, one human sentence per line, in order.
	Lines []string `json:"lines"`
	// OK is set by the server: Reachable, AuthOK and ValidJSON all hold,
	// so Tier 1 can run.
	OK bool `json:"ok"`
}
