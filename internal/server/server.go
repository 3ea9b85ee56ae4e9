// Package server serves medalliond's local API (HTTP/1.1 + JSON under /v1/,
// see package api) on the listener it is given, normally the Unix socket
// from package socket.
//
// Handlers return (body, error); one wrapper turns the error into a status
// and an api.Error body, so every endpoint reports bad input, absent
// medallions and version conflicts the same way.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/hookcache"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/render"
	"github.com/medallionhq/medallion/internal/search"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/version"
)

// MaxBodyBytes caps a request body. A medallion is a few KiB; the cap only
// has to stop a runaway client from filling the daemon's memory.
const MaxBodyBytes = 8 << 20

// maxListLimit caps ?limit= on list requests, for the same reason.
const maxListLimit = 1000

// Timeouts of the HTTP server. Requests come from local tools over a Unix
// socket and are answered from a local store, so anything slower than this
// is a stuck client holding a connection.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

// Config is what New needs.
type Config struct {
	// Store holds the medallions; required.
	Store store.Store
	// Logger receives the server's logs (under the name "api"); nil
	// discards them.
	Logger hclog.Logger
	// DataDir and Socket are reported by GET /v1/status.
	DataDir, Socket string
	// StartedAt is when the daemon started; zero means when New ran.
	StartedAt time.Time
	// DiskUsage reports the store's size in bytes for GET /v1/status;
	// nil reports 0.
	DiskUsage func() int64

	// Episodes holds the ingested sessions and their episode buffers for
	// GET /v1/sessions[/{id}]; nil answers those with 404 "ingestion is
	// not enabled".
	Episodes store.EpisodeStore
	// Checkpoint runs a manual checkpoint for POST /v1/checkpoint; nil
	// answers 404 likewise. An error wrapping store.ErrNotFound (an unknown
	// session) is a 404, any other a 500; a failure of one session's
	// curation belongs in its CheckpointResult instead.
	Checkpoint func(ctx context.Context, req api.CheckpointRequest) (api.CheckpointResponse, error)
	// Ingest reports the ingestion figures for GET /v1/status; nil leaves
	// Status.Ingest out.
	Ingest func() *api.IngestStatus
	// Disk reports the free space under the data dir for GET /v1/status;
	// nil leaves Status.Disk out.
	Disk func() *api.DiskStatus
	// Damage reports what the store's periodic verification found
	// damaged (nil: nothing) for GET /v1/status.
	Damage func() error
	// Export and Import move every medallion version out and in for GET
	// /v1/export and POST /v1/import (store.Badger's ExportJSON, whose
	// lines are what json.Encoder writes for each version, and Import);
	// nil answers those with 404.
	Export func(ctx context.Context, fn func(line []byte) error) error
	Import func(ctx context.Context, versions []*medallion.Medallion) error
	// ScopeForCWD resolves a working directory to the graph nodes of its
	// scope for GET /v1/load?cwd=; nil answers such loads with 400 "this
	// daemon cannot resolve --cwd".
	ScopeForCWD func(cwd string) []string
	// WatchWrites, when set, registers a function the store calls with
	// every medallion version it writes, before the write returns
	// (store.Badger.WatchWrites). With it, GET /v1/load keeps its answers
	// until a version in their scope is written (loadcache.go); without
	// it, every load is rendered anew.
	WatchWrites func(fn func(prev, cur *medallion.Medallion))
	// HookAnswers, with WatchWrites, keeps the answers to loads the
	// SessionStart hook makes (a cwd, default limit, markdown) as files it
	// reads without asking (internal/hookcache); nil keeps none.
	HookAnswers *hookcache.Writer

	// ReviewMode is how GET /v1/load shows the items a model wrote that
	// nobody has reviewed: "auto" marks them, "required" leaves them out,
	// "off" shows them plain (render.ReviewAuto …). "" means "auto". The
	// daemon passes the llm block's review setting; with no llm block
	// there are no such items and the mode does not matter.
	ReviewMode string
	// LLM reports Tier 1's figures for GET /v1/status; nil (no llm block)
	// leaves Status.LLM out. The server fills in PendingReview itself.
	LLM func() *api.LLMStatus
	// LLMCheck tests the configured endpoint for POST /v1/llm/check; nil
	// (no llm block) answers it with 404 api.NoLLMMessage. A failed step
	// belongs in the LLMCheck (flags and lines); an error is for a check
	// that could not run at all, and answers 500.
	LLMCheck func(ctx context.Context) (api.LLMCheck, error)

	// Search is the full-text index of every medallion version for GET
	// /v1/search and the history of GET /v1/item; nil answers search with
	// 404 and leaves items without history.
	Search *search.Index
}

// Server is the local API server.
type Server struct {
	cfg   Config
	log   hclog.Logger
	mux   *http.ServeMux
	http  *http.Server
	loads *loadCache // nil without Config.WatchWrites
	// rewarms renders the hook's answers again after writes; nil without
	// Config.HookAnswers.
	rewarms *rewarmer

	// hook is the hook's own socket (ServeHook); nil until it serves.
	// hookShut: Shutdown has closed it, or would have; ServeHook then
	// serves no more.
	hookMu   sync.Mutex
	hook     *hookListener
	hookShut bool
}

// New returns a server for cfg; call Serve to start answering.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.StartedAt.IsZero() {
		cfg.StartedAt = time.Now()
	}
	if cfg.DiskUsage == nil {
		cfg.DiskUsage = func() int64 { return 0 }
	}
	if cfg.ReviewMode == "" {
		cfg.ReviewMode = render.ReviewAuto
	}
	s := &Server{cfg: cfg, log: cfg.Logger.Named("api")}
	if cfg.WatchWrites != nil {
		s.loads = newLoadCache(cfg.HookAnswers, s.log.Named("load"))
		if cfg.HookAnswers != nil && cfg.ScopeForCWD != nil {
			s.rewarms = newRewarmer(s.rewarm)
			s.loads.dropped = s.rewarms.add
		}
		cfg.WatchWrites(s.loads.written)
	}
	s.mux = s.routes()
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// net/http's own complaints (accept errors, panics, bad TLS) are
		// rare and worth seeing.
		ErrorLog: s.log.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn}),
	}
	return s
}

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /v1/status", s.endpoint(s.status))
	mux.Handle("GET /v1/medallions", s.endpoint(s.list))
	mux.Handle("POST /v1/medallions", s.endpoint(s.create))
	mux.Handle("GET /v1/medallions/{id}", s.endpoint(s.get))
	mux.Handle("PUT /v1/medallions/{id}", s.endpoint(s.put))
	mux.Handle("GET /v1/medallions/{id}/history", s.endpoint(s.history))
	mux.Handle("GET /v1/sessions", s.endpoint(s.sessions))
	mux.Handle("GET /v1/sessions/{id...}", s.endpoint(s.session))
	mux.Handle("GET /v1/load", s.endpoint(s.load))
	mux.Handle("GET /v1/hook", s.endpoint(s.hookAnswer))
	mux.Handle("GET /v1/review", s.endpoint(s.review))
	mux.Handle("POST /v1/review", s.endpoint(s.reviewAct))
	mux.Handle("POST /v1/item", s.endpoint(s.itemAct))
	mux.Handle("GET /v1/ids", s.endpoint(s.ids))
	mux.Handle("POST /v1/llm/check", extendWrite(llmCheckWriteTimeout, s.endpoint(s.llmCheck)))
	mux.Handle("POST /v1/checkpoint", extendWrite(checkpointWriteTimeout, s.endpoint(s.checkpoint)))
	mux.Handle("GET /v1/search", s.endpoint(s.search))
	mux.Handle("GET /v1/item", s.endpoint(s.item))
	mux.Handle("POST /v1/record", s.endpoint(s.record))
	mux.Handle("GET /v1/export", extendTransfer(http.HandlerFunc(s.export)))
	mux.Handle("POST /v1/import", extendTransfer(s.endpoint(s.importMedallions)))
	return mux
}

// Serve answers requests on ln until Shutdown, and then returns nil. It
// closes ln when it returns.
func (s *Server) Serve(ln net.Listener) error {
	s.log.Info("serving local API", "address", ln.Addr().String())
	if err := s.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve local API: %w", err)
	}
	return nil
}

// Shutdown stops accepting connections and waits for requests in flight.
// When ctx ends first, the remaining connections are cut, so that the
// daemon can exit, and the context's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.rewarms != nil {
		s.rewarms.close()
	}
	s.hookMu.Lock()
	s.hookShut = true
	if s.hook != nil {
		s.hook.close()
	}
	s.hookMu.Unlock()
	// The answer files being written go before the daemon removes their
	// folder.
	defer s.loads.settle(true)
	if err := s.http.Shutdown(ctx); err != nil {
		_ = s.http.Close()
		return fmt.Errorf("shut down local API: %w", err)
	}
	return nil
}

// ServeHTTP applies what every request gets — the version header, the
// browser check, the body cap, the request log — and dispatches.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	defer func() {
		args := []any{"method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", time.Since(start)}
		if rec.errMsg != "" {
			args = append(args, "error", rec.errMsg)
		}
		s.log.Debug("request", args...)
	}()
	rec.Header().Set(api.VersionHeader, version.String())

	// A browser adds Origin or Referer to what a web page sends; our
	// clients never do. Refusing them keeps any page (cross-site requests,
	// DNS rebinding through a local proxy) from driving the daemon.
	for _, h := range []string{"Origin", "Referer"} {
		if _, ok := r.Header[h]; ok {
			s.writeError(rec, r, &apiError{http.StatusForbidden, api.CodeForbidden,
				fmt.Sprintf("requests carrying a %s header (web browsers) are refused", h)})
			return
		}
	}
	// The original writer, not rec: net/http then knows to close the
	// connection after a 413 instead of draining an oversized body.
	limit := int64(MaxBodyBytes)
	if r.URL.Path == "/v1/import" {
		limit = MaxImportBytes // read line by line, never held whole
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)

	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.noRoute(rec, r)
		return
	}
	s.mux.ServeHTTP(rec, r)
}

// noRoute answers a request no pattern takes, in JSON like every other
// error: 405 when the path exists for other methods, else 404.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	// The mux's fallback handler knows which of the two it is and, for
	// 405, the allowed methods; run it into a scratch writer to find out.
	h, _ := s.mux.Handler(r)
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		allow := probe.header.Get("Allow")
		w.Header().Set("Allow", allow)
		s.writeError(w, r, &apiError{http.StatusMethodNotAllowed, api.CodeInvalid,
			fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow)})
		return
	}
	s.writeError(w, r, &apiError{http.StatusNotFound, api.CodeNotFound,
		fmt.Sprintf("no endpoint %s %s (the API is under /v1/)", r.Method, r.URL.Path)})
}

// handlerFunc is one endpoint: it returns the response body, or an error
// that writeError maps to a status. A body of type reply sets the status.
type handlerFunc func(r *http.Request) (any, error)

// reply is a response body with a status other than 200.
type reply struct {
	status int
	body   any
}

// endpoint adapts a handlerFunc to http.Handler.
func (s *Server) endpoint(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				s.writeError(w, r, errors.New("internal error (the daemon log has details)"))
			}
		}()
		body, err := h(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		status := http.StatusOK
		if rp, ok := body.(reply); ok {
			status, body = rp.status, rp.body
		}
		if text, ok := body.(markdownText); ok {
			s.writeWhole(w, status, "text/markdown; charset=utf-8", []byte(text))
			return
		}
		s.writeJSON(w, status, body)
	})
}

// markdownText is a response body that is markdown, sent as it is.
type markdownText string

// apiError is an error that already knows its status and code.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &apiError{http.StatusNotFound, api.CodeNotFound, fmt.Sprintf(format, args...)}
}

// writeError maps err to a status and an api.Error body.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var (
		ae  *apiError
		ve  *medallion.ValidationError
		mbe *http.MaxBytesError
	)
	body := api.Error{Error: err.Error()}
	status := http.StatusInternalServerError
	switch {
	case errors.As(err, &ae):
		status, body.Code = ae.status, ae.code
	case errors.As(err, &ve):
		status, body.Code, body.Fields = http.StatusBadRequest, api.CodeInvalid, ve.Problems
	case errors.As(err, &mbe):
		status, body.Code = http.StatusRequestEntityTooLarge, api.CodeInvalid
		body.Error = fmt.Sprintf("request body is larger than the %d MiB limit", MaxBodyBytes>>20)
	case errors.Is(err, store.ErrNotFound):
		status, body.Code = http.StatusNotFound, api.CodeNotFound
	case errors.Is(err, store.ErrExists):
		status, body.Code = http.StatusConflict, api.CodeExists
	case errors.Is(err, store.ErrConflict):
		status, body.Code = http.StatusConflict, api.CodeConflict
	case errors.Is(err, store.ErrDiskFull):
		// The daemon logged the full disk once already; the caller gets
		// the sentence, not another error line per request.
		status, body.Code = http.StatusInsufficientStorage, api.CodeDiskFull
	default:
		body.Code = api.CodeInternal
		if r.Context().Err() != nil {
			// The client hung up; nobody reads this answer and it is not
			// the daemon's fault.
			s.log.Debug("request abandoned by client", "method", r.Method, "path", r.URL.Path, "error", err)
		} else {
			s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		}
	}
	if rec, ok := w.(*recorder); ok {
		rec.errMsg = body.Error
	}
	s.writeJSON(w, status, body)
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, body any) {
	if b, ok := body.(encodedJSON); ok {
		s.writeWhole(w, status, "application/json", b)
		return
	}
	setHeaders(w, "application/json")
	w.WriteHeader(status)
	if err := jsonEncode(w, body); err != nil {
		s.log.Debug("write response", "error", err)
	}
}

// setHeaders sets a response's content type and the headers every
// response carries.
func setHeaders(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	// Belt and braces against a browser ever rendering a response.
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}

// writeWhole writes a body known whole: with its length, and flushed at
// once. net/http sends a body it does not know the length of in chunks,
// the first as its 4 KiB buffer fills and the rest after the handler
// returns, and a client that wakes to the first then waits again for the
// rest (the hook did, for a save file of 6 KB).
func (s *Server) writeWhole(w http.ResponseWriter, status int, contentType string, b []byte) {
	setHeaders(w, contentType)
	if status != http.StatusNoContent {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	}
	w.WriteHeader(status)
	if len(b) > 0 {
		if _, err := w.Write(b); err != nil {
			s.log.Debug("write response", "error", err)
			return
		}
	}
	_ = http.NewResponseController(w).Flush()
}

// encodedJSON is a response body already encoded by jsonEncode.
type encodedJSON []byte

// recorder remembers the status and error message for the request log.
type recorder struct {
	http.ResponseWriter
	status int
	errMsg string
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// probeWriter captures the status and headers of the mux's fallback
// handler and discards its plain-text body.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header { return p.header }

func (p *probeWriter) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}

func (p *probeWriter) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}

// status answers GET /v1/status.
func (s *Server) status(r *http.Request) (any, error) {
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	n, err := s.cfg.Store.Count(r.Context())
	if err != nil {
		return nil, err
	}
	var ingest *api.IngestStatus
	if s.cfg.Ingest != nil {
		ingest = s.cfg.Ingest()
	}
	llm, err := s.llmStatus(r.Context())
	if err != nil {
		return nil, err
	}
	var disk *api.DiskStatus
	if s.cfg.Disk != nil {
		disk = s.cfg.Disk()
	}
	var damage string
	if s.cfg.Damage != nil {
		if err := s.cfg.Damage(); err != nil {
			damage = err.Error()
		}
	}
	return api.Status{
		Version:     version.String(),
		PID:         os.Getpid(),
		StartedAt:   medallion.FormatTime(s.cfg.StartedAt),
		UptimeSec:   int64(time.Since(s.cfg.StartedAt) / time.Second),
		DataDir:     s.cfg.DataDir,
		Socket:      s.cfg.Socket,
		Medallions:  n,
		StoreBytes:  s.cfg.DiskUsage(),
		Disk:        disk,
		StoreDamage: damage,
		Ingest:      ingest,
		LLM:         llm,
	}, nil
}

// quoteList renders names for messages: "a", "b".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
