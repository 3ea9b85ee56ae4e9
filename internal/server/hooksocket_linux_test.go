package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/hookcache"
	"github.com/medallionhq/medallion/internal/socket"
	"github.com/medallionhq/medallion/internal/version"
)

// askHookSocket sends raw, a request as written on the wire, to the hook's
// socket at path and returns the answer, nil when the daemon closed the
// connection without one.
func askHookSocket(t *testing.T, path, raw string) *http.Response {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A daemon that never answers fails the test instead of hanging it.
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the hook socket neither answered nor closed the connection within 10 s")
	}
	if err != nil {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return resp
}

func hookRequest(query string) string {
	return "GET /v1/hook?" + query + " HTTP/1.1\r\nHost: medalliond\r\nConnection: close\r\n\r\n"
}

func readBody(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHookSocket: the hook's own socket answers GET /v1/hook as the API
// does (the same text, status and headers, the answer file kept once the
// answer is written), and nothing else; it is the owner's alone; a request
// it cannot read, or a client that sends nothing, costs that connection
// alone; Shutdown closes it and removes it.
func TestHookSocket(t *testing.T) {
	setRewarm(t, time.Hour, time.Hour) // none in this test
	e, dir, muse, _ := startMuse(t)
	path := filepath.Join(dir, hookcache.SocketName)
	defer func(d time.Duration) { hookConnTimeout = d }(hookConnTimeout)
	hookConnTimeout = 100 * time.Millisecond // for the silent client below
	if err := e.srv.ServeHook(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("hook socket: %v, %v; want a socket, mode 0600", fi.Mode(), err)
	}

	resp := askHookSocket(t, path, hookRequest(hookQuery(muse)))
	if resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("hook socket answered %v", resp)
	}
	text := readBody(t, resp)
	if !strings.Contains(text, "muse-state") {
		t.Fatalf("the hook socket's answer is not the save file:\n%s", text)
	}
	if got := resp.Header.Get(api.VersionHeader); got != version.String() {
		t.Errorf("version header %q", got)
	}
	if resp.ContentLength != int64(len(text)) || !resp.Close {
		t.Errorf("length %d (body %d), close %v", resp.ContentLength, len(text), resp.Close)
	}
	api := e.do(t, "GET", "/v1/hook?"+hookQuery(muse), nil, nil)
	if api.status != http.StatusOK || string(api.body) != text || api.header.Get("Content-Type") != resp.Header.Get("Content-Type") {
		t.Errorf("the API answers %d %q, %q; the hook socket %q, %q", api.status, api.header.Get("Content-Type"), api.body, resp.Header.Get("Content-Type"), text)
	}
	e.srv.loads.settle(false)
	if n := files(t, dir); n != 2 {
		t.Errorf("the folder holds %d entries, want the socket and the answer file", n)
	}

	// No medallion for the folder: 204 and nothing else.
	resp = askHookSocket(t, path, hookRequest(hookQuery(gitRepo(t, "empty"))))
	if resp == nil || resp.StatusCode != http.StatusNoContent || readBody(t, resp) != "" {
		t.Errorf("a folder without medallions: %v", resp)
	}
	// HEAD: the same head, and nothing after it on the wire.
	hc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	_ = hc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(hc, "HEAD /v1/hook?"+hookQuery(muse)+" HTTP/1.1\r\nHost: m\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	wire, err := io.ReadAll(hc)
	hc.Close()
	if err != nil || !strings.HasPrefix(string(wire), "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(string(wire), "\r\n\r\n") {
		t.Errorf("HEAD answered %q, %v; want a head alone", wire, err)
	}
	// Anything but the hook's request: 404, saying where the API is.
	resp = askHookSocket(t, path, "GET /v1/status HTTP/1.1\r\nHost: m\r\n\r\n")
	if resp == nil || resp.StatusCode != http.StatusNotFound || !strings.Contains(readBody(t, resp), "answers only GET /v1/hook") {
		t.Errorf("another path: %v", resp)
	}
	// A bad request, and a client that sends nothing: dropped, and the
	// next hook is answered.
	if resp := askHookSocket(t, path, "hello\r\n\r\n"); resp != nil {
		t.Errorf("a bad request was answered %d", resp.StatusCode)
	}
	idle, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if resp := askHookSocket(t, path, hookRequest(hookQuery(muse))); resp == nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the hook after a silent client: %v", resp)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the hook socket is still there after Shutdown: %v", err)
	}
}

// TestHookSocketSlowClient: a client that sends its request a byte at a
// time, each within the socket's timeout, holds the one serving thread no
// longer than the timeout in all: the next hook is answered meanwhile.
func TestHookSocketSlowClient(t *testing.T) {
	setRewarm(t, time.Hour, time.Hour) // none in this test
	e, dir, muse, _ := startMuse(t)
	path := filepath.Join(dir, hookcache.SocketName)
	defer func(d time.Duration) { hookConnTimeout = d }(hookConnTimeout)
	hookConnTimeout = 200 * time.Millisecond
	if err := e.srv.ServeHook(path); err != nil {
		t.Fatal(err)
	}

	slow, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	stop := make(chan struct{})
	dripped := make(chan struct{})
	go func() {
		defer close(dripped)
		req := hookRequest(hookQuery(muse))
		for i := 0; i < len(req); i++ {
			select {
			case <-stop:
				return
			case <-time.After(hookConnTimeout / 4):
			}
			if _, err := slow.Write([]byte{req[i]}); err != nil {
				return // cut off: what the fix does
			}
		}
	}()
	defer func() { close(stop); <-dripped }()
	time.Sleep(hookConnTimeout / 2) // the slow client is being read

	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	// A slow client cut at one timeout, and the answer, in well under the
	// seconds the slow client would take to send its request.
	_ = c.SetDeadline(start.Add(10 * hookConnTimeout))
	if _, err := io.WriteString(c, hookRequest(hookQuery(muse))); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a hook behind a client sending a byte every %s: %v after %s", hookConnTimeout/4, err, time.Since(start))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d", resp.StatusCode)
	}
}

// TestServeHookOnce: the hook's socket is served once, and not after
// Shutdown: a second listener would be left blocked in accept, on a
// thread of its own, with nobody to close it.
func TestServeHookOnce(t *testing.T) {
	e, dir := startHook(t)
	path := filepath.Join(dir, hookcache.SocketName)
	if err := e.srv.ServeHook(path); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.ServeHook(path); err == nil {
		t.Error("a second ServeHook served")
	}
	if c, err := net.Dial("unix", path); err != nil {
		t.Errorf("the first listener lost its socket: %v", err)
	} else {
		c.Close()
	}
	e.stop(t)
	if err := e.srv.ServeHook(path); err == nil {
		t.Error("ServeHook after Shutdown served")
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("a socket is left after Shutdown: %v", err)
	}
}

// TestServeHookPathTooLong: a socket path longer than a Unix socket
// allows is an error ServeHook returns (the daemon logs it; the hook asks
// on the API's socket), and leaves nothing behind.
func TestServeHookPathTooLong(t *testing.T) {
	e, dir := startHook(t)
	path := filepath.Join(dir, strings.Repeat("s", 120))
	err := e.srv.ServeHook(path)
	if err == nil || !strings.Contains(err.Error(), "bind") {
		t.Fatalf("ServeHook(%d bytes) = %v, want bind's error", len(path), err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("something is left at the path: %v", err)
	}
}

// hookPeerEnv makes TestHookSocketPeerClient, in a copy of the test
// binary run as another user, a client of the hook's socket it names.
const hookPeerEnv = "MEDALLION_HOOK_SOCKET_PEER"

// TestHookSocketPeerClient is the other user's client of
// TestHookSocketRefusesOtherUser: it asks for the hook's answer and
// passes when the daemon closes the connection without one.
func TestHookSocketPeerClient(t *testing.T) {
	path := os.Getenv(hookPeerEnv)
	if path == "" {
		t.Skip("the other user's client of TestHookSocketRefusesOtherUser")
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	// Closed before the request is written (a broken pipe), or with it
	// unread (reset).
	if _, err := io.WriteString(c, hookRequest("cwd=/")); err != nil && !errors.Is(err, syscall.EPIPE) {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(c); len(b) != 0 || (err != nil && !errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("answered %q, %v; want the connection closed without a word", b, err)
	}
}

// TestHookSocketRefusesOtherUser: with the folder and the socket opened to
// everyone by hand, the peer check alone keeps another user out.
func TestHookSocketRefusesOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another uid (syscall.Credential)")
	}
	const otherUID = 65534 // nobody
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	e, dir := startHook(t)
	path := filepath.Join(dir, hookcache.SocketName)
	if err := e.srv.ServeHook(path); err != nil {
		t.Fatal(err)
	}
	binDir := t.TempDir()
	child := filepath.Join(binDir, "server.test")
	if err := os.WriteFile(child, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Dir(binDir), binDir, filepath.Dir(filepath.Dir(dir)), filepath.Dir(dir), dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(child, "-test.run=^TestHookSocketPeerClient$", "-test.v")
	cmd.Env = append(os.Environ(), hookPeerEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestHookSocketPeerClient") {
		t.Fatalf("client as uid %d: %v\n%s", otherUID, err, out)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "hook-socket: refused connection from another user") || !strings.Contains(logs, fmt.Sprintf("peer_uid=%d", otherUID)) {
		t.Errorf("the log does not report the refused uid:\n%s", logs)
	}
}

// TestHookSocketRequestLimit: a request of maxHookRequest bytes is
// answered, one a byte longer is dropped, and the next hook is answered;
// so is it after clients that leave before their answer.
func TestHookSocketRequestLimit(t *testing.T) {
	setRewarm(t, time.Hour, time.Hour) // none in this test
	e, dir, muse, _ := startMuse(t)
	path := filepath.Join(dir, hookcache.SocketName)
	if err := e.srv.ServeHook(path); err != nil {
		t.Fatal(err)
	}
	padded := func(size int) string {
		head := "GET /v1/hook?" + hookQuery(muse) + " HTTP/1.1\r\nHost: medalliond\r\nX-Pad: "
		tail := "\r\nConnection: close\r\n\r\n"
		return head + strings.Repeat("p", size-len(head)-len(tail)) + tail
	}
	if resp := askHookSocket(t, path, padded(maxHookRequest)); resp == nil || resp.StatusCode != http.StatusOK {
		t.Errorf("a request of %d bytes: %v", maxHookRequest, resp)
	}
	if resp := askHookSocket(t, path, padded(maxHookRequest+1)); resp != nil {
		t.Errorf("a request of %d bytes was answered %d", maxHookRequest+1, resp.StatusCode)
	}
	if resp := askHookSocket(t, path, hookRequest(hookQuery(muse))); resp == nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the hook after an oversized request: %v", resp)
	}

	// A client that leaves before its answer: the answer's write fails
	// (EPIPE; the runtime ignores the SIGPIPE of a descriptor other than
	// stdout and stderr), and the next hook is answered. Whether the
	// client is gone before the answer is written is a race (the answer
	// may fit the socket's buffer first), so clients leave until one
	// answer was cut.
	for i := 0; i < 3 || i < 500 && !strings.Contains(e.logs.String(), "broken pipe"); i++ {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, hookRequest(hookQuery(muse))); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if resp := askHookSocket(t, path, hookRequest(hookQuery(muse))); resp == nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the hook after clients that left: %v", resp)
	}
	if !strings.Contains(e.logs.String(), "broken pipe") {
		t.Errorf("no answer was cut by a client that left, so this checks nothing:\n%s", e.logs.String())
	}
}

// TestHookListenerCloseAtOnce: close returns whether the accepting thread
// is blocked in accept(2) already or has yet to get there (shutdown(2)
// of the listening socket leaves nothing to wait for either way).
func TestHookListenerCloseAtOnce(t *testing.T) {
	e, dir := startHook(t)
	path := filepath.Join(dir, hookcache.SocketName)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for i := range 200 {
			l, err := listenHook(path, socket.NewPeers(nil))
			if err != nil {
				t.Error(err)
				return
			}
			go e.srv.acceptHook(l)
			if i%2 == 1 {
				time.Sleep(time.Millisecond) // blocked in accept by now
			}
			l.close()
		}
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("close waits for an accept(2) that nothing woke")
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the socket is left: %v", err)
	}
}
