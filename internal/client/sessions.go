package client

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/episode"
)

// CheckpointTimeout is the least time Checkpoint waits for an answer,
// whatever Client.Timeout says: the daemon answers once the curator has
// run, which takes far longer than a lookup.
const CheckpointTimeout = 5 * time.Minute

// Sessions lists every session the daemon has ingested, most recently
// active first. A daemon running without ingestion answers with an
// *APIError with code api.CodeNotFound.
func (c *Client) Sessions(ctx context.Context) ([]episode.SessionInfo, error) {
	var resp api.SessionsResponse
	if err := c.do(ctx, "GET", "/v1/sessions", nil, nil, &resp); err != nil {
		return nil, err
	}
	if resp.Sessions == nil {
		resp.Sessions = []episode.SessionInfo{}
	}
	return resp.Sessions, nil
}

// Session returns session id and up to limit of its buffered events with a
// sequence number above after (0: from the start; limit <= 0: the server's
// default page). To read a whole episode, call again with after set to the
// last Seq received until a page comes back short.
func (c *Client) Session(ctx context.Context, id string, after uint64, limit int) (*api.SessionResponse, error) {
	p, err := sessionPath(id)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.FormatUint(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var resp api.SessionResponse
	if err := c.do(ctx, "GET", p, q, nil, &resp); err != nil {
		return nil, err
	}
	if resp.Events == nil {
		resp.Events = []episode.BufferedEvent{}
	}
	return &resp, nil
}

// Checkpoint asks for a manual checkpoint of req.SessionID, or of every
// session with buffered events when it is empty, or of req.Evidence for the
// scope req.Nodes. A session whose checkpoint failed has its Error set in
// the response, one that was not curated its Skipped; an unknown session is
// an *APIError with code api.CodeNotFound, an invalid evidence request one
// with code api.CodeInvalid.
func (c *Client) Checkpoint(ctx context.Context, req api.CheckpointRequest) (*api.CheckpointResponse, error) {
	var resp api.CheckpointResponse
	if err := c.send(ctx, CheckpointTimeout, "POST", "/v1/checkpoint", nil, req, &resp); err != nil {
		return nil, err
	}
	if resp.Checkpoints == nil {
		resp.Checkpoints = []api.CheckpointResult{}
	}
	return &resp, nil
}

// sessionPath returns the URL path of session id, escaping each segment so
// that the "/" of a subagent id ("<parent>/agent-<id>") stays a separator,
// which the server's {id...} pattern takes back as one id.
func sessionPath(id string) (string, error) {
	segs := strings.Split(id, "/")
	for i, s := range segs {
		// The server's router cleans such paths and redirects, so the id
		// could never be reached; say so instead of asking.
		if s == "" || s == "." || s == ".." {
			return "", fmt.Errorf("invalid session id %q: empty, \".\" and \"..\" path segments cannot be requested", id)
		}
		segs[i] = url.PathEscape(s)
	}
	return "/v1/sessions/" + strings.Join(segs, "/"), nil
}
