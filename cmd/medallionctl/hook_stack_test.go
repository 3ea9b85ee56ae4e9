package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/hookcache"
	"github.com/medallionhq/medallion/internal/scope"
)

// hookStackEnv makes this test binary a SessionStart hook whose goroutine
// stack may not grow past hookStack (hookStackChild).
const hookStackEnv = "MEDALLIONCTL_TEST_HOOK_STACK"

// hookStack is the stack the hook's goroutine has grown to by the time it
// runs (package initialisation grows it from 2 KiB to 4 KiB): a hook that
// needs more makes the runtime copy the stack to a new one of twice the
// size, which touches pages the hook uses for nothing else, and each page
// a process first touches costs it tens of microseconds on some machines
// (issue 12: the hook, whole process, within 1.5× a Go hello-world).
const hookStack = 4 << 10

// hookStackChild runs main as an agent runs the hook, with the socket from
// the environment, on a new goroutine whose stack may grow to hookStack and
// no further: past it the runtime ends the process with "stack overflow".
func hookStackChild(sock string) {
	os.Args = []string{"medallionctl", "--socket", sock, "hook", "claude-code", "--no-start"}
	debug.SetMaxStack(hookStack)
	go underMain() // main exits the process
	select {}
}

// underMain calls main under a frame as big as the one main has under it in
// the hook's process, runtime.main's (152 bytes on amd64 with Go 1.26), so
// that the test has no more room than the hook.
//
//go:noinline
func underMain() {
	var frame [152]byte
	keepFrame(frame[:])
	main()
}

//go:noinline
func keepFrame(b []byte) { b[0] = 1 }

// TestHookFitsItsStack runs the hook's two paths — reading the answer the
// daemon kept, and asking the daemon — in a process whose hook goroutine
// may not grow its stack past what it has when the hook starts. New locals
// on those paths (a bigger frame, a call that moves a buffer onto the
// stack) fail it; split the frame into calls, as readPrivate and the
// client's request do.
func TestHookFitsItsStack(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation deepens every frame: make test runs this without -race")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the hook's kept answers and its own socket are Unix's")
	}
	_, sockFlag := seeded(t)
	sock := strings.TrimPrefix(sockFlag, "--socket=")
	const cwd = "/src/muse"
	hook := func(t *testing.T) (stdout string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		// A goroutine starts with the runtime's smallest stack unless
		// adaptivestackstart has raised it after a collection: none runs
		// before the hook today, and this keeps it so.
		cmd.Env = append(os.Environ(), hookStackEnv+"="+sock, "GODEBUG=adaptivestackstart=0")
		cmd.Stdin = strings.NewReader(hookInput(cwd))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("the hook outgrew its %d-byte stack, or failed: %v\n%s", hookStack, err, firstLines(errb.String(), 40))
		}
		return out.String()
	}

	t.Run("asked", func(t *testing.T) {
		// The daemon answers the hook on a socket of its own
		// (internal/server's ServeHook); the fake daemon does not, and
		// the client's way round for a daemon older than /v1/hook
		// (Load) is not the path a hook takes.
		if err := os.Mkdir(hookcache.Dir(sock), 0o700); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", hookcache.Socket(sock))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/hook" || r.URL.Query().Get("cwd") != cwd {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte("# asked for the stack test\n"))
		}))
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		defer srv.Close()
		if out := hook(t); !strings.Contains(out, "asked for the stack test") {
			t.Fatalf("the hook did not answer from the daemon's hook socket: %s", out)
		}
	})

	t.Run("kept", func(t *testing.T) {
		w, err := hookcache.Open(hookcache.Dir(sock), true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		ag, err := agentNamed("claude-code")
		if err != nil {
			t.Fatal(err)
		}
		budget := (&app{}).hookBudget(ag, hookOptions{budget: defaultHookBudget})
		text := "# kept for the stack test\n\n" + strings.Repeat("A decision and its rationale. ", 200)
		if _, err := w.Put(hookcache.Answer{CWD: cwd, Budget: budget, Nodes: scope.Derive(cwd), Text: text}); err != nil {
			t.Fatal(err)
		}
		// Nothing listens on the hook's socket any more (Open emptied the
		// folder): only the kept answer has this text.
		if out := hook(t); !strings.Contains(out, "kept for the stack test") {
			t.Fatalf("the hook did not answer from the kept answer: %s", out)
		}
	})
}

// firstLines is s up to its n-th line: a stack overflow's report goes on
// for every goroutine.
func firstLines(s string, n int) string {
	lines := strings.SplitAfterN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "")
}
