package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/medallionhq/medallion/internal/api"
)

// llmCheckWriteTimeout replaces the server's write timeout for POST
// /v1/llm/check: the check waits on a model, which may take as long as the
// llm block's timeout (two minutes by default) and then some retries.
const llmCheckWriteTimeout = 5 * time.Minute

// llmStatus is Status.LLM: nil without an llm block, else Config.LLM's
// figures with the pending review count filled in.
func (s *Server) llmStatus(ctx context.Context) (*api.LLMStatus, error) {
	if s.cfg.LLM == nil {
		return nil, nil
	}
	st := s.cfg.LLM()
	if st == nil {
		return nil, nil
	}
	c := *st
	c.Endpoint = withoutCredentials(c.Endpoint)
	n, err := s.countPending(ctx)
	if err != nil {
		return nil, fmt.Errorf("count pending review items: %w", err)
	}
	if n >= 0 {
		c.PendingReview = n
	}
	return &c, nil
}

// llmCheck answers POST /v1/llm/check.
func (s *Server) llmCheck(r *http.Request) (any, error) {
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	if s.cfg.LLMCheck == nil {
		return nil, &apiError{http.StatusNotFound, api.CodeNotFound, api.NoLLMMessage}
	}
	res, err := s.cfg.LLMCheck(r.Context())
	if err != nil {
		return nil, fmt.Errorf("llm check: %w", err)
	}
	res.OK = res.Reachable && res.AuthOK && res.ValidJSON
	res.Endpoint = withoutCredentials(res.Endpoint)
	if res.Lines == nil {
		res.Lines = []string{}
	}
	return res, nil
}

// withoutCredentials drops any user:password part of an endpoint URL. The
// config refuses one in base_url already; this keeps a key out of every
// answer even if a caller passed one.
func withoutCredentials(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.User == nil {
		return endpoint
	}
	u.User = nil
	return u.String()
}
