package socket

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// dialEnv makes the test binary act as a client of the socket it names: the
// peer-credential test runs it as another user.
const dialEnv = "MEDALLION_SOCKET_TEST_DIAL"

func TestMain(m *testing.M) {
	if path := os.Getenv(dialEnv); path != "" {
		os.Exit(dialAndWaitForClose(path))
	}
	os.Exit(m.Run())
}

// dialAndWaitForClose connects to path, writes a byte and reports (exit 0)
// that the server closed the connection without a word.
func dialAndWaitForClose(path string) int {
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		return 2
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil && !errors.Is(err, syscall.EPIPE) {
		fmt.Fprintln(os.Stderr, "write:", err)
		return 2
	}
	n, err := c.Read(make([]byte, 1))
	if n == 0 && (err == io.EOF || errors.Is(err, syscall.ECONNRESET)) {
		return 0
	}
	fmt.Fprintf(os.Stderr, "read %d bytes, %v; want the connection closed\n", n, err)
	return 1
}

func TestPeerUID(t *testing.T) {
	path := filepath.Join(tempDir(t), "m.sock")
	ln := listen(t, path)
	accepted := make(chan *net.UnixConn, 1)
	go func() {
		c, err := ln.ln.AcceptUnix()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer s.Close()
	uid, err := peerUID(s)
	if err != nil {
		t.Fatalf("peerUID: %v", err)
	}
	if uid != os.Geteuid() {
		t.Errorf("peerUID = %d, want our uid %d", uid, os.Geteuid())
	}
}

func TestAcceptRefusesOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another uid (syscall.Credential)")
	}
	const otherUID = 65534 // nobody

	// The child must be able to execute a copy of the test binary.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	binDir := tempDir(t)
	if err := os.Chmod(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	child := filepath.Join(binDir, "socket.test")
	if err := os.WriteFile(child, bin, 0o755); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})
	dir := filepath.Join(tempDir(t), "d")
	path := filepath.Join(dir, "m.sock")
	ln := listen(t, path, WithLogger(logger))
	// Loosen the file modes by hand, as a careless admin might: the peer
	// check alone must keep the other user out.
	for _, p := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}

	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()

	cmd := exec.Command(child, "-test.run=^$")
	cmd.Env = append(os.Environ(), dialEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client as uid %d: %v\n%s", otherUID, err, out)
	}

	// The other user's connection was dropped inside Accept; the next one,
	// ours, is the first Accept returns.
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("me")); err != nil {
		t.Fatal(err)
	}
	s, ok := <-accepted
	if !ok {
		t.Fatal("Accept failed")
	}
	defer s.Close()
	buf := make([]byte, 2)
	if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "me" {
		t.Fatalf("first accepted connection sent %q, %v; want ours (\"me\")", buf, err)
	}
	if n := ln.Rejected(); n != 1 {
		t.Errorf("Rejected = %d, want 1", n)
	}
	if !strings.Contains(logs.String(), "refused connection from another user") || !strings.Contains(logs.String(), fmt.Sprintf("peer_uid=%d", otherUID)) {
		t.Errorf("log does not report the refused uid:\n%s", logs.String())
	}
}
