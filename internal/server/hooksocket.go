package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/version"
)

// The SessionStart hook's own socket (issue 12: the hook, whole process,
// within 1.5× a Go hello-world).
//
// A hook that finds no kept answer file (internal/hookcache) asks the
// daemon, and through net/http on the API's socket that round trip was
// most of what the asking hook cost beyond a kept one: the runtime's
// poller wakes a thread, which hands the accepted connection to a new
// goroutine on another, and the connection is read once more for a next
// request after the answer. Against a fixed 5 KB answer, a client on the
// same machine measured a median of 0.28–0.37 ms through net/http and
// 0.15–0.18 ms from a thread blocked in accept(2) on a socket of its own,
// which the kernel wakes itself; 0.53–0.85 against 0.30–0.36 ms after
// 100 ms of idle (2-core Xeon, Linux 6.18).
//
// So the daemon also answers GET /v1/hook on hookcache.Socket, beside the
// kept answers, one connection at a time on a thread of its own, through
// the same ServeHTTP as the API: the same answer, headers, kept files and
// log line. The hook asks there first and on the API's socket when
// nothing answers there (an older daemon, or another OS: only Linux serves
// it, see hooksocket_linux.go).

// hookSocketOnly is the one path the hook's socket answers.
const hookSocketOnly = "/v1/hook"

// maxHookRequest bounds a request on the hook's socket: the hook sends a
// request line with a cwd (at most PATH_MAX, escaped) and four headers.
const maxHookRequest = 64 << 10

// serveHookConn reads one request from conn, answers it as the API would
// (GET /v1/hook, anything else 404) and writes the answer whole, then
// returns: one request per connection, as the hook sends.
func (s *Server) serveHookConn(ctx context.Context, conn io.ReadWriter) error {
	req, err := http.ReadRequest(bufio.NewReaderSize(io.LimitReader(conn, maxHookRequest), 4096))
	if err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	// What the answer leaves for later (the answer file it keeps) runs
	// once it is written, on this thread: started as a goroutine, it woke
	// another thread while the hook waited (0.20 against 0.26 ms a round
	// trip, 4 ms apart).
	var after []func()
	defer func() {
		for _, fn := range after {
			fn()
		}
	}()
	req = req.WithContext(context.WithValue(ctx, afterAnswerKey{}, &after))
	w := &bufferedResponse{header: http.Header{}}
	if req.URL.Path == hookSocketOnly {
		s.ServeHTTP(w, req)
	} else {
		w.Header().Set(api.VersionHeader, version.String())
		s.writeError(w, req, &apiError{http.StatusNotFound, api.CodeNotFound,
			fmt.Sprintf("this socket answers only GET %s; the API is on %s", hookSocketOnly, s.cfg.Socket)})
	}
	if _, err := conn.Write(w.bytes(req.Method == http.MethodHead)); err != nil {
		return fmt.Errorf("write answer: %w", err)
	}
	return nil
}

// afterAnswerKey is, in a request's context, where work that need not
// delay the answer is left for after it is written (*[]func()); without
// it such work starts on a goroutine of its own (loadCache.keepFileLater).
type afterAnswerKey struct{}

// bufferedResponse is an http.ResponseWriter that keeps the whole answer,
// for a connection that is not net/http's.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// bytes is the answer as HTTP/1.1 puts it on the wire, with its length
// and the end of the connection announced; head leaves the body out (the
// answer to a HEAD request, which GET's route takes too).
func (b *bufferedResponse) bytes(head bool) []byte {
	b.WriteHeader(http.StatusOK)
	var out bytes.Buffer
	out.Grow(256 + b.body.Len())
	out.WriteString("HTTP/1.1 " + strconv.Itoa(b.status) + " " + http.StatusText(b.status) + "\r\n")
	b.header.Del("Content-Length")
	noBody := b.status == http.StatusNoContent || b.status == http.StatusNotModified || b.status < 200
	if !noBody {
		b.header.Set("Content-Length", strconv.Itoa(b.body.Len()))
	}
	b.header.Set("Connection", "close")
	_ = b.header.Write(&out)
	out.WriteString("\r\n")
	if !noBody && !head {
		out.Write(b.body.Bytes())
	}
	return out.Bytes()
}
