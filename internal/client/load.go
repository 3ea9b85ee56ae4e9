package client

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/hookcache"
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

// HookText asks the daemon for the text the SessionStart hook adds to a
// session starting in cwd (absolute), within budget tokens: GET /v1/hook,
// the load the hook makes without the JSON around its text. "" means no
// medallion exists for cwd. (Statuses are numbers here: the client does
// not link net/http, see transport.go.)
//
// It asks on the hook's own socket (hookcache.Socket, which the daemon
// answers faster: internal/server's ServeHook), and on the API's when
// nothing answers there: a daemon older than that socket, or one on an
// OS that does not serve it.
//
// Its query and its fallback are functions of their own so that their
// locals are off the stack during the exchange: the hook's goroutine has
// a 4 KiB stack, and a call that goes deeper makes the runtime copy it to
// a larger one (issue 12).
func (c *Client) HookText(ctx context.Context, cwd string, budget int) (string, error) {
	q := hookQuery(cwd, budget)
	resp, err := c.callAt(ctx, hookcache.Socket(c.socket), 0, "GET", "/v1/hook", q, nil)
	if errors.Is(err, ErrUnreachable) {
		resp, err = c.call(ctx, 0, "GET", "/v1/hook", q, nil)
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == 404 {
		// A daemon older than /v1/hook, still running after an upgrade.
		return c.loadText(ctx, cwd, budget)
	}
	if err != nil || resp.status == 204 {
		return "", err
	}
	return string(resp.body), nil
}

// hookQuery is the query of HookText's request. Not inlined: the map
// would be HookText's local.
//
//go:noinline
func hookQuery(cwd string, budget int) url.Values {
	return url.Values{"cwd": {cwd}, "budget": {strconv.Itoa(budget)}}
}

// loadText is HookText through Load, for a daemon without /v1/hook.
func (c *Client) loadText(ctx context.Context, cwd string, budget int) (string, error) {
	lr, err := c.Load(ctx, api.LoadRequest{CWD: cwd, Budget: budget})
	if err != nil || len(lr.Medallions) == 0 {
		return "", err
	}
	return lr.Text, nil
}
