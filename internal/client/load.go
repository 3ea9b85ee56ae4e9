package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/medallionhq/medallion/internal/api"
)

// Load asks the daemon for the save file of a scope (req.Nodes/req.Tags,
// or req.CWD, which must be absolute), rendered within req.Budget tokens.
// Zero values of Limit, Budget and Format take the server's defaults.
func (c *Client) Load(ctx context.Context, req api.LoadRequest) (*api.LoadResponse, error) {
	q := url.Values{}
	for _, n := range req.Nodes {
		q.Add("node", n)
	}
	for _, t := range req.Tags {
		q.Add("tag", t)
	}
	if req.CWD != "" {
		q.Set("cwd", req.CWD)
	}
	if req.Limit > 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	if req.Budget > 0 {
		q.Set("budget", strconv.Itoa(req.Budget))
	}
	if req.Format != "" {
		q.Set("format", req.Format)
	}
	var resp api.LoadResponse
	if err := c.do(ctx, "GET", "/v1/load", q, nil, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
