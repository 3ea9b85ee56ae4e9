// Package client is the typed Go client of medalliond's local API, used by
// medallionctl (and anything else that talks to the daemon) so that no caller
// hand-builds URLs or decodes error bodies.
//
// Requests are HTTP/1.1 + JSON over the daemon's Unix socket, one per
// connection, spoken by transport.go rather than net/http; the request and
// response types are those of package api, shared with the server.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/version"
)

// DefaultTimeout bounds each request when the caller's context allows more:
// the daemon answers from a local store, so anything slower means it is stuck.
const DefaultTimeout = 10 * time.Second

// maxResponseBytes caps how much of a response body is read; medallions are
// small and a runaway body must not exhaust the CLI's memory.
const maxResponseBytes = 32 << 20

// ErrUnreachable is wrapped by every error that comes from failing to connect
// to the daemon's socket (absent, nobody listening, permission denied), so
// callers can tell "the daemon is down" from "the daemon said no".
var ErrUnreachable = errors.New("medalliond unreachable")

// Client talks to one medalliond over its Unix socket. Its methods are safe
// for concurrent use. Set the exported fields before the first request.
type Client struct {
	// Timeout bounds each request; zero means DefaultTimeout. A context
	// deadline that comes earlier wins.
	Timeout time.Duration

	// OnVersionMismatch, when set, is called once per Client the first time
	// a response carries a server version different from this build's, so
	// the CLI can warn that the daemon needs a restart after an upgrade.
	OnVersionMismatch func(server, client string)

	socket       string
	userAgent    string
	mismatchOnce sync.Once
}

// New returns a client for the daemon listening on socketPath. It does not
// connect until the first request.
//
// Its requests' User-Agent is made here, where the stack is shallow:
// without a version set at link time, version.String parses the build
// info, some twenty calls deep, and under a request that went over the
// 4 KiB the SessionStart hook's goroutine has, which made the runtime
// copy its stack to a larger one (issue 12).
func New(socketPath string) *Client {
	return &Client{socket: socketPath, userAgent: "medallion-client/" + version.String()}
}

// SocketPath returns the socket the client dials.
func (c *Client) SocketPath() string { return c.socket }

// APIError is a non-2xx answer from the daemon.
type APIError struct {
	StatusCode int
	Body       api.Error
}

// Error returns the server's message and, for a medallion that failed
// validation, each invalid field on its own indented line.
func (e *APIError) Error() string {
	msg := e.Body.Error
	if msg == "" {
		msg = strings.TrimSpace(fmt.Sprintf("medalliond answered %d %s", e.StatusCode, statusText(e.StatusCode)))
	}
	if len(e.Body.Fields) == 0 {
		return msg
	}
	// The server's message may already end with the fields joined on one
	// line ("invalid medallion: a: x; b: y"); keep only the headline so each
	// field is printed once, on its own line.
	joined := make([]string, len(e.Body.Fields))
	for i, f := range e.Body.Fields {
		joined[i] = f.String()
	}
	msg = strings.TrimSuffix(msg, ": "+strings.Join(joined, "; "))
	var b strings.Builder
	b.WriteString(msg)
	for _, f := range e.Body.Fields {
		b.WriteString("\n  ")
		b.WriteString(f.Field)
		b.WriteString(": ")
		b.WriteString(f.Message)
	}
	return b.String()
}

// unreachableError explains a failed dial in terms a user can act on.
type unreachableError struct {
	socket string
	err    error
}

func (e *unreachableError) Error() string {
	if errors.Is(e.err, syscall.EACCES) || errors.Is(e.err, syscall.EPERM) {
		return fmt.Sprintf("cannot reach medalliond at %s: permission denied (the socket belongs to another user?)", e.socket)
	}
	return fmt.Sprintf("cannot reach medalliond at %s: is it running? (medalliond start, or medalliond service start --user)", e.socket)
}

func (e *unreachableError) Unwrap() []error { return []error{ErrUnreachable, e.err} }

// Status asks the daemon how it is doing.
func (c *Client) Status(ctx context.Context) (*api.Status, error) {
	var st api.Status
	if err := c.do(ctx, "GET", "/v1/status", nil, nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// List returns up to limit of the latest medallions whose graph nodes include
// every node of scope and whose tags overlap scope's tags, newest first.
// A limit <= 0 lets the server apply api.DefaultListLimit.
func (c *Client) List(ctx context.Context, scope medallion.Scope, limit int) ([]*medallion.Medallion, error) {
	q := url.Values{}
	for _, n := range scope.GraphNodes {
		q.Add("node", n)
	}
	for _, t := range scope.Tags {
		q.Add("tag", t)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var resp api.ListResponse
	if err := c.do(ctx, "GET", "/v1/medallions", q, nil, &resp); err != nil {
		return nil, err
	}
	if resp.Medallions == nil {
		resp.Medallions = []*medallion.Medallion{}
	}
	return resp.Medallions, nil
}

// Get returns the latest version of medallion id; an absent id is an
// *APIError with code api.CodeNotFound.
func (c *Client) Get(ctx context.Context, id string) (*medallion.Medallion, error) {
	return c.get(ctx, id, nil)
}

// GetVersion returns one stored version of medallion id.
func (c *Client) GetVersion(ctx context.Context, id string, version int) (*medallion.Medallion, error) {
	return c.get(ctx, id, url.Values{"version": {strconv.Itoa(version)}})
}

func (c *Client) get(ctx context.Context, id string, q url.Values) (*medallion.Medallion, error) {
	p, err := medallionPath(id)
	if err != nil {
		return nil, err
	}
	var m medallion.Medallion
	if err := c.do(ctx, "GET", p, q, nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// History lists every stored version of medallion id, oldest first.
func (c *Client) History(ctx context.Context, id string) (*api.HistoryResponse, error) {
	p, err := medallionPath(id)
	if err != nil {
		return nil, err
	}
	var h api.HistoryResponse
	if err := c.do(ctx, "GET", p+"/history", nil, nil, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// Create stores m as a new medallion; an existing id is an *APIError with
// code api.CodeExists.
func (c *Client) Create(ctx context.Context, m *medallion.Medallion) (*api.PutResponse, error) {
	var resp api.PutResponse
	if err := c.do(ctx, "POST", "/v1/medallions", nil, m, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Put creates medallion m or stores it as the next version of the existing
// one. With m.Meta.Version > 0 the update must be based on the latest
// version (else an *APIError with code api.CodeConflict); with 0 it goes on
// top of whatever is latest.
func (c *Client) Put(ctx context.Context, m *medallion.Medallion) (*api.PutResponse, error) {
	if !medallion.ValidID(m.Meta.MedallionID) {
		// An id that cannot name a URL path cannot be PUT; POST it instead so
		// the server validates the whole body and reports every invalid
		// field at once, the id among them. Nothing invalid is ever stored.
		return c.Create(ctx, m)
	}
	var resp api.PutResponse
	if err := c.do(ctx, "PUT", "/v1/medallions/"+url.PathEscape(m.Meta.MedallionID), nil, m, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func medallionPath(id string) (string, error) {
	if !medallion.ValidID(id) {
		return "", fmt.Errorf("invalid medallion id %q: want 1-%d ASCII letters, digits or . _ : -", id, medallion.MaxIDLen)
	}
	return "/v1/medallions/" + url.PathEscape(id), nil
}

// do sends one request and decodes a 2xx JSON answer into out, or returns an
// *APIError for any other status. path is escaped.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	return c.send(ctx, 0, method, path, q, in, out)
}

// send is do with a lower bound on the timeout, for requests that are known
// to take longer than a lookup.
func (c *Client) send(ctx context.Context, minTimeout time.Duration, method, path string, q url.Values, in, out any) error {
	resp, err := c.call(ctx, minTimeout, method, path, q, in)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(resp.body, out); err != nil {
		return fmt.Errorf("decode %s %s response: %w", method, path, err)
	}
	return nil
}

// call sends a request (in encoded as JSON, if not nil) and returns the
// daemon's answer when its status is 2xx; any other is an *APIError.
func (c *Client) call(ctx context.Context, minTimeout time.Duration, method, path string, q url.Values, in any) (*response, error) {
	return c.callAt(ctx, c.socket, minTimeout, method, path, q, in)
}

// callAt is call on another socket of the daemon's (the hook's own).
func (c *Client) callAt(ctx context.Context, socket string, minTimeout time.Duration, method, path string, q url.Values, in any) (*response, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timeout = max(timeout, minTimeout)
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	target, contentType, body, err := encodeRequest(method, path, q, in)
	if err != nil {
		return nil, err
	}
	resp, err := roundTrip(ctx, socket, method, target, contentType, c.userAgent, body)
	if err != nil {
		return nil, transportError(parent, ctx, socket, method, path, timeout, err)
	}
	c.checkVersion(resp.version)
	data := resp.body
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("read %s %s response: larger than %d bytes", method, path, maxResponseBytes)
	}
	if resp.status < 200 || resp.status > 299 {
		return nil, decodeAPIError(resp.status, data)
	}
	return resp, nil
}

// encodeRequest returns a request's target (path, escaped, and the query
// q) and its body: in encoded as JSON, if not nil. It is not part of
// callAt so that its locals are off the stack during the exchange: the
// SessionStart hook's goroutine has a 4 KiB stack, and a call that goes
// deeper makes the runtime copy it to a larger one (issue 12).
func encodeRequest(method, path string, q url.Values, in any) (target, contentType string, body []byte, err error) {
	// path arrives escaped (ids are escaped segment by segment); RawPath
	// keeps that escaping, where Path alone would be escaped again.
	unescaped, err := url.PathUnescape(path)
	if err != nil {
		return "", "", nil, fmt.Errorf("build %s %s request: %w", method, path, err)
	}
	u := url.URL{Scheme: "http", Host: "medalliond", Path: unescaped, RawPath: path}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	if in != nil {
		if body, err = json.Marshal(in); err != nil {
			return "", "", nil, fmt.Errorf("encode %s %s request: %w", method, path, err)
		}
		contentType = "application/json"
	}
	return u.RequestURI(), contentType, body, nil
}

// decodeAPIError turns an error response into an *APIError, keeping a
// non-JSON body (a proxy, a panic page) as the message so nothing is hidden.
func decodeAPIError(status int, data []byte) error {
	e := &APIError{StatusCode: status}
	if err := json.Unmarshal(data, &e.Body); err != nil || e.Body.Error == "" {
		e.Body = api.Error{Error: strings.TrimSpace(string(data))}
		if e.Body.Error != "" {
			e.Body.Error = fmt.Sprintf("medalliond answered %s: %s", strings.TrimSpace(fmt.Sprintf("%d %s", status, statusText(status))), e.Body.Error)
		}
	}
	return e
}

func transportError(parent, ctx context.Context, socket, method, path string, timeout time.Duration, err error) error {
	var de *dialError
	// A dial cut short by the caller's cancellation says nothing about
	// whether the daemon runs, so only a dial that failed on its own counts.
	if errors.As(err, &de) && ctx.Err() == nil {
		return &unreachableError{socket: socket, err: err}
	}
	return fmt.Errorf("%s %s: %w", method, path, timeoutError(parent, ctx, socket, timeout, err))
}

// timeoutError names the socket and the limit when the client's own timeout
// fired, rather than surfacing a bare "context deadline exceeded"; a
// deadline or cancellation of the caller's context is passed through as is.
func timeoutError(parent, ctx context.Context, socket string, timeout time.Duration, err error) error {
	if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("medalliond at %s did not answer within %s: %w", socket, timeout, context.DeadlineExceeded)
	}
	return err
}

func (c *Client) checkVersion(server string) {
	if server == "" || c.OnVersionMismatch == nil {
		return
	}
	if mine := version.String(); server != mine {
		c.mismatchOnce.Do(func() { c.OnVersionMismatch(server, mine) })
	}
}
