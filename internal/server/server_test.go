package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/socket"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/version"
)

// syncBuffer is a log sink the server's goroutines and the test can share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// env is a real server on a real socket over a real Badger store.
type env struct {
	store    *store.Badger
	srv      *Server
	sock     string
	dataDir  string
	logs     *syncBuffer
	hc       *http.Client
	serveErr chan error
	stopped  bool
}

const testDiskUsage = 4242

func start(t *testing.T) *env {
	t.Helper()
	return startWith(t, nil)
}

// startWith is start with the Config changed by configure (nil: not at
// all), which gets the store too.
func startWith(t *testing.T, configure func(*Config, *store.Badger)) *env {
	t.Helper()
	return startStore(t, store.Options{GCInterval: -1}, configure)
}

// startStore is startWith over a store opened with opts.
func startStore(t *testing.T, opts store.Options, configure func(*Config, *store.Badger)) *env {
	t.Helper()
	dataDir := t.TempDir()
	st, err := store.Open(dataDir, opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	// Not t.TempDir(): its long path would pass the socket path limit.
	sockDir, err := os.MkdirTemp("", "med")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "m.sock")
	ln, err := socket.Listen(sock)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	logs := &syncBuffer{}
	cfg := Config{
		Store:     st,
		Logger:    hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug}),
		DataDir:   dataDir,
		Socket:    sock,
		StartedAt: time.Now().Add(-time.Hour),
		DiskUsage: func() int64 { return testDiskUsage },
		// As the daemon wires it: every test that writes and then loads
		// also checks that a kept load never outlives a write.
		WatchWrites: st.WatchWrites,
	}
	if configure != nil {
		configure(&cfg, st)
	}
	e := &env{
		store:    st,
		sock:     sock,
		dataDir:  dataDir,
		logs:     logs,
		srv:      New(cfg),
		serveErr: make(chan error, 1),
	}
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", sock)
		},
	}
	e.hc = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	go func() { e.serveErr <- e.srv.Serve(ln) }()
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		if !e.stopped {
			e.stop(t)
		}
	})
	return e
}

// stop shuts the server down and checks that Serve returned nil.
func (e *env) stop(t *testing.T) {
	t.Helper()
	e.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	select {
	case err := <-e.serveErr:
		if err != nil {
			t.Errorf("Serve returned %v after Shutdown, want nil", err)
		}
	case <-ctx.Done():
		t.Error("Serve did not return after Shutdown")
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; body is sent as is when it is a string or []byte,
// else as JSON.
func (e *env) do(t *testing.T, method, path string, body any, header map[string]string) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, "http://medallion"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := e.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	if got := res.Header.Get(api.VersionHeader); got != version.String() {
		t.Errorf("%s %s: %s header = %q, want %q", method, path, api.VersionHeader, got, version.String())
	}
	wantType := "application/json"
	if strings.HasPrefix(path, "/v1/hook?") && res.StatusCode < 300 {
		wantType = "text/markdown; charset=utf-8" // the hook's text alone
	}
	if ct := res.Header.Get("Content-Type"); ct != wantType {
		t.Errorf("%s %s: Content-Type = %q, want %s", method, path, ct, wantType)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// want sends a request, checks the status and decodes the body into out.
func (e *env) want(t *testing.T, status int, method, path string, body, out any) {
	t.Helper()
	res := e.do(t, method, path, body, nil)
	if res.status != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, res.status, status, res.body)
	}
	if out != nil {
		if err := json.Unmarshal(res.body, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, res.body, err)
		}
	}
}

func sample(id string, nodes ...string) *medallion.Medallion {
	return &medallion.Medallion{
		Meta: medallion.Meta{
			MedallionID:   id,
			SchemaVersion: medallion.SchemaVersion,
			Model:         "user",
		},
		Scope:   medallion.Scope{GraphNodes: nodes, Tags: []string{"project_state"}},
		Summary: medallion.Summary{HighLevel: "a daemon storing save files"},
		Decisions: []medallion.Decision{
			{ID: "D-001", Statement: "store in Badger", Rationale: "the owner chose it", Confidence: 0.9},
		},
	}
}

func TestStatus(t *testing.T) {
	e := start(t)
	var st api.Status
	e.want(t, http.StatusOK, "GET", "/v1/status", nil, &st)
	if st.Version != version.String() || st.PID != os.Getpid() || st.DataDir != e.dataDir || st.Socket != e.sock ||
		st.Medallions != 0 || st.StoreBytes != testDiskUsage {
		t.Errorf("status = %+v", st)
	}
	if _, err := medallion.ParseTime(st.StartedAt); err != nil {
		t.Errorf("started_at %q: %v", st.StartedAt, err)
	}
	// StartedAt is an hour ago, so uptime is at least that whatever the
	// speed of the machine.
	if st.UptimeSec < 3600 {
		t.Errorf("uptime_seconds = %d, want >= 3600", st.UptimeSec)
	}

	e.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m1", "repo:muse"), nil)
	e.want(t, http.StatusOK, "GET", "/v1/status", nil, &st)
	if st.Medallions != 1 {
		t.Errorf("medallions = %d after one create, want 1", st.Medallions)
	}
}

func TestCreateGetHistoryList(t *testing.T) {
	e := start(t)
	var put api.PutResponse
	e.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m1", "repo:muse", "module:cli"), &put)
	if !put.Created || put.Medallion == nil || put.Medallion.Meta.Version != 1 || put.Medallion.Meta.CreatedAt == "" ||
		put.Medallion.Meta.Status != medallion.StatusActive {
		t.Fatalf("create response = %+v", put)
	}

	var got medallion.Medallion
	e.want(t, http.StatusOK, "GET", "/v1/medallions/m1", nil, &got)
	if got.Meta != put.Medallion.Meta || got.Summary.HighLevel != "a daemon storing save files" {
		t.Errorf("GET = %+v, want what POST stored (%+v)", got.Meta, put.Medallion.Meta)
	}
	e.want(t, http.StatusOK, "GET", "/v1/medallions/m1?version=1", nil, &got)
	if got.Meta.Version != 1 {
		t.Errorf("GET ?version=1 gave version %d", got.Meta.Version)
	}

	var hist api.HistoryResponse
	e.want(t, http.StatusOK, "GET", "/v1/medallions/m1/history", nil, &hist)
	if hist.ID != "m1" || len(hist.Versions) != 1 || hist.Versions[0].Version != 1 || hist.Versions[0].Model != "user" {
		t.Errorf("history = %+v", hist)
	}

	e.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m2", "repo:muse"), nil)
	e.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m3", "repo:other"), nil)

	tests := []struct {
		query string
		want  []string
	}{
		{"node=repo:muse", []string{"m2", "m1"}},
		{"node=repo:muse&node=module:cli", []string{"m1"}},
		{"node=repo:muse&limit=1", []string{"m2"}},
		{"tag=project_state", []string{"m3", "m2", "m1"}},
		{"tag=nothing", []string{}},
		{"node=repo:muse&tag=project_state&limit=10", []string{"m2", "m1"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var list api.ListResponse
			e.want(t, http.StatusOK, "GET", "/v1/medallions?"+tt.query, nil, &list)
			if list.Medallions == nil {
				t.Fatal("medallions is null, want a list")
			}
			ids := []string{}
			for _, m := range list.Medallions {
				ids = append(ids, m.Meta.MedallionID)
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("ids = %v, want %v", ids, tt.want)
			}
		})
	}
}

func TestPutCreatesThenUpdates(t *testing.T) {
	e := start(t)
	m := sample("m1", "repo:muse")

	var first api.PutResponse
	e.want(t, http.StatusCreated, "PUT", "/v1/medallions/m1", m, &first)
	if !first.Created || first.Medallion.Meta.Version != 1 {
		t.Fatalf("first PUT = %+v, want created version 1", first)
	}

	// Version 0: on top of whatever is latest.
	m.Summary.HighLevel = "now with an API"
	var second api.PutResponse
	e.want(t, http.StatusOK, "PUT", "/v1/medallions/m1", m, &second)
	if second.Created || second.Medallion.Meta.Version != 2 {
		t.Fatalf("second PUT = %+v, want version 2, not created", second)
	}
	if second.Medallion.Meta.CreatedAt != first.Medallion.Meta.CreatedAt {
		t.Errorf("created_at changed from %s to %s", first.Medallion.Meta.CreatedAt, second.Medallion.Meta.CreatedAt)
	}
	if second.Medallion.Meta.UpdatedAt <= first.Medallion.Meta.UpdatedAt {
		t.Errorf("updated_at %s not after %s", second.Medallion.Meta.UpdatedAt, first.Medallion.Meta.UpdatedAt)
	}

	// An explicit version must be the latest.
	stale := second.Medallion.Clone()
	stale.Meta.Version = 1
	res := e.do(t, "PUT", "/v1/medallions/m1", stale, nil)
	checkError(t, res, http.StatusConflict, api.CodeConflict, "version 2 is stored")

	next := second.Medallion.Clone()
	next.Summary.HighLevel = "third"
	var third api.PutResponse
	e.want(t, http.StatusOK, "PUT", "/v1/medallions/m1", next, &third)
	if third.Medallion.Meta.Version != 3 || third.Medallion.Summary.HighLevel != "third" {
		t.Errorf("third PUT = %+v", third.Medallion.Meta)
	}

	var v1 medallion.Medallion
	e.want(t, http.StatusOK, "GET", "/v1/medallions/m1?version=1", nil, &v1)
	if v1.Summary.HighLevel != "a daemon storing save files" {
		t.Errorf("version 1 summary = %q, want the original", v1.Summary.HighLevel)
	}
	var hist api.HistoryResponse
	e.want(t, http.StatusOK, "GET", "/v1/medallions/m1/history", nil, &hist)
	if len(hist.Versions) != 3 {
		t.Errorf("history has %d versions, want 3", len(hist.Versions))
	}
}

// checkError checks an error response: status, code, and that the message
// contains every want string.
func checkError(t *testing.T, res response, status int, code string, want ...string) api.Error {
	t.Helper()
	if res.status != status {
		t.Fatalf("status %d, want %d; body %s", res.status, status, res.body)
	}
	var body api.Error
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatalf("error body %s: %v", res.body, err)
	}
	if body.Code != code {
		t.Errorf("code %q, want %q (error %q)", body.Code, code, body.Error)
	}
	for _, w := range want {
		if !strings.Contains(body.Error, w) {
			t.Errorf("error %q does not contain %q", body.Error, w)
		}
	}
	return body
}

func TestErrors(t *testing.T) {
	e := start(t)
	e.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("exists", "repo:muse"), nil)
	e.want(t, http.StatusOK, "PUT", "/v1/medallions/exists", sample("exists", "repo:muse"), nil) // now version 2

	invalid := sample("bad", "repo:muse")
	invalid.Meta.SchemaVersion = ""
	invalid.Decisions[0].Confidence = 7
	stale := sample("exists", "repo:muse")
	stale.Meta.Version = 1

	big := `{"meta":{"model":"` + strings.Repeat("x", MaxBodyBytes) + `"}}`

	tests := []struct {
		name         string
		method, path string
		body         any
		header       map[string]string
		status       int
		code         string
		want         []string
		fields       []string // invalid fields that must be named
		absent       string   // a medallion id that must not have been stored
		allow        string   // the Allow header of a 405
	}{
		{name: "invalid medallion", method: "POST", path: "/v1/medallions", body: invalid,
			status: 400, code: api.CodeInvalid, want: []string{"invalid medallion"},
			fields: []string{"meta.schema_version", "decisions[0].confidence"}, absent: "bad"},
		{name: "invalid medallion by PUT", method: "PUT", path: "/v1/medallions/bad", body: invalid,
			status: 400, code: api.CodeInvalid, fields: []string{"decisions[0].confidence"}, absent: "bad"},
		{name: "truncated JSON", method: "POST", path: "/v1/medallions", body: `{"meta": {"medallion_id": "x"`,
			status: 400, code: api.CodeInvalid, want: []string{"invalid JSON", "ends in the middle"}, absent: "x"},
		{name: "JSON syntax error", method: "POST", path: "/v1/medallions", body: `{"meta": ?}`,
			status: 400, code: api.CodeInvalid, want: []string{"invalid JSON at byte 10", "invalid character"}},
		{name: "wrong JSON type", method: "POST", path: "/v1/medallions", body: `{"meta": {"version": "one"}}`,
			status: 400, code: api.CodeInvalid, want: []string{"invalid JSON", "meta.version"}},
		{name: "unknown field", method: "POST", path: "/v1/medallions", body: `{"meta": {"medallion_id": "typo"}, "decisons": []}`,
			status: 400, code: api.CodeInvalid, want: []string{`unknown field "decisons"`}, absent: "typo"},
		{name: "empty body", method: "POST", path: "/v1/medallions", body: "",
			status: 400, code: api.CodeInvalid, want: []string{"empty"}},
		{name: "two JSON values", method: "POST", path: "/v1/medallions", body: `{} {}`,
			status: 400, code: api.CodeInvalid, want: []string{"more than one JSON value"}},
		{name: "body too big", method: "POST", path: "/v1/medallions", body: big,
			status: 413, code: api.CodeInvalid, want: []string{"larger than the 8 MiB limit"}},
		{name: "get absent", method: "GET", path: "/v1/medallions/nope",
			status: 404, code: api.CodeNotFound, want: []string{"medallion nope not found"}},
		{name: "get absent version", method: "GET", path: "/v1/medallions/exists?version=9",
			status: 404, code: api.CodeNotFound, want: []string{"medallion exists version 9 not found"}},
		{name: "get bad version", method: "GET", path: "/v1/medallions/exists?version=first",
			status: 400, code: api.CodeInvalid, want: []string{"version must be", `"first"`}},
		{name: "get bad id", method: "GET", path: "/v1/medallions/bad%20id",
			status: 400, code: api.CodeInvalid, want: []string{`invalid medallion id "bad id"`}},
		{name: "history absent", method: "GET", path: "/v1/medallions/nope/history",
			status: 404, code: api.CodeNotFound, want: []string{"medallion nope not found"}},
		{name: "create existing", method: "POST", path: "/v1/medallions", body: sample("exists", "repo:muse"),
			status: 409, code: api.CodeExists, want: []string{"medallion exists already exists"}},
		{name: "stale update", method: "PUT", path: "/v1/medallions/exists", body: stale,
			status: 409, code: api.CodeConflict, want: []string{"version 1", "version 2 is stored"}},
		{name: "path and body ids differ", method: "PUT", path: "/v1/medallions/other", body: sample("exists", "repo:muse"),
			status: 400, code: api.CodeInvalid, want: []string{`"other"`, `"exists"`}, absent: "other"},
		{name: "origin", method: "POST", path: "/v1/medallions", body: sample("web", "repo:muse"),
			header: map[string]string{"Origin": "http://evil.example"},
			status: 403, code: api.CodeForbidden, want: []string{"Origin"}, absent: "web"},
		{name: "referer", method: "GET", path: "/v1/status", header: map[string]string{"Referer": "http://evil.example/page"},
			status: 403, code: api.CodeForbidden, want: []string{"Referer"}},
		{name: "list without scope", method: "GET", path: "/v1/medallions",
			status: 400, code: api.CodeInvalid, want: []string{"give at least one node or tag"}},
		{name: "list empty node", method: "GET", path: "/v1/medallions?node=",
			status: 400, code: api.CodeInvalid, want: []string{"node must not be empty"}},
		{name: "list bad limit", method: "GET", path: "/v1/medallions?node=repo:muse&limit=0",
			status: 400, code: api.CodeInvalid, want: []string{"limit must be", `"0"`}},
		{name: "list huge limit", method: "GET", path: "/v1/medallions?node=repo:muse&limit=1000000",
			status: 400, code: api.CodeInvalid, want: []string{"limit must be"}},
		{name: "list misspelt parameter", method: "GET", path: "/v1/medallions?nodes=repo:muse",
			status: 400, code: api.CodeInvalid, want: []string{`unknown query parameter "nodes"`}},
		{name: "bad query string", method: "GET", path: "/v1/medallions?node=%zz",
			status: 400, code: api.CodeInvalid, want: []string{"invalid query string"}},
		{name: "unknown endpoint", method: "GET", path: "/v1/nothing",
			status: 404, code: api.CodeNotFound, want: []string{"no endpoint GET /v1/nothing"}},
		{name: "wrong method", method: "DELETE", path: "/v1/medallions/exists",
			status: 405, code: api.CodeInvalid, want: []string{"method DELETE is not allowed", "GET", "PUT"}, allow: "GET, HEAD, PUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do(t, tt.method, tt.path, tt.body, tt.header)
			body := checkError(t, res, tt.status, tt.code, tt.want...)
			for _, f := range tt.fields {
				if !slices.ContainsFunc(body.Fields, func(p medallion.Problem) bool { return p.Field == f }) {
					t.Errorf("fields %v do not name %s", body.Fields, f)
				}
			}
			if len(tt.fields) == 0 && len(body.Fields) > 0 {
				t.Errorf("fields = %v, want none", body.Fields)
			}
			if got := res.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow header %q, want %q", got, tt.allow)
			}
			if tt.absent != "" {
				m, err := e.store.Get(context.Background(), tt.absent)
				if err != nil || m != nil {
					t.Errorf("store has %s after a refused request: %v, %v", tt.absent, m, err)
				}
			}
		})
	}
	if n, err := e.store.Count(context.Background()); err != nil || n != 1 {
		t.Errorf("store count after the error cases = %d, %v; want 1", n, err)
	}
	var m medallion.Medallion
	e.want(t, http.StatusOK, "GET", "/v1/medallions/exists", nil, &m)
	if m.Meta.Version != 2 {
		t.Errorf("version of 'exists' = %d after the error cases, want 2", m.Meta.Version)
	}
}

func TestInternalErrorIsLogged(t *testing.T) {
	e := start(t)
	// A closed store fails every call: the daemon's fault, so 500.
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	res := e.do(t, "GET", "/v1/medallions/m1", nil, nil)
	checkError(t, res, http.StatusInternalServerError, api.CodeInternal, "get m1")
	if logs := e.logs.String(); !strings.Contains(logs, "[ERROR] api: request failed") || !strings.Contains(logs, "path=/v1/medallions/m1") {
		t.Errorf("500 not logged at Error:\n%s", logs)
	}
}

func TestRequestLog(t *testing.T) {
	e := start(t)
	e.want(t, http.StatusNotFound, "GET", "/v1/medallions/m1", nil, nil)
	logs := e.logs.String()
	for _, want := range []string{"[DEBUG] api: request", "method=GET", "path=/v1/medallions/m1", "status=404", "duration=", `error="medallion m1 not found"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("request log lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "[ERROR]") {
		t.Errorf("a 404 was logged at Error:\n%s", logs)
	}
}

func TestShutdown(t *testing.T) {
	e := start(t)
	e.want(t, http.StatusOK, "GET", "/v1/status", nil, nil)
	e.stop(t)
	// Serve closed the listener, which removed the socket file.
	if _, err := os.Lstat(e.sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket after shutdown: %v, want it removed", err)
	}
	if _, err := net.Dial("unix", e.sock); err == nil {
		t.Error("dial after shutdown succeeded")
	}
}
