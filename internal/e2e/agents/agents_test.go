// Package agents proves the save-file loop with the real agent CLIs from
// npm (Claude Code, Codex CLI, Gemini CLI), each driven offline by our own
// scripted model server (fakeModel): a constraint the user gives in session
// 1 is captured by medalliond from the agent's own transcript, checkpointed,
// handed to session 2 by the hook "medallionctl integrate" installs, and is
// not stored a second time when session 2 is checkpointed.
//
// It runs only under "make test-agents", which builds the binaries and says
// where the npm packages are cached (MEDALLION_AGENTS_BIN and
// MEDALLION_AGENTS_CACHE); plain "go test ./..." skips it.
package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	envBin   = "MEDALLION_AGENTS_BIN"   // directory holding medalliond and medallionctl
	envCache = "MEDALLION_AGENTS_CACHE" // where the pinned npm packages are installed, reused between runs

	// finalText ends every turn of the fake model; seeing it in a session's
	// events means medalliond has read the session to its end.
	finalText = "Done: the scripted command ran. FAKE-FINAL-TEXT"
	// command is the shell command of the fake model's one tool call.
	command = "echo from-the-fake-model > proof.txt && cat proof.txt"
)

// config is read once from the environment: the binaries and the npm cache.
type config struct{ bin, cache string }

func setup(t *testing.T) config {
	c := config{bin: os.Getenv(envBin), cache: os.Getenv(envCache)}
	if c.bin == "" || c.cache == "" {
		t.Skipf("the real agent CLIs run under make test-agents (%s and %s unset)", envBin, envCache)
	}
	for _, b := range []string{"medalliond", "medallionctl"} {
		if _, err := os.Stat(filepath.Join(c.bin, b)); err != nil {
			t.Fatalf("%s: %v (make test-agents builds it)", b, err)
		}
	}
	return c
}

// cli describes one agent CLI: its npm package, how to point it at the
// fake model, and how to run one headless session.
type cli struct {
	name    string // the agent's name for integrate and the daemon: claude-code, codex, gemini
	pkg     string // npm package@version, pinned: the transcript formats change between releases
	bin     string // the command the package installs
	prepare func(t *testing.T, home, modelURL string) []string
	args    func(prompt string) []string
}

var clis = []cli{
	{
		name: "claude-code", pkg: "@anthropic-ai/claude-code@2.1.330", bin: "claude",
		prepare: func(t *testing.T, home, modelURL string) []string {
			return []string{"ANTHROPIC_BASE_URL=" + modelURL, "ANTHROPIC_API_KEY=fake-key",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1"}
		},
		// As root Claude Code refuses --dangerously-skip-permissions;
		// allowing the one tool the fake model calls is enough.
		args: func(prompt string) []string {
			return []string{"-p", prompt, "--output-format", "json", "--allowedTools", "Bash"}
		},
	},
	{
		name: "codex", pkg: "@openai/codex@0.169.0", bin: "codex",
		// Codex takes a custom provider only from its config file; 0.169
		// refuses wire_api = "chat".
		prepare: func(t *testing.T, home, modelURL string) []string {
			writeFile(t, filepath.Join(home, ".codex", "config.toml"), `model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "`+modelURL+`/v1"
env_key = "FAKE_MODEL_KEY"
wire_api = "responses"
`)
			return []string{"FAKE_MODEL_KEY=fake-key"}
		},
		args: func(prompt string) []string {
			return []string{"exec", "--skip-git-repo-check", "--json", prompt}
		},
	},
	{
		name: "gemini", pkg: "@google/gemini-cli@0.61.0", bin: "gemini",
		// Headless Gemini CLI exits 55 in a folder it does not trust.
		prepare: func(t *testing.T, home, modelURL string) []string {
			writeFile(t, filepath.Join(home, ".gemini", "settings.json"), `{
  "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "security": { "auth": { "selectedType": "gemini-api-key" }, "folderTrust": { "enabled": false } }
}
`)
			return []string{"GOOGLE_GEMINI_BASE_URL=" + modelURL, "GEMINI_API_KEY=fake-key"}
		},
		args: func(prompt string) []string {
			return []string{"-p", prompt, "--approval-mode", "yolo", "--output-format", "json"}
		},
	},
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAgents runs the loop for each agent CLI, one after the other (each
// CLI is a heavy process; the machine may have 2 cores).
func TestAgents(t *testing.T) {
	c := setup(t)
	for _, a := range clis {
		t.Run(a.name, func(t *testing.T) {
			exe := install(t, c.cache, a.pkg, a.bin)
			runLoop(t, c, a, exe)
		})
	}
}

// runLoop is the user's story for one agent: session 1 gives a rule,
// medalliond captures and checkpoints it, integrate installs the hook,
// session 2's model request holds the rule, and after session 2's
// checkpoint the rule is stored once.
func runLoop(t *testing.T, c config, a cli, exe string) {
	marker := "zorblat" + strings.ReplaceAll(a.name, "-", "")
	rule := "Never edit the files under gen/ by hand: regenerate them with the " + marker + " tool."
	// The agent on PATH, as for its users: integrate may run it (Codex's
	// hook trust comes from "codex app-server").
	h := newHarness(t, c, filepath.Dir(exe))
	fm := &fakeModel{command: command, final: finalText}
	srv := httptest.NewServer(fm)
	t.Cleanup(srv.Close)
	h.env = append(h.env, a.prepare(t, h.home, srv.URL)...)
	h.startDaemon()

	// Session 1: the user states the rule.
	h.runAgent(exe, a.args(rule))
	s1 := h.waitSession(a.name, "")
	cp := h.checkpoint()
	if !strings.Contains(h.ctl("load", "--cwd", h.repo), marker) {
		t.Fatalf("after session 1's checkpoint (%s) the save file lacks the rule %q:\n%s", cp, marker, h.ctl("load", "--cwd", h.repo))
	}

	// Install the hook, then session 2: the rule must reach the model.
	t.Logf("integrate %s: %s", a.name, h.ctl("integrate", a.name))
	before := len(fm.Requests())
	const prompt2 = "Carry on with the next step."
	h.runAgent(exe, a.args(prompt2))
	reached := 0
	for _, b := range fm.Requests()[before:] {
		if strings.Contains(b, marker) {
			reached++
		}
	}
	if reached == 0 {
		t.Errorf("none of session 2's %d model requests holds the rule %q from the save file", len(fm.Requests())-before, marker)
	}
	t.Logf("session 2: %d of %d model requests hold the rule", reached, len(fm.Requests())-before)

	// Session 2 checkpointed: the rule is still stored once.
	s2 := h.waitSession(a.name, s1)
	h.checkpoint()
	if s := h.session(s2); s.Checkpoints == 0 || s.Buffered != 0 {
		t.Fatalf("session 2 after the checkpoint: %d checkpoints, %d events still buffered", s.Checkpoints, s.Buffered)
	}
	// The evidence list says where each item came from: a second entry
	// would mean session 2 was read as stating the rule again (the save
	// file taken for the user's words).
	items, evidence := h.itemsWith(marker)
	if len(items) != 1 || len(evidence) != 1 {
		t.Errorf("after session 2's checkpoint %d items and %d evidence entries hold %q, want 1 and 1:\n%s",
			len(items), len(evidence), marker, strings.Join(append(items, evidence...), "\n"))
	}
}

// harness is one agent's world: a temp HOME (so medalliond watches its
// default folders there), XDG dirs inside it, a short runtime dir for the
// socket, and a git repository the sessions work in.
type harness struct {
	t       *testing.T
	home    string
	repo    string
	data    string // medalliond's data dir (default location under HOME)
	runtime string // XDG_RUNTIME_DIR, where the socket is
	env     []string
	daemon  string
	ctlBin  string
}

func newHarness(t *testing.T, c config, path ...string) *harness {
	root := t.TempDir()
	// sun_path is ~104 bytes; t.TempDir() paths can be longer.
	run, err := os.MkdirTemp("", "mra")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	h := &harness{t: t, home: filepath.Join(root, "home"), repo: filepath.Join(root, "work", "shop"), runtime: run,
		daemon: filepath.Join(c.bin, "medalliond"), ctlBin: filepath.Join(c.bin, "medallionctl")}
	h.data = filepath.Join(h.home, ".local", "share", "medallion")
	h.env = append(cleanEnv(),
		"HOME="+h.home,
		"XDG_CONFIG_HOME="+filepath.Join(h.home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(h.home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(h.home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(h.home, ".local", "state"),
		"XDG_RUNTIME_DIR="+run,
		"PATH="+strings.Join(append(append([]string{c.bin}, path...), os.Getenv("PATH")), string(os.PathListSeparator)),
	)
	for _, d := range []string{h.home, h.repo} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// Resolve symlinks (a /tmp that is one): agents record the real cwd.
	if h.repo, err = filepath.EvalSymlinks(h.repo); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=Test", "-c", "user.email=test@example.invalid", "commit", "-q", "--allow-empty", "-m", "start"},
	} {
		h.run(30*time.Second, h.repo, "git", args...)
	}
	return h
}

// cleanEnv is this process's environment without what would point the
// agents or medallion elsewhere: no real keys or endpoints, no socket, no
// agent homes.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "MEDALLION_"),
			strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "CLAUDE"), strings.HasPrefix(k, "OPENAI_"),
			strings.HasPrefix(k, "CODEX_"), strings.HasPrefix(k, "GEMINI_"), strings.HasPrefix(k, "GOOGLE_"), k == "PATH":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// run runs a command in dir with the harness's environment and returns its
// stdout; a failure or timeout fails the test with its output.
func (h *harness) run(timeout time.Duration, dir, name string, args ...string) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, h.env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, tail(stdout.String()), tail(stderr.String()))
	}
	return stdout.String()
}

func tail(s string) string {
	const max = 4000
	if len(s) > max {
		return "…" + s[len(s)-max:]
	}
	return s
}

func (h *harness) ctl(args ...string) string {
	h.t.Helper()
	return h.run(30*time.Second, h.repo, h.ctlBin, args...)
}

// startDaemon starts medalliond in the background with no config: it
// watches the agents' default transcript folders under HOME.
func (h *harness) startDaemon() {
	h.t.Helper()
	h.run(30*time.Second, h.home, h.daemon, "start")
	h.t.Cleanup(func() {
		if h.t.Failed() {
			if log, err := os.ReadFile(filepath.Join(h.data, "medalliond.log")); err == nil {
				h.t.Logf("medalliond.log:\n%s", tail(string(log)))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, h.daemon, "stop", "--wait", "10s")
		cmd.Env = h.env
		if out, err := cmd.CombinedOutput(); err != nil {
			h.t.Errorf("medalliond stop: %v\n%s", err, out)
		}
	})
}

// runAgent runs one headless session of the agent in the repository.
func (h *harness) runAgent(exe string, args []string) {
	h.t.Helper()
	out := h.run(3*time.Minute, h.repo, exe, args...)
	if !strings.Contains(out, "FAKE-FINAL-TEXT") {
		h.t.Fatalf("%s ended without the fake model's final answer:\n%s", filepath.Base(exe), tail(out))
	}
	if got, err := os.ReadFile(filepath.Join(h.repo, "proof.txt")); err != nil || strings.TrimSpace(string(got)) != "from-the-fake-model" {
		h.t.Fatalf("the scripted shell command did not run (proof.txt: %q, %v)", got, err)
	}
	os.Remove(filepath.Join(h.repo, "proof.txt"))
}

type sessionInfo struct {
	ID          string           `json:"id"`
	CWD         string           `json:"cwd"`
	ByKind      map[string]int64 `json:"by_kind"`
	Buffered    int64            `json:"buffered"`
	Checkpoints int64            `json:"checkpoints"`
}

// session is what "medallionctl session show" says of a session.
func (h *harness) session(id string) sessionInfo {
	h.t.Helper()
	var resp struct {
		Session sessionInfo `json:"session"`
	}
	if out := h.ctl("session", "show", id, "-o", "json"); json.Unmarshal([]byte(out), &resp) != nil {
		h.t.Fatalf("session show -o json: not JSON:\n%s", out)
	}
	return resp.Session
}

// waitSession waits until medalliond has read, from the agent's own
// transcript, a session in the repository other than skip with the user's
// prompt and the model's final answer (the agent's last words: the
// session was read to its end), and returns its id. It looks at counts,
// not at the buffer: the user's rule may have been checkpointed at once
// (a correction is a "significant" trigger).
func (h *harness) waitSession(agent, skip string) string {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		out = h.ctl("sessions", "--agent", agent, "-o", "json")
		var list struct {
			Sessions []sessionInfo `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			h.t.Fatalf("sessions -o json: %v", err)
		}
		for _, s := range list.Sessions {
			if s.CWD == h.repo && s.ID != skip && s.ByKind["user_prompt"] > 0 && s.ByKind["assistant_message"] > 0 {
				return s.ID
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	h.t.Fatalf("medalliond did not capture a %s session in %s with the user's prompt and the model's answer; sessions:\n%s", agent, h.repo, tail(out))
	return ""
}

// checkpoint runs "medallionctl checkpoint" and fails on any error in it.
func (h *harness) checkpoint() string {
	h.t.Helper()
	out := h.ctl("checkpoint", "-o", "json")
	var resp struct {
		Checkpoints []struct {
			Error string `json:"error"`
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		h.t.Fatalf("checkpoint -o json: %v\n%s", err, out)
	}
	for _, cp := range resp.Checkpoints {
		if cp.Error != "" {
			h.t.Fatalf("checkpoint failed: %s", out)
		}
	}
	return out
}

// itemsWith returns the items of the repository's medallions (the
// elements of their lists: decisions, affordances.invariants …) that
// mention marker, and apart from them the entries of their evidence lists
// that do, each as "path: JSON".
func (h *harness) itemsWith(marker string) (items, evidence []string) {
	h.t.Helper()
	var list struct {
		Medallions []json.RawMessage `json:"medallions"`
	}
	if err := json.Unmarshal([]byte(h.ctl("list", "--node", "repo:"+filepath.Base(h.repo), "-o", "json")), &list); err != nil {
		h.t.Fatalf("list -o json: %v", err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(path+"."+k, x[k])
			}
		case []any:
			for i, e := range x {
				b, _ := json.Marshal(e)
				switch {
				case !strings.Contains(string(b), marker):
				case path == ".evidence":
					evidence = append(evidence, fmt.Sprintf("%s[%d]: %s", path, i, b))
				default:
					items = append(items, fmt.Sprintf("%s[%d]: %s", path, i, b))
				}
			}
		}
	}
	for _, m := range list.Medallions {
		var v any
		if err := json.Unmarshal(m, &v); err != nil {
			h.t.Fatal(err)
		}
		walk("", v)
	}
	return items, evidence
}
