package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/version"
)

// The client speaks just enough HTTP/1.1 itself, one request per
// connection, instead of using net/http. Every command of medallionctl runs
// as a short process, and the SessionStart hook runs before every agent
// session: linking net/http (and with it crypto/tls, x509, http2 …) cost the
// process its package initialisation and a larger binary to load, and its
// Transport starts two goroutines per connection, all to send one request
// over a local socket to a server we wrote. The subset below is what that
// server (net/http's) sends: a status line, headers, and a body delimited by
// Content-Length, by chunked encoding, or by the end of the connection.

// Limits on a response's head; the body is capped by maxResponseBytes.
const (
	maxHeaderBytes = 1 << 20
	maxChunkLine   = 4 << 10
)

// response is a daemon's answer.
type response struct {
	status  int
	version string // api.VersionHeader
	body    []byte // at most maxResponseBytes+1 bytes
}

// roundTrip sends one request (target is the escaped path and query) over a
// new connection to the socket and reads the answer. The context bounds
// the whole exchange. A dial failure is returned as the *net.OpError of the
// dial; an error after the context ended wraps the context's error.
func (c *Client) roundTrip(ctx context.Context, method, target, contentType string, body []byte) (*response, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.socket)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// A cancelled context interrupts a blocked read or write.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	resp, err := exchange(conn, method, target, contentType, "medallion-client/"+version.String(), body)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The connection's deadline is the context's: the context's timer
		// may fire a moment after the socket's, so wait for it.
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return resp, err
}

// exchange writes the request and reads the response.
func exchange(conn io.ReadWriter, method, target, contentType, userAgent string, body []byte) (*response, error) {
	var head strings.Builder
	head.Grow(256)
	head.WriteString(method + " " + target + " HTTP/1.1\r\nHost: medalliond\r\n")
	head.WriteString("User-Agent: " + userAgent + "\r\nAccept: application/json\r\n")
	if contentType != "" {
		head.WriteString("Content-Type: " + contentType + "\r\n")
	}
	if body != nil || method == "POST" || method == "PUT" {
		head.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	head.WriteString("Connection: close\r\n\r\n")
	w := bufio.NewWriterSize(conn, head.Len()+len(body))
	_, _ = w.WriteString(head.String())
	_, _ = w.Write(body)
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("send request: %w", err)
	}
	return readResponse(bufio.NewReader(conn), method)
}

// readResponse reads a status line, headers and the body.
func readResponse(r *bufio.Reader, method string) (*response, error) {
	budget := maxHeaderBytes
	line, err := readLine(r, &budget)
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil || len(code) != 3 {
		return nil, fmt.Errorf("read response: malformed status line %q", line)
	}
	resp := &response{status: status}
	length := int64(-1)
	chunked := false
	for {
		line, err := readLine(r, &budget)
		if err != nil {
			return nil, fmt.Errorf("read response headers: %w", err)
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("read response headers: malformed line %q", line)
		}
		value = strings.TrimSpace(value)
		switch {
		case strings.EqualFold(name, "Content-Length"):
			if length, err = strconv.ParseInt(value, 10, 64); err != nil || length < 0 {
				return nil, fmt.Errorf("read response headers: bad Content-Length %q", value)
			}
		case strings.EqualFold(name, "Transfer-Encoding"):
			chunked = strings.EqualFold(value, "chunked")
		case strings.EqualFold(name, api.VersionHeader):
			resp.version = value
		}
	}
	if method == "HEAD" || status == 204 || status == 304 || (status >= 100 && status < 200) {
		return resp, nil
	}
	limit := int64(maxResponseBytes + 1)
	switch {
	case chunked:
		resp.body, err = readChunked(r, limit)
	case length >= 0:
		if length > limit {
			// Read no more than the cap; the caller reports the size.
			length = limit
		}
		resp.body = make([]byte, length)
		_, err = io.ReadFull(r, resp.body)
	default:
		resp.body, err = io.ReadAll(io.LimitReader(r, limit))
	}
	if err != nil {
		return nil, fmt.Errorf("read response body: %w", err)
	}
	return resp, nil
}

// readLine reads one CRLF- (or LF-) terminated line, charging it to budget.
func readLine(r *bufio.Reader, budget *int) (string, error) {
	var sb strings.Builder
	for {
		frag, err := r.ReadSlice('\n')
		if *budget -= len(frag); *budget < 0 {
			return "", errors.New("response head too large")
		}
		sb.Write(frag)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
	}
	return strings.TrimRight(sb.String(), "\r\n"), nil
}

// readChunked decodes a chunked body, keeping at most limit bytes.
func readChunked(r *bufio.Reader, limit int64) ([]byte, error) {
	var out []byte
	for {
		budget := maxChunkLine
		line, err := readLine(r, &budget)
		if err != nil {
			return nil, err
		}
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			// Trailers, then the final empty line.
			for {
				budget := maxHeaderBytes
				if line, err := readLine(r, &budget); err != nil || line == "" {
					return out, err
				}
			}
		}
		if int64(len(out))+n > limit {
			n = limit - int64(len(out))
			start := len(out)
			out = append(out, make([]byte, n)...)
			_, err := io.ReadFull(r, out[start:])
			return out, err
		}
		start := len(out)
		out = append(out, make([]byte, n)...)
		if _, err := io.ReadFull(r, out[start:]); err != nil {
			return nil, err
		}
		budget = maxChunkLine
		if line, err := readLine(r, &budget); err != nil || line != "" {
			if err == nil {
				err = fmt.Errorf("chunk not followed by CRLF")
			}
			return nil, err
		}
	}
}

// statusText names the statuses the daemon sends, for messages.
func statusText(code int) string {
	switch code {
	case 400:
		return "Bad Request"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 409:
		return "Conflict"
	case 413:
		return "Request Entity Too Large"
	case 415:
		return "Unsupported Media Type"
	case 422:
		return "Unprocessable Entity"
	case 429:
		return "Too Many Requests"
	case 500:
		return "Internal Server Error"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Timeout"
	}
	return ""
}
