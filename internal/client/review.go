package client

import (
	"context"
	"net/url"
	"time"

	"github.com/medallionhq/medallion/internal/api"
)

// LLMCheckTimeout bounds an LLM check: it waits on a model, which may take
// as long as the llm block's timeout.
const LLMCheckTimeout = 5 * time.Minute

// ReviewRequest names what Review lists: the model-made items of the
// latest medallions of the scope Nodes/Tags (every medallion when both are
// empty) in State ("" means pending; "approved", "rejected" or "all").
type ReviewRequest struct {
	Nodes, Tags []string
	State       string
}

// Review lists model-made items awaiting (or past) review.
func (c *Client) Review(ctx context.Context, req ReviewRequest) (*api.ReviewResponse, error) {
	q := url.Values{}
	for _, n := range req.Nodes {
		q.Add("node", n)
	}
	for _, t := range req.Tags {
		q.Add("tag", t)
	}
	if req.State != "" {
		q.Set("state", req.State)
	}
	var resp api.ReviewResponse
	if err := c.do(ctx, "GET", "/v1/review", q, nil, &resp); err != nil {
		return nil, err
	}
	if resp.Items == nil {
		resp.Items = []api.ReviewItem{}
	}
	return &resp, nil
}

// ReviewAct approves, rejects or edits one item, or approves or rejects
// every pending item of a scope (see api.ReviewActionRequest). An unknown
// item is an *APIError with code api.CodeNotFound, an item no model wrote
// one with code api.CodeInvalid.
func (c *Client) ReviewAct(ctx context.Context, req api.ReviewActionRequest) (*api.ReviewActionResponse, error) {
	var resp api.ReviewActionResponse
	if err := c.do(ctx, "POST", "/v1/review", nil, req, &resp); err != nil {
		return nil, err
	}
	if resp.Changes == nil {
		resp.Changes = []api.ReviewChange{}
	}
	return &resp, nil
}

// LLMCheck asks the daemon to test its LLM endpoint. Without an llm block
// the answer is an *APIError with code api.CodeNotFound and message
// api.NoLLMMessage.
func (c *Client) LLMCheck(ctx context.Context) (*api.LLMCheck, error) {
	var resp api.LLMCheck
	if err := c.send(ctx, LLMCheckTimeout, "POST", "/v1/llm/check", nil, nil, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// ItemAct forgets, edits, pins or unpins one item of a medallion (see
// api.ItemActionRequest). An unknown item is an *APIError with code
// api.CodeNotFound.
func (c *Client) ItemAct(ctx context.Context, req api.ItemActionRequest) (*api.ItemActionResponse, error) {
	var resp api.ItemActionResponse
	if err := c.do(ctx, "POST", "/v1/item", nil, req, &resp); err != nil {
		return nil, err
	}
	if resp.Changes == nil {
		resp.Changes = []api.ItemChange{}
	}
	return &resp, nil
}

// IDs lists every medallion's id with its scope (for shell completion).
func (c *Client) IDs(ctx context.Context) (*api.IDsResponse, error) {
	var resp api.IDsResponse
	if err := c.do(ctx, "GET", "/v1/ids", nil, nil, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
