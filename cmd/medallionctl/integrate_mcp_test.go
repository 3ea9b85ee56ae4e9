package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	testCtl  = "/opt/medallion/bin/medallionctl"
	testSock = "/run/user/1000/medallion/medallion.sock"
)

// fakeCtl makes medallionctl's own path testCtl and its socket testSock.
// The entry always names the socket: an MCP client starts the server
// without XDG_RUNTIME_DIR, where the default would resolve elsewhere.
func fakeCtl(t *testing.T) {
	executable = func() (string, error) { return testCtl, nil }
	t.Cleanup(func() { executable = os.Executable })
	t.Setenv(socketEnv, testSock)
}

// TestIntegrateMCPConfigs: --write adds our server in the file's own
// layout, a second run changes nothing, --remove gives the file back.
func TestIntegrateMCPConfigs(t *testing.T) {
	fakeCtl(t)
	for _, tc := range []struct {
		name, client, before, after string
		// restored is what --remove leaves; "" means before.
		restored string
	}{
		{
			name: "no file", client: "cursor", before: "",
			after:    "{\n  \"mcpServers\": {\n    \"medallion\": {\n      \"command\": \"" + testCtl + "\",\n      \"args\": [\n        \"--socket\",\n        \"" + testSock + "\",\n        \"mcp\"\n      ]\n    }\n  }\n}\n",
			restored: "{}\n",
		},
		{
			name: "other servers and settings", client: "gemini",
			before: "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh-mcp\"}\n  },\n  \"hooks\": {}\n}\n",
			after:  "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh-mcp\"},\n    \"medallion\": {\n      \"command\": \"" + testCtl + "\",\n      \"args\": [\n        \"--socket\",\n        \"" + testSock + "\",\n        \"mcp\"\n      ]\n    }\n  },\n  \"hooks\": {}\n}\n",
		},
		{
			name: "an older path of ours is replaced", client: "claude-desktop",
			before:   "{\"mcpServers\": {\"medallion\": {\"command\": \"/old/medallionctl\", \"args\": [\"mcp\"]}}}",
			after:    "{\"mcpServers\": {\"medallion\": {\"command\":\"" + testCtl + "\",\"args\":[\"--socket\",\"" + testSock + "\",\"mcp\"]}}}",
			restored: "{}",
		},
		{
			name: "codex, other tables", client: "codex",
			before: "model = \"o3\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n",
			after:  "model = \"o3\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n\n[mcp_servers.medallion]\ncommand = \"" + testCtl + "\"\nargs = [\"--socket\", \"" + testSock + "\", \"mcp\"]\n",
		},
		{
			name: "codex, ours in the middle", client: "codex",
			before:   "[mcp_servers.medallion]\ncommand = \"/old/medallionctl\"\nargs = [\"mcp\"]\n\n[profiles.fast]\nmodel = \"mini\"\n",
			after:    "[mcp_servers.medallion]\ncommand = \"" + testCtl + "\"\nargs = [\"--socket\", \"" + testSock + "\", \"mcp\"]\n\n[profiles.fast]\nmodel = \"mini\"\n",
			restored: "\n[profiles.fast]\nmodel = \"mini\"\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config")
			if tc.before != "" {
				path = writeFile(t, "config", tc.before)
			}
			out := ok(t, "integrate", "mcp", "--client", tc.client, "--config", path, "--write")
			if !strings.Contains(out, "added the medallion MCP server to "+path) || !strings.Contains(out, "restart "+tc.client) {
				t.Errorf("write says %q", out)
			}
			if got := readOr(path); got != tc.after {
				t.Fatalf("after --write:\n%s\nwant\n%s", got, tc.after)
			}
			if out := ok(t, "integrate", "mcp", "--client", tc.client, "--config", path, "--write"); !strings.Contains(out, "nothing changed") {
				t.Errorf("a second --write says %q", out)
			}
			dry := ok(t, "integrate", "mcp", "--client", tc.client, "--config", path, "--remove", "--dry-run")
			if !strings.Contains(dry, "would remove the medallion MCP server") || readOr(path) != tc.after {
				t.Errorf("--remove --dry-run: %q", dry)
			}
			ok(t, "integrate", "mcp", "--client", tc.client, "--config", path, "--remove")
			want := tc.restored
			if want == "" {
				want = tc.before
			}
			if got := readOr(path); got != want {
				t.Errorf("after --remove:\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestIntegrateMCPPrints(t *testing.T) {
	fakeCtl(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	out := ok(t, "integrate", "mcp", "--client", "codex")
	want := "# add to " + filepath.Join(home, ".codex", "config.toml") + " (or run this command again with --write):\n[mcp_servers.medallion]\ncommand = \"" + testCtl + "\"\nargs = [\"--socket\", \"" + testSock + "\", \"mcp\"]\n"
	if out != want {
		t.Errorf("printed\n%s\nwant\n%s", out, want)
	}
	out = ok(t, "--socket", "/run/other.sock", "integrate", "mcp", "--client", "cursor")
	if !strings.Contains(out, filepath.Join(home, ".cursor", "mcp.json")) || !strings.Contains(out, `"--socket",`) || !strings.Contains(out, `"/run/other.sock",`) {
		t.Errorf("with another socket:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex")); err == nil {
		t.Error("printing wrote a file")
	}
	for _, args := range [][]string{
		{"integrate", "mcp", "--client", "vscode"},
		{"integrate", "mcp"},
		{"integrate", "mcp", "--client", "cursor", "--dry-run"},
		{"integrate", "mcp", "--client", "cursor", "--write", "--remove"},
	} {
		if r := ctl(t, "", args...); r.code != 2 {
			t.Errorf("medallionctl %s: exit %d, want 2 (usage)\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	bad := writeFile(t, "settings.json", `{"mcpServers": []}`)
	if r := ctl(t, "", "integrate", "mcp", "--client", "gemini", "--config", bad, "--write"); r.code != 1 || !strings.Contains(r.stderr, `"mcpServers" is not an object`) {
		t.Errorf("a wrong shape: exit %d, %s", r.code, r.stderr)
	}
}

func TestIsOurTOMLTable(t *testing.T) {
	for line, want := range map[string]bool{
		"[mcp_servers.medallion]":               true,
		"  [ mcp_servers . medallion ]  # ours": true,
		`[mcp_servers."medallion"]`:             true,
		"[mcp_servers.medallion.env]":           false,
		"[[mcp_servers.medallion]]":             false,
		"[mcp_servers.github]":                  false,
		"command = \"[mcp_servers.medallion]\"": false,
		"# [mcp_servers.medallion]":             false,
	} {
		if got := isOurTOMLTable(line); got != want {
			t.Errorf("isOurTOMLTable(%q) = %v, want %v", line, got, want)
		}
	}
}
