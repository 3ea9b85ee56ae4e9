package llm

import (
	"context"
	"time"
)

// Stats is the client's state for `medallionctl status`.
type Stats struct {
	Endpoint   string // base URL, without credentials
	Model      string
	Structured string // as configured: auto, json_schema or json_object
	Mode       string // what the next call uses: json_schema or json_object
	// Calls counts Complete and Check calls that sent something; Failures
	// those that ended in an error; BudgetRefusals the calls ErrBudget kept
	// from sending.
	Calls, Failures, BudgetRefusals int64
	// Requests counts HTTP attempts, retries included.
	Requests int64
	// PromptTokens and CompletionTokens are spent since the client started.
	PromptTokens, CompletionTokens int64
	// TokensToday is read from the ledger (UTC day); -1 when it could not be,
	// with LedgerError saying why.
	TokensToday int
	LedgerError string
	DailyCap    int // 0: no cap
	LastError   string
	LastErrorAt time.Time // zero when there was none
}

// ledgerReadTimeout bounds the ledger read in Stats, which has no caller
// context: a status command must not hang on the store.
const ledgerReadTimeout = 2 * time.Second

// Stats returns a snapshot of the client's state. Safe for concurrent use.
func (c *Client) Stats() Stats {
	s := Stats{
		Endpoint:         c.endpoint,
		Model:            c.model,
		Structured:       c.structured,
		Mode:             c.mode(),
		Calls:            c.calls.Load(),
		Failures:         c.failures.Load(),
		BudgetRefusals:   c.refused.Load(),
		Requests:         c.rt.requests.Load(),
		PromptTokens:     c.promptTokens.Load(),
		CompletionTokens: c.replyTokens.Load(),
		DailyCap:         max(c.budget.DailyTokens, 0),
	}
	ctx, cancel := context.WithTimeout(context.Background(), ledgerReadTimeout)
	defer cancel()
	used, err := c.budget.Ledger.Used(ctx, c.budget.day())
	if err != nil {
		s.TokensToday, s.LedgerError = -1, err.Error()
	} else {
		s.TokensToday = used
	}
	c.mu.Lock()
	s.LastError, s.LastErrorAt = c.lastErr, c.lastErrTime
	c.mu.Unlock()
	return s
}
