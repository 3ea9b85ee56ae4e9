package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/medallionhq/medallion/internal/api"
)

// Search ranks the items of every version of every medallion (of the
// scope req.Nodes, when given) against req.Query.
func (c *Client) Search(ctx context.Context, req api.SearchRequest) (*api.SearchResponse, error) {
	q := url.Values{"q": {req.Query}}
	for _, n := range req.Nodes {
		q.Add("node", n)
	}
	if req.Limit > 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	var resp api.SearchResponse
	if err := c.do(ctx, "GET", "/v1/search", q, nil, &resp); err != nil {
		return nil, err
	}
	if resp.Results == nil {
		resp.Results = []api.SearchResult{}
	}
	return &resp, nil
}

// Item reads one item ("MEDALLION_ID:REF") with its evidence and history;
// req.Version 0 reads it in the latest version.
func (c *Client) Item(ctx context.Context, req api.ItemRequest) (*api.Item, error) {
	q := url.Values{"item": {req.Item}}
	if req.Version > 0 {
		q.Set("version", strconv.Itoa(req.Version))
	}
	var resp api.Item
	if err := c.do(ctx, "GET", "/v1/item", q, nil, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Record adds an agent's decision, rule, open question or dead end to the
// active medallion of a scope, pending review.
func (c *Client) Record(ctx context.Context, req api.RecordRequest) (*api.RecordResponse, error) {
	var resp api.RecordResponse
	if err := c.do(ctx, "POST", "/v1/record", nil, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
