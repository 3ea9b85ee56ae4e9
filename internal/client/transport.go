package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/api"
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

// daemonConn is a connection to the daemon (dial). Its reads and writes
// block; interrupt makes one that is blocked return, and any later one
// fail.
type daemonConn interface {
	io.ReadWriteCloser
	interrupt()
}

// dialError is a failure to connect to the socket: nothing listens there
// (or not for us), as opposed to a daemon that failed to answer.
type dialError struct{ err error }

func (e *dialError) Error() string { return "dial " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// connect dials socket unless ctx has already ended.
func connect(ctx context.Context, socket string) (daemonConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return dial(socket)
}

// roundTrip sends one request (target is the escaped path and query) over a
// new connection to socket and reads the answer. The context bounds
// the whole exchange. A dial failure is returned as a *dialError; an error
// after the context ended wraps the context's error.
func roundTrip(ctx context.Context, socket, method, target, contentType, userAgent string, body []byte) (*response, error) {
	conn, err := connect(ctx, socket)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// The context bounds the exchange: when it ends (its deadline, or a
	// cancellation), a blocked read or write returns at once.
	stop := context.AfterFunc(ctx, conn.interrupt)
	defer stop()

	resp, err := exchange(conn, method, target, contentType, userAgent, body)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return resp, err
}

// exchange writes the request and reads the response.
func exchange(conn io.ReadWriter, method, target, contentType, userAgent string, body []byte) (*response, error) {
	if err := writeRequest(conn, method, target, contentType, userAgent, body); err != nil {
		return nil, err
	}
	return readResponse(bufio.NewReader(conn), method)
}

// writeRequest writes one request with its whole body.
func writeRequest(conn io.Writer, method, target, contentType, userAgent string, body []byte) error {
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
		return fmt.Errorf("send request: %w", err)
	}
	return nil
}

// head is a response's status line and the headers the client uses.
type head struct {
	status  int
	version string
	length  int64 // -1 when there is no Content-Length
	chunked bool
}

// hasBody reports whether a body follows the head.
func (h *head) hasBody(method string) bool {
	return method != "HEAD" && h.status != 204 && h.status != 304 && (h.status < 100 || h.status >= 200)
}

// readHead reads a status line and the headers.
func readHead(r *bufio.Reader) (*head, error) {
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
	h := &head{status: status, length: -1}
	for {
		line, err := readLine(r, &budget)
		if err != nil {
			return nil, fmt.Errorf("read response headers: %w", err)
		}
		if line == "" {
			return h, nil
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("read response headers: malformed line %q", line)
		}
		value = strings.TrimSpace(value)
		switch {
		case strings.EqualFold(name, "Content-Length"):
			if h.length, err = strconv.ParseInt(value, 10, 64); err != nil || h.length < 0 {
				return nil, fmt.Errorf("read response headers: bad Content-Length %q", value)
			}
		case strings.EqualFold(name, "Transfer-Encoding"):
			h.chunked = strings.EqualFold(value, "chunked")
		case strings.EqualFold(name, api.VersionHeader):
			h.version = value
		}
	}
}

// readResponse reads a status line, headers and the body.
func readResponse(r *bufio.Reader, method string) (*response, error) {
	h, err := readHead(r)
	if err != nil {
		return nil, err
	}
	resp := &response{status: h.status, version: h.version}
	if !h.hasBody(method) {
		return resp, nil
	}
	limit := int64(maxResponseBytes + 1)
	switch {
	case h.chunked:
		resp.body, err = readChunked(r, limit)
	case h.length >= 0:
		length := h.length
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

// copyBody copies a response body to w as it arrives, without a cap.
func copyBody(w io.Writer, r *bufio.Reader, h *head) error {
	switch {
	case h.chunked:
		return copyChunked(w, r)
	case h.length >= 0:
		_, err := io.CopyN(w, r, h.length)
		return err
	default:
		_, err := io.Copy(w, r)
		return err
	}
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

// errCapped stops a copy into a capWriter that is full.
var errCapped = errors.New("response body capped")

// capWriter keeps the first left bytes written to it.
type capWriter struct {
	buf  bytes.Buffer
	left int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		c.buf.Write(p[:c.left])
		c.left = 0
		return 0, errCapped
	}
	c.left -= int64(len(p))
	return c.buf.Write(p)
}

// readChunked decodes a chunked body, keeping at most limit bytes.
func readChunked(r *bufio.Reader, limit int64) ([]byte, error) {
	w := &capWriter{left: limit}
	if err := copyChunked(w, r); err != nil && !errors.Is(err, errCapped) {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// copyChunked decodes a chunked body into w.
func copyChunked(w io.Writer, r *bufio.Reader) error {
	for {
		budget := maxChunkLine
		line, err := readLine(r, &budget)
		if err != nil {
			return err
		}
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			// Trailers, then the final empty line.
			for {
				budget := maxHeaderBytes
				if line, err := readLine(r, &budget); err != nil || line == "" {
					return err
				}
			}
		}
		if _, err := io.CopyN(w, r, n); err != nil {
			return err
		}
		budget = maxChunkLine
		if line, err := readLine(r, &budget); err != nil || line != "" {
			if err == nil {
				err = fmt.Errorf("chunk not followed by CRLF")
			}
			return err
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
