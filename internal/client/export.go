package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/version"
)

// Export writes every version of every medallion to w as JSON Lines (GET
// /v1/export). The stream has no size cap and no overall timeout beyond
// ctx's: a large store takes as long as it takes. A stream the daemon cut
// short is an error, never a short export.
func (c *Client) Export(ctx context.Context, w io.Writer) error {
	resp, err := c.stream(ctx, http.MethodGet, "/v1/export", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("export: the stream broke off: %w", err)
	}
	return nil
}

// Import sends JSON Lines as Export writes them (POST /v1/import) and
// returns what the daemon stored.
func (c *Client) Import(ctx context.Context, r io.Reader) (*api.ImportResponse, error) {
	resp, err := c.stream(ctx, http.MethodPost, "/v1/import", r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out api.ImportResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(&out); err != nil {
		return nil, fmt.Errorf("decode import response: %w", err)
	}
	return &out, nil
}

// stream sends a request whose body or answer is a stream: no timeout of
// its own and no cap on the answer. A non-2xx answer is an *APIError.
func (c *Client) stream(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://medalliond"+path, body)
	if err != nil {
		return nil, fmt.Errorf("build %s %s request: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/x-ndjson, application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/x-ndjson")
	}
	req.Header.Set("User-Agent", "medallion-client/"+version.String())
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, ctx, method, path, 0, err)
	}
	c.checkVersion(resp.Header.Get(api.VersionHeader))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		if err != nil {
			return nil, fmt.Errorf("read %s %s response: %w", method, path, err)
		}
		return nil, decodeAPIError(resp.StatusCode, data)
	}
	return resp, nil
}
