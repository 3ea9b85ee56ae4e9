package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPOverStdio drives "medallionctl mcp" as an MCP client starts it: a
// process speaking the protocol on its stdin and stdout, which
// medallionctl hands over to "medalliond mcp".
func TestMCPOverStdio(t *testing.T) {
	ctx := context.Background()
	sockDir, err := os.MkdirTemp("", "med")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s", "medallion.sock")
	home := t.TempDir()
	dataDir := filepath.Join(t.TempDir(), "data")
	env := append(os.Environ(), "HOME="+home, "MEDALLION_SOCKET="+sock)
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, name), args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("medalliond", "start", "--data-dir", dataDir, "--socket", sock)
	t.Cleanup(func() { run("medalliond", "stop", "--data-dir", dataDir, "--socket", sock) })
	rule := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(rule, []byte(`{"meta": {"medallion_id": "muse-state", "schema_version": "medallion.v1", "model": "user", "status": "active"},
 "scope": {"graph_nodes": ["repo:muse"], "tags": ["project_state"]},
 "summary": {"high_level": "Muse turns plain-text scores into MIDI.", "subsystems": []},
 "decisions": [], "open_questions": [],
 "affordances": {"recommended_entry_points": [], "avoid_repeating": [], "invariants": ["Never buffer a whole MIDI track in memory"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	run("medallionctl", "put", "-f", rule)

	cmd := exec.Command(filepath.Join(binDir, "medallionctl"), "mcp")
	cmd.Env = env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "medallion" {
		t.Errorf("server name %q", got)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 5 {
		t.Errorf("%d tools, want load, search, get, record and checkpoint", len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "buffer midi"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || !strings.Contains(text, "muse-state:invariant:1 [rule, current] Never buffer a whole MIDI track in memory") {
		t.Errorf("search over stdio: %s", text)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "record", Arguments: map[string]any{"node": []string{"repo:muse"}, "kind": "rule", "text": "Quantize to the bar"}})
	if err != nil || res.IsError {
		t.Fatalf("record over stdio: %v %+v", err, res)
	}
	if out := run("medallionctl", "review"); !strings.Contains(out, "muse-state:invariant:2  invariant  pending  agent:e2e-agent") {
		t.Errorf("review after record:\n%s", out)
	}
}
