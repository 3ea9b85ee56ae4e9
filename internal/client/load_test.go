package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/hookcache"
)

func TestLoadQuery(t *testing.T) {
	var got []string
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		writeJSON(w, http.StatusOK, api.LoadResponse{Text: "state", Tokens: 2, Budget: 1500, Medallions: []string{"m"}})
	}))
	for _, tc := range []struct {
		req  api.LoadRequest
		want string
	}{
		{api.LoadRequest{Nodes: []string{"repo:a", "module:b"}, Tags: []string{"t"}}, "GET /v1/load?node=repo%3Aa&node=module%3Ab&tag=t"},
		{api.LoadRequest{CWD: "/src/a b", Limit: 2, Budget: 300, Format: "json"}, "GET /v1/load?budget=300&cwd=%2Fsrc%2Fa+b&format=json&limit=2"},
	} {
		got = nil
		resp, err := c.Load(context.Background(), tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "state" || resp.Medallions[0] != "m" {
			t.Errorf("response %+v", resp)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("requests %q, want %q", got, tc.want)
		}
	}
}

func TestLoadError(t *testing.T) {
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "this daemon cannot resolve --cwd", Code: api.CodeInvalid})
	}))
	_, err := c.Load(context.Background(), api.LoadRequest{CWD: "/x"})
	if ae, ok := err.(*APIError); !ok || ae.Body.Code != api.CodeInvalid {
		t.Fatalf("err = %v, want a 400 APIError", err)
	}
}

// TestHookText: the hook's load is GET /v1/hook and its answer the text
// alone, "" for 204; a daemon older than /v1/hook (404) is asked
// GET /v1/load instead; other errors are returned.
func TestHookText(t *testing.T) {
	const text = "This is the current canonical state of repo:a …\n\"quoted\" \\ and\n"
	var got []string
	status := map[string]int{}
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
		switch s := status[r.URL.Path]; {
		case r.URL.Path == "/v1/load":
			writeJSON(w, http.StatusOK, api.LoadResponse{Text: "from load", Medallions: []string{"m"}})
		case s == http.StatusOK:
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			_, _ = w.Write([]byte(text))
		case s == http.StatusNoContent:
			w.WriteHeader(s)
		default:
			writeJSON(w, s, api.Error{Error: "no", Code: api.CodeInvalid})
		}
	}))
	ctx := context.Background()
	for _, tc := range []struct {
		status   int
		want     string
		requests []string
	}{
		{http.StatusOK, text, []string{"/v1/hook?budget=1200&cwd=%2Fsrc%2Fa+b"}},
		{http.StatusNoContent, "", []string{"/v1/hook?budget=1200&cwd=%2Fsrc%2Fa+b"}},
		{http.StatusNotFound, "from load", []string{"/v1/hook?budget=1200&cwd=%2Fsrc%2Fa+b", "/v1/load?budget=1200&cwd=%2Fsrc%2Fa+b"}},
	} {
		got, status["/v1/hook"] = nil, tc.status
		s, err := c.HookText(ctx, "/src/a b", 1200)
		if err != nil || s != tc.want {
			t.Errorf("status %d: %q, %v; want %q", tc.status, s, err, tc.want)
		}
		if strings.Join(got, " ") != strings.Join(tc.requests, " ") {
			t.Errorf("status %d: requests %q, want %q", tc.status, got, tc.requests)
		}
	}
	status["/v1/hook"] = http.StatusBadRequest
	if _, err := c.HookText(ctx, "/src/a", 1200); err == nil {
		t.Fatal("a 400 was not an error")
	} else if ae, ok := err.(*APIError); !ok || ae.StatusCode != http.StatusBadRequest {
		t.Errorf("err = %v, want a 400 APIError", err)
	}
}

// TestHookTextAsksTheHookSocket: the hook asks on the daemon's hook socket
// (hookcache.Socket) when something listens there, and on the API's
// socket when nothing does: a daemon that does not serve it, or a stale
// socket file.
func TestHookTextAsksTheHookSocket(t *testing.T) {
	answer := func(text string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/hook" || r.URL.Query().Get("cwd") != "/src/a" {
				writeJSON(w, http.StatusNotFound, api.Error{Error: "unexpected " + r.URL.String()})
				return
			}
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			_, _ = w.Write([]byte(text))
		})
	}
	c := serve(t, answer("from the API's socket"))
	ctx := context.Background()
	if s, err := c.HookText(ctx, "/src/a", 1200); err != nil || s != "from the API's socket" {
		t.Fatalf("no hook socket: %q, %v", s, err)
	}

	hookSock := hookcache.Socket(c.SocketPath())
	if err := os.Mkdir(filepath.Dir(hookSock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", hookSock)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(answer("from the hook's socket"))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	if s, err := c.HookText(ctx, "/src/a", 1200); err != nil || s != "from the hook's socket" {
		t.Fatalf("with a hook socket: %q, %v", s, err)
	}

	// Closed, its file left behind: nobody listens there.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	srv.Close()
	if _, err := os.Stat(hookSock); err != nil {
		t.Fatalf("the stale socket file is gone, so this checks nothing: %v", err)
	}
	if s, err := c.HookText(ctx, "/src/a", 1200); err != nil || s != "from the API's socket" {
		t.Fatalf("a stale hook socket: %q, %v", s, err)
	}
}

// TestHookTextHookSocketUnusable: a hook socket whose path is too long
// for a Unix socket (the API's socket near the limit) is asked on the
// API's socket; with both sockets left behind by a daemon killed, the
// error is the API socket's refusal, which the hook reads as a daemon
// that is down (and starts one).
func TestHookTextHookSocketUnusable(t *testing.T) {
	dir := socketDir(t)
	// 104 bytes: the API's socket fits sun_path (107), the hook's does not.
	sock := filepath.Join(dir, strings.Repeat("d", 104-len(dir)-1))
	if n := len(hookcache.Socket(sock)); n <= 107 {
		t.Fatalf("the hook socket's path is %d bytes: it fits", n)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("from the API's socket"))
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	ctx := context.Background()
	if s, err := New(sock).HookText(ctx, "/src/a", 1200); err != nil || s != "from the API's socket" {
		t.Errorf("a hook socket path too long: %q, %v", s, err)
	}

	// A daemon killed: both socket files stay, nobody listens.
	sock = filepath.Join(socketDir(t), "d.sock")
	if err := os.Mkdir(hookcache.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{sock, hookcache.Socket(sock)} {
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
	}
	_, err = New(sock).HookText(ctx, "/src/a", 1200)
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "cannot reach medalliond at "+sock+":") {
		t.Errorf("a killed daemon's sockets: %v; want the API socket's ECONNREFUSED", err)
	}
}
