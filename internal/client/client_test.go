package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
	"github.com/medallionhq/medallion/internal/version"
)

// socketDir returns a short private directory for Unix sockets: t.TempDir()
// paths can exceed the ~108-byte limit of a socket address.
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "med")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// serve starts h on a fresh Unix socket, standing in for medalliond at the
// edge of the process, and returns a client for it.
func serve(t *testing.T, h http.Handler) *Client {
	t.Helper()
	sock := filepath.Join(socketDir(t), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return New(sock)
}

// recorded is what the fake daemon saw of one request.
type recorded struct {
	Method, Path, Query, ContentType string
	Body                             string
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(api.VersionHeader, version.String())
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func sample(id string) *medallion.Medallion {
	m := &medallion.Medallion{
		Meta: medallion.Meta{
			MedallionID: id, SchemaVersion: medallion.SchemaVersion, Model: "tier0",
			CreatedAt: "2025-11-17T09:30:00.000000Z", UpdatedAt: "2025-11-17T09:30:00.000000Z",
			Status: medallion.StatusActive, Version: 1,
		},
		Scope: medallion.Scope{GraphNodes: []string{"repo:muse"}, Tags: []string{"project_state"}},
	}
	m.Normalize()
	return m
}

func TestRequests(t *testing.T) {
	m := sample("repo-muse")
	put := &api.PutResponse{Created: true, Medallion: m}
	tests := []struct {
		name string
		call func(context.Context, *Client) (any, error)
		want recorded
		// status and body the fake daemon answers with
		status int
		resp   any
	}{
		{
			name:   "status",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Status(ctx) },
			want:   recorded{Method: "GET", Path: "/v1/status"},
			status: 200, resp: &api.Status{Version: "dev", PID: 42, Medallions: 3, StoreBytes: 1 << 20},
		},
		{
			name: "list with scope and limit",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.List(ctx, medallion.Scope{GraphNodes: []string{"repo:muse", "module:cli"}, Tags: []string{"a b"}}, 5)
			},
			want:   recorded{Method: "GET", Path: "/v1/medallions", Query: "limit=5&node=repo%3Amuse&node=module%3Acli&tag=a+b"},
			status: 200, resp: []*medallion.Medallion{m},
		},
		{
			name: "list without limit leaves it to the server",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.List(ctx, medallion.Scope{Tags: []string{"x"}}, 0)
			},
			want:   recorded{Method: "GET", Path: "/v1/medallions", Query: "tag=x"},
			status: 200, resp: []*medallion.Medallion{},
		},
		{
			name:   "get",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Get(ctx, "repo:muse.v2") },
			want:   recorded{Method: "GET", Path: "/v1/medallions/repo:muse.v2"},
			status: 200, resp: m,
		},
		{
			name:   "get version",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.GetVersion(ctx, "repo-muse", 3) },
			want:   recorded{Method: "GET", Path: "/v1/medallions/repo-muse", Query: "version=3"},
			status: 200, resp: m,
		},
		{
			name:   "history",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.History(ctx, "repo-muse") },
			want:   recorded{Method: "GET", Path: "/v1/medallions/repo-muse/history"},
			status: 200, resp: &api.HistoryResponse{ID: "repo-muse", Versions: []medallion.VersionInfo{
				{Version: 1, UpdatedAt: "2025-11-17T09:30:00.000000Z", Model: "tier0", Status: medallion.StatusActive},
			}},
		},
		{
			name:   "create posts the body",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Create(ctx, m) },
			want:   recorded{Method: "POST", Path: "/v1/medallions", ContentType: "application/json", Body: mustJSON(t, m)},
			status: 201, resp: put,
		},
		{
			name:   "put goes to the id",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Put(ctx, m) },
			want:   recorded{Method: "PUT", Path: "/v1/medallions/repo-muse", ContentType: "application/json", Body: mustJSON(t, m)},
			status: 200, resp: put,
		},
		{
			name: "put of an id that cannot be a path is posted for validation",
			call: func(ctx context.Context, c *Client) (any, error) {
				bad := m.Clone()
				bad.Meta.MedallionID = "../etc"
				return c.Put(ctx, bad)
			},
			want: recorded{Method: "POST", Path: "/v1/medallions", ContentType: "application/json", Body: func() string {
				bad := m.Clone()
				bad.Meta.MedallionID = "../etc"
				return mustJSON(t, bad)
			}()},
			status: 201, resp: put,
		},
		{
			name:   "sessions",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Sessions(ctx) },
			want:   recorded{Method: "GET", Path: "/v1/sessions"},
			status: 200, resp: []episode.SessionInfo{sampleSession("s1"), sampleSession("s2/agent-a1")},
		},
		{
			name: "session page",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Session(ctx, "s1/agent-a1", 7, 50)
			},
			want:   recorded{Method: "GET", Path: "/v1/sessions/s1/agent-a1", Query: "after=7&limit=50"},
			status: 200, resp: &api.SessionResponse{Session: sampleSession("s1/agent-a1"), Events: []episode.BufferedEvent{
				{Seq: 8, Event: transcript.Event{ID: "e8", Kind: transcript.KindToolCall, Agent: "claude-code", Tool: "Bash", Command: "go test ./..."}},
			}},
		},
		{
			name:   "session from the start with the default page",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Session(ctx, "s1", 0, 0) },
			want:   recorded{Method: "GET", Path: "/v1/sessions/s1"},
			status: 200, resp: &api.SessionResponse{Session: sampleSession("s1"), Events: []episode.BufferedEvent{}},
		},
		{
			name: "checkpoint posts the request",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Checkpoint(ctx, api.CheckpointRequest{SessionID: "s1", Note: "parser done"})
			},
			want: recorded{Method: "POST", Path: "/v1/checkpoint", ContentType: "application/json",
				Body: `{"session_id":"s1","note":"parser done"}`},
			status: 200, resp: &api.CheckpointResponse{Checkpoints: []api.CheckpointResult{
				{SessionID: "s1", Scope: []string{"repo:muse"}, Trigger: "manual", Events: 12},
			}},
		},
		{
			name: "checkpoint of every session sends an empty request",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Checkpoint(ctx, api.CheckpointRequest{})
			},
			want:   recorded{Method: "POST", Path: "/v1/checkpoint", ContentType: "application/json", Body: `{}`},
			status: 200, resp: &api.CheckpointResponse{Checkpoints: []api.CheckpointResult{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []recorded
			c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				got = append(got, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), string(body)})
				mu.Unlock()
				resp := tt.resp
				switch v := resp.(type) {
				case []*medallion.Medallion:
					resp = api.ListResponse{Medallions: v}
				case []episode.SessionInfo:
					resp = api.SessionsResponse{Sessions: v}
				}
				writeJSON(w, tt.status, resp)
			}))
			res, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 {
				t.Fatalf("server saw %d requests, want 1: %+v", len(got), got)
			}
			if got[0] != tt.want {
				t.Errorf("request\n got %+v\nwant %+v", got[0], tt.want)
			}
			if !reflect.DeepEqual(res, tt.resp) {
				t.Errorf("result\n got %s\nwant %s", mustJSON(t, res), mustJSON(t, tt.resp))
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestListNullIsEmpty(t *testing.T) {
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"medallions":null}`)
	}))
	got, err := c.List(context.Background(), medallion.Scope{Tags: []string{"x"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || len(got) != 0 {
		t.Errorf("List = %#v, want an empty non-nil slice", got)
	}
}

func TestInvalidIDNeverLeavesTheClient(t *testing.T) {
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
	}))
	ctx := context.Background()
	for _, id := range []string{"", "../x", "a/b", "sp ace", strings.Repeat("x", medallion.MaxIDLen+1)} {
		if _, err := c.Get(ctx, id); err == nil || !strings.Contains(err.Error(), "invalid medallion id") {
			t.Errorf("Get(%q) error = %v, want an invalid id error", id, err)
		}
		if _, err := c.History(ctx, id); err == nil || !strings.Contains(err.Error(), "invalid medallion id") {
			t.Errorf("History(%q) error = %v, want an invalid id error", id, err)
		}
	}
}

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		wantCode    string
		wantFields  int
		wantText    string
	}{
		{
			name:   "validation error lists each field",
			status: 400, contentType: "application/json",
			body: `{"error":"invalid medallion","code":"invalid","fields":[` +
				`{"field":"decisions[0].confidence","message":"must be between 0 and 1 (got 1.5)"},` +
				`{"field":"meta.status","message":"required (one of active, stale, superseded)"}]}`,
			wantCode: api.CodeInvalid, wantFields: 2,
			wantText: "invalid medallion\n" +
				"  decisions[0].confidence: must be between 0 and 1 (got 1.5)\n" +
				"  meta.status: required (one of active, stale, superseded)",
		},
		{
			name:   "fields already joined into the message are printed once",
			status: 400, contentType: "application/json",
			body: `{"error":"invalid medallion: meta.medallion_id: required; scope: needs at least one graph node or tag","code":"invalid","fields":[` +
				`{"field":"meta.medallion_id","message":"required"},` +
				`{"field":"scope","message":"needs at least one graph node or tag"}]}`,
			wantCode: api.CodeInvalid, wantFields: 2,
			wantText: "invalid medallion\n" +
				"  meta.medallion_id: required\n" +
				"  scope: needs at least one graph node or tag",
		},
		{
			name:   "not found",
			status: 404, contentType: "application/json",
			body:     `{"error":"medallion \"nope\" not found","code":"not_found"}`,
			wantCode: api.CodeNotFound, wantText: `medallion "nope" not found`,
		},
		{
			name:   "conflict",
			status: 409, contentType: "application/json",
			body:     `{"error":"version conflict: latest is 4, request based on 3","code":"conflict"}`,
			wantCode: api.CodeConflict, wantText: "version conflict: latest is 4, request based on 3",
		},
		{
			name:   "a non-JSON body is kept as the message",
			status: 502, contentType: "text/plain",
			body:     "upstream exploded\n",
			wantText: "medalliond answered 502 Bad Gateway: upstream exploded",
		},
		{
			name:   "an empty body still says what happened",
			status: 500, contentType: "text/plain",
			wantText: "medalliond answered 500 Internal Server Error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			_, err := c.Get(context.Background(), "nope")
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T) is not an *APIError", err, err)
			}
			if ae.StatusCode != tt.status || ae.Body.Code != tt.wantCode || len(ae.Body.Fields) != tt.wantFields {
				t.Errorf("APIError = %+v, want status %d code %q and %d fields", ae, tt.status, tt.wantCode, tt.wantFields)
			}
			if err.Error() != tt.wantText {
				t.Errorf("Error() =\n%s\nwant\n%s", err.Error(), tt.wantText)
			}
			if errors.Is(err, ErrUnreachable) {
				t.Error("an answer from the daemon must not count as unreachable")
			}
		})
	}
}

func TestVersionMismatch(t *testing.T) {
	tests := []struct {
		name      string
		header    string
		wantCalls int
	}{
		{"different version warns once", "v9.9.9-other", 1},
		{"same version is quiet", version.String(), 0},
		{"no header is quiet", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.header != "" {
					w.Header().Set(api.VersionHeader, tt.header)
				}
				io.WriteString(w, `{"version":"x"}`)
			}))
			var mu sync.Mutex
			var calls [][2]string
			c.OnVersionMismatch = func(server, client string) {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, [2]string{server, client})
			}
			for range 3 {
				if _, err := c.Status(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(calls) != tt.wantCalls {
				t.Fatalf("OnVersionMismatch called %d times (%v), want %d", len(calls), calls, tt.wantCalls)
			}
			if tt.wantCalls > 0 && calls[0] != [2]string{tt.header, version.String()} {
				t.Errorf("OnVersionMismatch(%q, %q), want (%q, %q)", calls[0][0], calls[0][1], tt.header, version.String())
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	dir := socketDir(t)

	// A socket file that nobody listens on any more: what a crashed daemon
	// leaves behind.
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()

	tests := []struct {
		name string
		sock string
	}{
		{"missing socket", filepath.Join(dir, "absent.sock")},
		{"nobody listening", stale},
		{"missing directory", filepath.Join(dir, "no", "such", "dir.sock")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.sock).Status(context.Background())
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("error %v does not wrap ErrUnreachable", err)
			}
			want := "cannot reach medalliond at " + tt.sock + ": is it running? (medalliond start, or medalliond service start --user)"
			if err.Error() != want {
				t.Errorf("error = %q\nwant    %q", err, want)
			}
		})
	}
}

func TestUnreachablePermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file permissions")
	}
	dir := socketDir(t)
	sock := filepath.Join(dir, "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chmod(sock, 0o000); err != nil {
		t.Fatal(err)
	}
	_, err = New(sock).Status(context.Background())
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("error %v does not wrap ErrUnreachable", err)
	}
	if want := "cannot reach medalliond at " + sock + ": permission denied"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q, want it to start with %q", err, want)
	}
}

func TestTimeouts(t *testing.T) {
	// The handler holds every request until the client gives up.
	hold := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })

	t.Run("client timeout names the socket and the limit", func(t *testing.T) {
		c := serve(t, hold)
		c.Timeout = 20 * time.Millisecond
		_, err := c.Status(context.Background())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v does not wrap context.DeadlineExceeded", err)
		}
		if want := "did not answer within 20ms"; !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
		if errors.Is(err, ErrUnreachable) {
			t.Error("a daemon that accepted the connection is not unreachable")
		}
	})
	t.Run("caller cancellation is passed through", func(t *testing.T) {
		arrived := make(chan struct{}, 1)
		c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			<-r.Context().Done()
		}))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			// Cancel once the request is in flight, as Ctrl-C would.
			<-arrived
			cancel()
		}()
		_, err := c.Status(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v does not wrap context.Canceled", err)
		}
		if errors.Is(err, ErrUnreachable) {
			t.Error("a cancelled request is not an unreachable daemon")
		}
	})
}

// TestUnreachableMessages covers the wording for each dial failure, including
// EACCES, which a test running as root cannot provoke for real.
func TestUnreachableMessages(t *testing.T) {
	tests := []struct {
		errno syscall.Errno
		want  string
	}{
		{syscall.ENOENT, "cannot reach medalliond at /s.sock: is it running? (medalliond start, or medalliond service start --user)"},
		{syscall.ECONNREFUSED, "cannot reach medalliond at /s.sock: is it running? (medalliond start, or medalliond service start --user)"},
		{syscall.EACCES, "cannot reach medalliond at /s.sock: permission denied (the socket belongs to another user?)"},
	}
	for _, tt := range tests {
		dial := &dialError{os.NewSyscallError("connect", tt.errno)}
		err := error(&unreachableError{socket: "/s.sock", err: dial})
		if err.Error() != tt.want {
			t.Errorf("%v: error = %q, want %q", tt.errno, err, tt.want)
		}
		if !errors.Is(err, ErrUnreachable) || !errors.Is(err, tt.errno) {
			t.Errorf("%v: error must wrap both ErrUnreachable and the errno", tt.errno)
		}
	}
}

func TestSocketPath(t *testing.T) {
	if got := New("/run/x/medallion.sock").SocketPath(); got != "/run/x/medallion.sock" {
		t.Errorf("SocketPath() = %q", got)
	}
}

// TestUserAgent: every request, a streamed one too, names this build's
// version, which New reads once for the client's requests.
func TestUserAgent(t *testing.T) {
	want := "medallion-client/" + version.String()
	var mu sync.Mutex
	var got []string
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.UserAgent())
		mu.Unlock()
		io.WriteString(w, `{"version":"x"}`)
	}))
	if _, err := c.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Export(context.Background(), io.Discard); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Errorf("User-Agent of a request and of an export = %q, want %q for both", got, want)
	}
}
