package daemon

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/curate"
	"github.com/medallionhq/medallion/internal/distill"
	"github.com/medallionhq/medallion/internal/llm"
	"github.com/medallionhq/medallion/internal/redact"
	"github.com/medallionhq/medallion/internal/store"
)

// storeLedger keeps the LLM's daily token count in the store, so the
// daily cap holds across restarts.
type storeLedger struct{ st *store.Badger }

func ledgerKey(day string) string { return "llm/tokens/" + day }

// Used only reads, so status and the cap's check work on a full disk
// (store read-only) too.
func (l storeLedger) Used(ctx context.Context, day string) (int, error) {
	n, err := l.st.AuxInt(ctx, ledgerKey(day))
	return int(n), err
}

// Add is a write: on a full disk it fails with store.ErrDiskFull, which
// the llm client logs. Tier 1 writes its backlog before each model call,
// so a disk that stays full stops the calls, and with them these writes.
func (l storeLedger) Add(ctx context.Context, day string, tokens int) error {
	_, err := l.st.AddAuxInt(ctx, ledgerKey(day), int64(tokens))
	return err
}

// tier1 builds the model curator from the llm block; nil, nil without
// one. The API key is read from the environment variable the block names:
// a named variable that is unset or empty is an error, since the user
// meant to send a key.
func newTier1(cfg *config.LLM, st *store.Badger, logger hclog.Logger) (*curate.Tier1, *llm.Client, error) {
	if cfg == nil {
		return nil, nil, nil
	}
	var key string
	if cfg.APIKeyEnv != "" {
		key = os.Getenv(cfg.APIKeyEnv)
		if key == "" {
			return nil, nil, fmt.Errorf("llm: api_key_env names %s, which is not set in the daemon's environment (for a service, set it in the unit's environment)", cfg.APIKeyEnv)
		}
	}
	client, err := llm.New(llm.Config{
		BaseURL:    cfg.BaseURL,
		Model:      cfg.Model,
		APIKey:     key,
		Timeout:    cfg.Timeout,
		Structured: cfg.Structured,
		Budget:     &llm.Budget{Ledger: storeLedger{st}, DailyTokens: cfg.DailyTokens},
		Logger:     logger.Named("llm"),
	})
	if err != nil {
		return nil, nil, err
	}
	t := &curate.Tier1{
		Distiller: &distill.Distiller{
			LLM:            client,
			Model:          cfg.Model,
			MaxInputTokens: cfg.MaxInputTokens,
			Redact:         redact.String,
		},
		Aux:    st,
		Logger: logger.Named("tier1"),
	}
	return t, client, nil
}

// reviewMode is the load's review mode: the llm block's, "auto" without
// one (there are then no model items to mark).
func reviewMode(cfg *config.LLM) string {
	if cfg == nil {
		return "auto"
	}
	return cfg.Review
}

// llmStatus reports the model client and Tier 1 for status; nil without
// an llm block, so status shows no LLM section.
func (in *ingestion) llmStatus() func() *api.LLMStatus {
	if in.llm == nil {
		return nil
	}
	return func() *api.LLMStatus {
		ls, ts := in.llm.Stats(), in.tier1.Stats()
		st := &api.LLMStatus{
			Endpoint: ls.Endpoint, Model: ls.Model, Structured: ls.Mode,
			Calls: ls.Calls, TokensToday: int64(ls.TokensToday), DailyTokens: int64(ls.DailyCap),
			Passes: ts.Passes, Fallbacks: ts.Fallbacks, Refused: ts.Refused,
		}
		if ls.Structured != llm.ModeAuto {
			st.Structured = ls.Structured
		}
		// The latest failure of either: a transport error is the client's,
		// an invalid answer or a store conflict is Tier 1's.
		last, at := ls.LastError, ls.LastErrorAt
		if ts.LastErrorAt.After(at) {
			last, at = ts.LastError, ts.LastErrorAt
		}
		if last != "" {
			st.LastError, st.LastErrorAt = last, at.UTC().Format(time.RFC3339)
		}
		return st
	}
}

// llmCheck backs `medallionctl llm check`; nil without an llm block.
func (in *ingestion) llmCheck() func(context.Context) (api.LLMCheck, error) {
	if in.llm == nil {
		return nil
	}
	return func(ctx context.Context) (api.LLMCheck, error) {
		r := in.llm.Check(ctx)
		return api.LLMCheck{Endpoint: r.Endpoint, Model: r.Model, Reachable: r.Reachable, AuthOK: r.AuthOK,
			JSONSchema: r.JSONSchema, ValidJSON: r.ValidJSON, Lines: r.Lines}, nil
	}
}
