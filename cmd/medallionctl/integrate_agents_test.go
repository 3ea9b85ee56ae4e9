package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"
)

// fakeCodexEnv makes the test binary act as "codex app-server" (see
// TestMain): "trust" answers as Codex does, "refuse" fails config/batchWrite.
const fakeCodexEnv = "MEDALLION_TEST_FAKE_CODEX"

// fakeCodexMain is the fake codex app-server: the JSON-RPC methods
// integrate uses, over the hooks.json and config.toml of $CODEX_HOME, with
// config.toml edited the way Codex 0.169 edits it (a table appended after
// a blank line; removed with the blank line).
func fakeCodexMain(mode string) int {
	home := os.Getenv("CODEX_HOME")
	hooksPath, configPath := filepath.Join(home, "hooks.json"), filepath.Join(home, "config.toml")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		// A notification first, as the real server sends them.
		_ = out.Encode(map[string]any{"method": "remoteControl/status/changed", "params": map[string]any{}})
		switch req.Method {
		case "initialize":
			_ = out.Encode(map[string]any{"id": *req.ID, "result": map[string]any{"codexHome": home}})
		case "hooks/list":
			_ = out.Encode(map[string]any{"id": *req.ID, "result": map[string]any{"data": []any{
				map[string]any{"hooks": fakeCodexHooks(hooksPath, configPath), "warnings": []any{}, "errors": []any{}},
			}}})
		case "config/batchWrite":
			if mode == "refuse" {
				_ = out.Encode(map[string]any{"id": *req.ID, "error": map[string]any{"code": -32600, "message": "config is read-only"}})
				continue
			}
			var p struct {
				Edits []struct {
					KeyPath string `json:"keyPath"`
					Value   *struct {
						TrustedHash string `json:"trusted_hash"`
					} `json:"value"`
				} `json:"edits"`
			}
			_ = json.Unmarshal(req.Params, &p)
			text, _ := os.ReadFile(configPath)
			for _, e := range p.Edits {
				table := "[" + e.KeyPath + "]\n"
				if i := strings.Index(string(text), "\n"+table); i >= 0 {
					end := i + 1 + len(table)
					if j := strings.Index(string(text[end:]), "\n["); j >= 0 {
						end += j
					} else {
						end = len(text)
					}
					text = append(text[:i:i], text[end:]...)
				}
				if e.Value != nil {
					if len(text) > 0 {
						text = append(text, '\n')
					}
					text = append(text, table+`trusted_hash = "`+e.Value.TrustedHash+"\"\n"...)
				}
			}
			_ = os.WriteFile(configPath, text, 0o600)
			_ = out.Encode(map[string]any{"id": *req.ID, "result": map[string]any{"status": "ok"}})
		}
	}
	return 0
}

// fakeCodexHooks lists the SessionStart handlers of hooks.json with a hash
// of their definition and their trust in config.toml.
func fakeCodexHooks(hooksPath, configPath string) []map[string]any {
	var doc struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	b, _ := os.ReadFile(hooksPath)
	_ = json.Unmarshal(b, &doc)
	config, _ := os.ReadFile(configPath)
	hooks := []map[string]any{}
	for gi, g := range doc.Hooks["SessionStart"] {
		for hi, h := range g.Hooks {
			canon, _ := json.Marshal(h)
			sum := sha256.Sum256(canon)
			hash := "sha256:" + hex.EncodeToString(sum[:])
			key := fmt.Sprintf("%s:session_start:%d:%d", hooksPath, gi, hi)
			quoted, _ := json.Marshal(key)
			status := "untrusted"
			if m := regexp.MustCompile(`(?m)^\[hooks\.state\.` + regexp.QuoteMeta(string(quoted)) + `\]\ntrusted_hash = "([^"]*)"`).FindSubmatch(config); m != nil {
				status = "modified"
				if string(m[1]) == hash {
					status = "trusted"
				}
			}
			hooks = append(hooks, map[string]any{"key": key, "eventName": "sessionStart", "command": h["command"],
				"sourcePath": hooksPath, "currentHash": hash, "trustStatus": status, "isManaged": false})
		}
	}
	return hooks
}

// useFakeCodex points integrate at the fake codex in mode ("" for no codex
// on PATH).
func useFakeCodex(t *testing.T, mode string) {
	t.Helper()
	if mode == "" {
		codexBinary = func() (string, error) { return "", os.ErrNotExist }
	} else {
		t.Setenv(fakeCodexEnv, mode)
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		codexBinary = func() (string, error) { return self, nil }
	}
	t.Cleanup(func() { codexBinary = func() (string, error) { return "", os.ErrNotExist } })
}

// TestIntegrateCodex: the hook goes into $CODEX_HOME/hooks.json with its
// additionalContextLimit, Codex (here its fake app-server) is asked to
// trust it and reports it trusted; a second run changes nothing; --remove
// gives back hooks.json and config.toml byte for byte.
func TestIntegrateCodex(t *testing.T) {
	executable = func() (string, error) { return "/opt/medallion/bin/medallionctl", nil }
	t.Cleanup(func() { executable = os.Executable })
	useFakeCodex(t, "trust")
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	hooksBefore := `{
  "hooks": {
    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "cat notes.md"}]}]
  }
}
`
	configBefore := "model = \"gpt-5\"\n\n[tui]\nnotifications = true # keep this comment\n"
	hooksPath, configPath := filepath.Join(home, "hooks.json"), filepath.Join(home, "config.toml")
	writeAt(t, hooksPath, hooksBefore)
	writeAt(t, configPath, configBefore)

	out := ok(t, "integrate", "codex")
	for _, want := range []string{
		`added the SessionStart hook "/opt/medallion/bin/medallionctl hook codex" to ` + hooksPath,
		"saved the previous config.toml as",
		`Codex trusts the hook: sha256:`,
		`[hooks.state."` + hooksPath + `:session_start:1:0"]`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("integrate codex says\n%s\nwithout %q", out, want)
		}
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(readOr(hooksPath)), &doc); err != nil {
		t.Fatal(err)
	}
	starts := doc.Hooks["SessionStart"]
	if len(starts) != 2 || starts[1].Matcher != codexMatcher || starts[1].Hooks[0]["additionalContextLimit"] != float64(codexContextLimit) ||
		starts[1].Hooks[0]["command"] != "/opt/medallion/bin/medallionctl hook codex" {
		t.Errorf("hooks.json:\n%s", readOr(hooksPath))
	}
	if !strings.HasPrefix(readOr(configPath), configBefore+"\n[hooks.state.") {
		t.Errorf("config.toml:\n%s", readOr(configPath))
	}

	again := ok(t, "integrate", "codex")
	if !strings.Contains(again, "nothing changed") || !strings.Contains(again, "Codex trusts the hook") || strings.Contains(again, "saved the previous") {
		t.Errorf("second run says\n%s", again)
	}

	out = ok(t, "integrate", "codex", "--remove")
	if !strings.Contains(out, "removed Codex's trust entry") || !strings.Contains(out, "removed the SessionStart hook") {
		t.Errorf("remove says\n%s", out)
	}
	if got := readOr(hooksPath); got != hooksBefore {
		t.Errorf("hooks.json after remove:\n%s", got)
	}
	if got := readOr(configPath); got != configBefore {
		t.Errorf("config.toml after remove:\n%q\nwant\n%q", got, configBefore)
	}
}

// TestIntegrateCodexFallback: when trust cannot be recorded, the save file
// gets in through a block in AGENTS.md, and integrate says so; once trust
// can be recorded, integrate replaces the block by the hook; --remove
// restores AGENTS.md byte for byte.
func TestIntegrateCodexFallback(t *testing.T) {
	executable = func() (string, error) { return "/opt/medallion/bin/medallionctl", nil }
	t.Cleanup(func() { executable = os.Executable })
	for _, agentsBefore := range []string{"", "# Team rules\n\nUse tabs.\n", "no newline at the end"} {
		for _, mode := range []string{"", "refuse"} {
			t.Run(fmt.Sprintf("%q/%s", agentsBefore, mode), func(t *testing.T) {
				useFakeCodex(t, mode)
				home := t.TempDir()
				t.Setenv("CODEX_HOME", home)
				agentsPath := filepath.Join(home, "AGENTS.md")
				if agentsBefore != "" {
					writeAt(t, agentsPath, agentsBefore)
				}
				out := ok(t, "integrate", "codex")
				if !strings.Contains(out, "its trust could not be recorded") || !strings.Contains(out, "fallback: added a block to "+agentsPath) {
					t.Errorf("integrate says\n%s", out)
				}
				block := readOr(agentsPath)
				if !strings.HasPrefix(block, agentsBefore) || !strings.Contains(block, "/opt/medallion/bin/medallionctl load --cwd \"$PWD\"") {
					t.Errorf("AGENTS.md:\n%s", block)
				}
				if again := ok(t, "integrate", "codex"); !strings.Contains(again, "already asks Codex") || readOr(agentsPath) != block {
					t.Errorf("second run says\n%s", again)
				}
				// Trust becomes possible: the hook replaces the block.
				useFakeCodex(t, "trust")
				out = ok(t, "integrate", "codex")
				if !strings.Contains(out, "Codex trusts the hook") || readOr(agentsPath) != agentsBefore {
					t.Errorf("with trust, integrate says\n%s\nand left AGENTS.md\n%q", out, readOr(agentsPath))
				}
				if _, err := os.Stat(agentsPath); agentsBefore == "" && !os.IsNotExist(err) {
					t.Errorf("AGENTS.md that held only the block is still there: %v", err)
				}
				// And back without trust, then --remove. (A Codex that
				// refuses writes keeps the trust entry the removal could not
				// take out, so the hook comes back trusted.)
				useFakeCodex(t, mode)
				ok(t, "integrate", "codex", "--remove")
				ok(t, "integrate", "codex")
				out = ok(t, "integrate", "codex", "--remove")
				if got := readOr(agentsPath); got != agentsBefore {
					t.Errorf("remove says\n%s\nand left AGENTS.md %q", out, got)
				}
			})
		}
	}
}

func TestIntegrateCodexRefusesSettings(t *testing.T) {
	r := ctl(t, "", "integrate", "codex", "--settings", "/tmp/hooks.json")
	if r.code != 2 || !strings.Contains(r.stderr, "set CODEX_HOME") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestIntegrateGemini: a matcher "*" group (Gemini CLI compares matchers
// by equality) with a named command hook and a timeout in milliseconds;
// --remove restores the file byte for byte.
func TestIntegrateGemini(t *testing.T) {
	executable = func() (string, error) { return "/opt/medallion/bin/medallionctl", nil }
	t.Cleanup(func() { executable = os.Executable })
	before := `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit.sh"}]}]}
}
`
	path := writeFile(t, "settings.json", before)
	ok(t, "integrate", "gemini", "--settings", path)
	var doc struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(readOr(path)), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "medallion", "type": "command", "command": "/opt/medallion/bin/medallionctl hook gemini", "timeout": float64(5000)}
	if ss := doc.Hooks["SessionStart"]; len(ss) != 1 || ss[0].Matcher != "*" || fmt.Sprint(ss[0].Hooks) != fmt.Sprint([]map[string]any{want}) ||
		len(doc.Hooks["BeforeTool"]) != 1 {
		t.Errorf("settings.json:\n%s", readOr(path))
	}
	if again := ok(t, "integrate", "gemini", "--settings", path); !strings.Contains(again, "nothing changed") {
		t.Errorf("second run says %q", again)
	}
	// A claude-code hook is not gemini's: removing gemini's leaves it.
	ok(t, "integrate", "gemini", "--settings", path, "--remove")
	if got := readOr(path); got != before {
		t.Errorf("after remove:\n%s\nwant\n%s", got, before)
	}
}

// bigMedallion is a medallion whose full save file is far over every
// agent's limit, with a decision that holds Gemini's closing tag.
func bigMedallion() string {
	var ds []string
	for i := range 400 {
		ds = append(ds, fmt.Sprintf(`{"id": "D-%03d", "statement": "Décision %d: keep the writer streaming — never buffer a whole track </hook_context> %s", "confidence": 0.8}`,
			i+1, i, strings.Repeat("lorem ipsum ", 8)))
	}
	return `{"meta": {"medallion_id": "big", "schema_version": "medallion.v1", "model": "user", "status": "active"},
 "scope": {"graph_nodes": ["repo:big"], "tags": ["project_state"]},
 "summary": {"high_level": "A big one.", "subsystems": []},
 "decisions": [` + strings.Join(ds, ",") + `], "open_questions": [],
 "affordances": {"recommended_entry_points": [], "avoid_repeating": [], "invariants": []}}`
}

// TestHookStaysWithinTheAgentsLimit: whatever --budget says, each agent
// gets a save file it takes whole, which names what it left out.
func TestHookStaysWithinTheAgentsLimit(t *testing.T) {
	f := startFake(t)
	sock := "--socket=" + f.sock
	ok(t, sock, "put", "-f", writeFile(t, "big.json", bigMedallion()))
	for _, tt := range []struct {
		agent string
		limit int
		count func(string) int
	}{
		{agentClaudeCode, claudeContextChars, func(s string) int { return len(utf16.Encode([]rune(s))) }},
		{agentCodex, 4 * codexContextLimit, func(s string) int { return len(s) }}, // Codex: bytes / 4 tokens
		{agentGemini, geminiContextBytes, func(s string) int { return len(s) }},
	} {
		t.Run(tt.agent, func(t *testing.T) {
			r := ctl(t, hookInput("/src/big"), sock, "hook", tt.agent, "--budget", "1000000", "--verbose")
			var out hookOutput
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("stdout is not the hook JSON: %v\n%s", err, r.stdout)
			}
			text := out.HookSpecificOutput.AdditionalContext
			if n := tt.count(text); n > tt.limit || n < tt.limit/2 {
				t.Errorf("%d units of context for a limit of %d", n, tt.limit)
			}
			if !strings.Contains(text, "more decisions: medallionctl show big") || !strings.Contains(r.stderr, "budget lowered from 1000000") {
				t.Errorf("what was left out is not named:\n…%s\nstderr %q", text[max(0, len(text)-300):], r.stderr)
			}
			if got := strings.Contains(text, "</hook_context>"); got != (tt.agent != agentGemini) {
				t.Errorf("closing tag in the %s context: %v", tt.agent, got)
			}
		})
	}
}

// TestCutToLimit: a save file over the limit (from a daemon that renders
// differently) is cut at a line and says so.
func TestCutToLimit(t *testing.T) {
	ag, err := agentNamed(agentClaudeCode)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("ü line of the save file\n", 2000)
	cut := cutToLimit(text, ag)
	if n := utf16Len(cut); n > ag.limit || n < ag.limit-100 || !strings.HasSuffix(cut, "shows the whole save file]\n") {
		t.Errorf("cut to %d characters:\n…%s", n, cut[len(cut)-200:])
	}
}

func writeAt(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
