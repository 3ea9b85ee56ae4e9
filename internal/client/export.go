package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/medallionhq/medallion/internal/api"
)

// Export writes every version of every medallion to w as JSON Lines (GET
// /v1/export). The stream has no size cap and no overall timeout beyond
// ctx's: a large store takes as long as it takes. A stream the daemon cut
// short is an error, never a short export.
func (c *Client) Export(ctx context.Context, w io.Writer) error {
	if err := c.stream(ctx, "GET", "/v1/export", nil, w); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// Import sends JSON Lines as Export writes them (POST /v1/import) and
// returns what the daemon stored.
func (c *Client) Import(ctx context.Context, r io.Reader) (*api.ImportResponse, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read the import: %w", err)
	}
	if body == nil {
		body = []byte{}
	}
	var out bytes.Buffer
	if err := c.stream(ctx, "POST", "/v1/import", body, &out); err != nil {
		return nil, err
	}
	var resp api.ImportResponse
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("decode import response: %w", err)
	}
	return &resp, nil
}

// stream sends a request (its body whole) and copies a 2xx answer to w as
// it arrives: no timeout of its own and no cap on the answer. A non-2xx
// answer is an *APIError.
func (c *Client) stream(ctx context.Context, method, path string, body []byte, w io.Writer) error {
	conn, err := connect(ctx, c.socket)
	if err != nil {
		return transportError(ctx, ctx, c.socket, method, path, 0, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, conn.interrupt)
	defer stop()
	contentType := ""
	if body != nil {
		contentType = "application/x-ndjson"
	}
	if err := writeRequest(conn, method, path, contentType, c.userAgent, body); err != nil {
		return transportError(ctx, ctx, c.socket, method, path, 0, err)
	}
	r := bufio.NewReader(conn)
	h, err := readHead(r)
	if err != nil {
		return transportError(ctx, ctx, c.socket, method, path, 0, err)
	}
	c.checkVersion(h.version)
	if h.status < 200 || h.status > 299 {
		resp, err := readBody(r, h, method)
		if err != nil {
			return fmt.Errorf("read %s %s response: %w", method, path, err)
		}
		return decodeAPIError(h.status, resp)
	}
	if err := copyBody(w, r, h); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the stream broke off: %w", err)
	}
	return nil
}

// readBody reads an error answer's body, capped.
func readBody(r *bufio.Reader, h *head, method string) ([]byte, error) {
	if !h.hasBody(method) {
		return nil, nil
	}
	w := &capWriter{left: maxResponseBytes}
	if err := copyBody(w, r, h); err != nil && !errors.Is(err, errCapped) {
		return nil, err
	}
	return w.buf.Bytes(), nil
}
