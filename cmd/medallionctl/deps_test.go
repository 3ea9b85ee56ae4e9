package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDeps keeps medallionctl a thin client: it must not link the store,
// the watcher, the LLM client or the daemon's own packages. Only the daemon
// opens Badger (it holds a directory lock), and a CLI that pulled them in
// would be large, slow to start and one import away from opening the
// database behind the daemon's back.
func TestDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	cmd := exec.Command(goTool, "list", "-deps", "./cmd/medallionctl")
	cmd.Dir = "../.." // the module root
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps: %v\n%s", err, stderr)
	}
	forbidden := []string{
		"github.com/dgraph-io/badger",
		"github.com/fsnotify/fsnotify",
		"github.com/sashabaranov/go-openai",
		"github.com/robfig/cron",
		"github.com/medallionhq/medallion/internal/store",
		"github.com/medallionhq/medallion/internal/server",
		"github.com/medallionhq/medallion/internal/daemon",
		// The ingestion side: the CLI sees sessions only through the API
		// types (internal/episode holds them without any of this).
		"github.com/medallionhq/medallion/internal/ingest",
		"github.com/medallionhq/medallion/internal/tail",
		"github.com/medallionhq/medallion/internal/watch",
		// Start-up cost: the SessionStart hook runs before every agent
		// session, and net/http (with crypto/tls, x509, http2) doubled the
		// packages to initialise; internal/client speaks HTTP itself.
		"net/http",
		// The MCP SDK (net/http, oauth2, its own JSON): medallionctl mcp
		// hands over to medalliond mcp so that the hook never loads it.
		"github.com/modelcontextprotocol/go-sdk",
		"github.com/medallionhq/medallion/internal/mcpserver",
		"github.com/medallionhq/medallion/internal/search",
		// crypto/sha256 brings Go's FIPS 140 module, two dozen packages
		// initialised at every start: transcript ids and item fingerprints
		// are hashed by internal/shasum instead.
		"crypto/sha256",
		"crypto/internal/fips140",
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps printed nothing")
	}
	for _, dep := range deps {
		for _, bad := range forbidden {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("medallionctl depends on %s, which the list above forbids (see why there)", dep)
			}
		}
	}
	// net stays linked (pflag imports it), but the client dials with
	// system calls: net.Dialer's goroutine and the poller's wake-ups cost
	// the SessionStart hook more than its request (internal/client/dial_unix.go).
	list := exec.Command(goTool, "list", "-f", `{{join .Imports "\n"}}`, "./internal/client")
	list.Dir = cmd.Dir
	imports, err := list.Output()
	if err != nil || !strings.Contains(string(imports), "syscall") {
		t.Fatalf("go list internal/client: %v\n%s", err, imports)
	}
	if slices.Contains(strings.Fields(string(imports)), "net") {
		t.Error("internal/client imports net on this OS; dial the socket with system calls (dial_unix.go)")
	}
	// Guard the guard: the list must be the real one.
	if !strings.Contains(string(out), "github.com/medallionhq/medallion/internal/client\n") {
		t.Errorf("go list -deps does not list internal/client; is it listing the right package?\n%s", out)
	}
}
