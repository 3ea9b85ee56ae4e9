package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/hookcache"
	rendering "github.com/medallionhq/medallion/internal/render"
)

// load answers GET /v1/load for the fake daemon like medalliond: the latest
// medallions of the scope rendered by package render. A cwd resolves to
// repo:<its base name>, as the daemon's resolver would for a repo root.
func (f *fakeDaemon) load(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	nodes, tags := q["node"], q["tag"]
	if cwd := q.Get("cwd"); cwd != "" {
		if !filepath.IsAbs(cwd) {
			f.reply(w, http.StatusBadRequest, &api.Error{Error: "cwd must be an absolute path", Code: api.CodeInvalid})
			return
		}
		nodes = []string{"repo:" + filepath.Base(cwd)}
	}
	limit, budget := api.DefaultLoadLimit, rendering.DefaultBudget
	if v := q.Get("limit"); v != "" {
		limit, _ = strconv.Atoi(v)
	}
	if v := q.Get("budget"); v != "" {
		budget, _ = strconv.Atoi(v)
	}
	ms := f.list(nodes, tags, limit)
	res := rendering.Load(ms, rendering.Options{Budget: budget, Format: q.Get("format")})
	resp := api.LoadResponse{Text: res.Text, Tokens: res.Tokens, Budget: budget,
		Scope: append(nodes, tags...), Medallions: []string{}, Cut: res.Cut}
	for _, m := range ms {
		resp.Medallions = append(resp.Medallions, m.Meta.MedallionID)
	}
	if resp.Cut == nil {
		resp.Cut = []string{}
	}
	f.reply(w, http.StatusOK, resp)
}

func TestLoadOutputs(t *testing.T) {
	_, sock := seeded(t)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"load.txt", []string{"load", "--node", "repo:muse"}},
		{"load_budget.txt", []string{"load", "--node", "repo:muse", "--budget", "120"}},
		{"load_none.txt", []string{"load", "--node", "repo:nothing"}},
		{"load.json", []string{"load", "--tag", "project_state", "--limit", "1", "-o", "json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, ok(t, append([]string{sock}, tt.args...)...))
		})
	}
}

func TestLoadCWDIsAbsolute(t *testing.T) {
	f, sock := seeded(t)
	dir := filepath.Join(t.TempDir(), "muse")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	out := ok(t, sock, "load", "--cwd", ".")
	if !strings.Contains(out, "canonical state of repo:muse") {
		t.Errorf("load --cwd . did not load repo:muse:\n%s", out)
	}
	reqs := f.seen()
	if last := reqs[len(reqs)-1]; !strings.Contains(last, "cwd="+strings.ReplaceAll(dir, "/", "%2F")) {
		t.Errorf("request %q does not carry the absolute cwd %s", last, dir)
	}
}

func TestLoadUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"load"}, "load needs a scope"},
		{[]string{"load", "--cwd", ".", "--node", "repo:x"}, "not both"},
		{[]string{"load", "--node", "repo:x", "-o", "html"}, "must be markdown or json"},
		{[]string{"load", "--node", "repo:x", "--format", "table"}, "must be markdown or json"},
		{[]string{"load", "--node", "repo:x", "--budget", "0"}, "--budget must be"},
		{[]string{"hook", "cursor"}, "unknown agent"},
		{[]string{"integrate", "cursor"}, "unknown agent"},
	} {
		r := ctl(t, "", tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

func hookInput(cwd string) string {
	return `{"session_id":"abc","transcript_path":"/tmp/t.jsonl","cwd":"` + cwd + `","hook_event_name":"SessionStart","source":"startup"}`
}

func TestHook(t *testing.T) {
	_, sock := seeded(t)
	r := ctl(t, hookInput("/src/muse"), sock, "hook", "claude-code")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var out hookOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not the hook JSON: %v\n%s", err, r.stdout)
	}
	if out.HookSpecificOutput.HookEventName != "SessionStart" ||
		!strings.HasPrefix(out.HookSpecificOutput.AdditionalContext, "This is the current canonical state of repo:muse") {
		t.Errorf("hook output %+v", out)
	}
	golden(t, "hook.json", r.stdout)
	if want, _ := json.Marshal(out); r.stdout != string(want)+"\n" {
		t.Errorf("the hook printed\n%s\nnot what encoding/json makes of it:\n%s", r.stdout, want)
	}
}

// TestHookFastPath: the command lines an agent runs skip cobra
// (fastHook) and print exactly what the cobra command prints; every other
// spelling of a hook command line goes through cobra, with its errors.
func TestHookFastPath(t *testing.T) {
	f, sock := seeded(t)
	t.Setenv(socketEnv, f.sock)
	viaCobra := func(stdin string, args ...string) result {
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}
		code := a.runCobra(context.Background(), args)
		return result{out.String(), errb.String(), code}
	}
	for _, args := range [][]string{
		{sock, "hook", "claude-code"},
		{"--socket", f.sock, "hook", "codex"},
		{"hook", "gemini"}, // the socket from the environment
		{"hook", "claude-code", "--socket", f.sock, "--budget", "40", "-v"},
		{sock, "hook", "--verbose", "--budget=100000", "claude-code"},
		{sock, "hook", "claude-code", "--no-start", "--budget", "-1"},
	} {
		a := &app{stdin: strings.NewReader(hookInput("/src/muse")), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		if !a.fastHook(context.Background(), args) {
			t.Errorf("%q went through cobra", args)
		}
		fast, slow := ctl(t, hookInput("/src/muse"), args...), viaCobra(hookInput("/src/muse"), args...)
		if fast != slow || fast.code != 0 || !strings.Contains(fast.stdout, "additionalContext") {
			t.Errorf("%q:\nfast  %+v\ncobra %+v", args, fast, slow)
		}
	}
	for _, args := range [][]string{
		{"hook"},
		{"hook", "claude-code", "extra"},
		{"hook", "vim"},
		{"hook", "--help"},
		{"hook", "claude-code", "-h"},
		{"hook", "claude-code", "--budget", "0x10"},
		{"hook", "claude-code", "--budget"},
		{"hook", "claude-code", "--verbose=false"},
		{"hook", "claude-code", "-vv"},
		{"hook", "claude-code", "--nostart"},
		{"hook", "--", "claude-code"},
		{"--socket"},
	} {
		a := &app{stdin: strings.NewReader(hookInput("/src/muse")), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		if a.fastHook(context.Background(), args) {
			t.Errorf("%q did not go through cobra", args)
		}
		if fast, slow := ctl(t, hookInput("/src/muse"), args...), viaCobra(hookInput("/src/muse"), args...); fast != slow {
			t.Errorf("%q:\nrun   %+v\ncobra %+v", args, fast, slow)
		}
	}
}

// TestHookStaysOutOfTheWay: whatever goes wrong, the hook exits 0 with
// nothing on stdout, so Claude Code starts the session as if it were absent.
func TestHookStaysOutOfTheWay(t *testing.T) {
	_, sock := seeded(t)
	down := "--socket=" + socketPath(t)
	// A daemon that accepts and never answers: the hook gives up on it.
	hungPath := socketPath(t)
	ln, err := net.Listen("unix", hungPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	hung := "--socket=" + hungPath
	for _, tt := range []struct {
		name, stdin string
		args        []string
		why         string
	}{
		{"daemon down", hookInput("/src/muse"), []string{down}, "cannot reach medalliond"},
		{"daemon hangs", hookInput("/src/muse"), []string{hung}, "load /src/muse"},
		{"no medallion", hookInput("/src/other"), []string{sock}, "no medallion"},
		{"bad input", "not json", []string{sock}, "decode hook input"},
		{"no cwd", `{"session_id":"x"}`, []string{sock}, "no absolute cwd"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ctl(t, tt.stdin, append(tt.args, "hook", "claude-code")...)
			if r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and nothing", r.code, r.stdout, r.stderr)
			}
			r = ctl(t, tt.stdin, append(tt.args, "hook", "claude-code", "--verbose")...)
			if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, tt.why) {
				t.Errorf("--verbose: exit %d, stdout %q, stderr %q; want 0, nothing and %q", r.code, r.stdout, r.stderr, tt.why)
			}
		})
	}
}

// TestHookStartsADaemonThatIsDown: a hook that finds nothing on the socket
// starts medalliond on that socket and still prints nothing; a daemon that
// is there but hangs, or --no-start, starts nothing.
func TestHookStartsADaemonThatIsDown(t *testing.T) {
	var started []string
	spawnDaemon = func(socket string) (string, error) {
		started = append(started, socket)
		return "/bin/medalliond", nil
	}
	t.Cleanup(func() { spawnDaemon = func(string) (string, error) { return "", errors.New("tests start no daemon") } })

	down := socketPath(t)
	r := ctl(t, hookInput("/src/muse"), "--socket", down, "hook", "claude-code", "--verbose")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "started /bin/medalliond in the background") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if len(started) != 1 || started[0] != down {
		t.Errorf("started %q, want one daemon on %s", started, down)
	}

	// Killed: its socket and the hook's own (hookcache.Socket) are left
	// behind with nobody listening.
	killed := socketPath(t)
	if err := os.Mkdir(hookcache.Dir(killed), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{killed, hookcache.Socket(killed)} {
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
	}
	started = nil
	r = ctl(t, hookInput("/src/muse"), "--socket", killed, "hook", "claude-code", "--verbose")
	if r.code != 0 || r.stdout != "" || len(started) != 1 || started[0] != killed {
		t.Errorf("a killed daemon: exit %d, stdout %q, stderr %q, started %q", r.code, r.stdout, r.stderr, started)
	}

	started = nil
	r = ctl(t, hookInput("/src/muse"), "--socket", down, "hook", "claude-code", "--no-start")
	if r.code != 0 || r.stdout != "" || r.stderr != "" || len(started) != 0 {
		t.Errorf("--no-start: exit %d, stdout %q, stderr %q, started %q", r.code, r.stdout, r.stderr, started)
	}

	// Something listens but never answers: not down, so nothing started.
	hung := socketPath(t)
	ln, err := net.Listen("unix", hung)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r = ctl(t, hookInput("/src/muse"), "--socket", hung, "hook", "claude-code")
	if r.code != 0 || r.stdout != "" || len(started) != 0 {
		t.Errorf("hung daemon: exit %d, stdout %q, started %q", r.code, r.stdout, started)
	}
}

func TestIntegrate(t *testing.T) {
	executable = func() (string, error) { return "/opt/medallion/bin/medallionctl", nil }
	t.Cleanup(func() { executable = os.Executable })
	const hookCmd = "/opt/medallion/bin/medallionctl hook claude-code"
	const existing = `{
  "model": "opus",
  "env": {"BIG": 12345678901234567890},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "cat notes.md"}]}]
  }
}
`
	for _, tt := range []struct {
		name, content string // content "" means no file
	}{
		{"missing", ""},
		{"empty", "\n"},
		{"existing", existing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".claude", "settings.json")
			if tt.content != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.content), 0o640); err != nil {
					t.Fatal(err)
				}
			}

			// A dry run prints the new settings and writes nothing.
			dry := ok(t, "integrate", "claude-code", "--settings", path, "--dry-run")
			if !strings.Contains(dry, hookCmd) {
				t.Errorf("dry run does not show the hook:\n%s", dry)
			}
			if got := readOr(path); got != tt.content {
				t.Fatalf("dry run changed the file to %q", got)
			}

			out := ok(t, "integrate", "claude-code", "--settings", path)
			if !strings.Contains(out, "added the SessionStart hook") {
				t.Errorf("first run says %q", out)
			}
			var doc struct {
				Model string
				Env   map[string]json.RawMessage
				Hooks map[string][]struct {
					Matcher string
					Hooks   []struct {
						Type, Command string
						Timeout       int
					}
				}
			}
			if err := json.Unmarshal([]byte(readOr(path)), &doc); err != nil {
				t.Fatalf("settings written are not JSON: %v", err)
			}
			starts := doc.Hooks["SessionStart"]
			last := starts[len(starts)-1]
			if last.Matcher != "" || len(last.Hooks) != 1 || last.Hooks[0].Command != hookCmd ||
				last.Hooks[0].Type != "command" || last.Hooks[0].Timeout != 5 {
				t.Errorf("SessionStart hooks %+v", starts)
			}
			backups, _ := filepath.Glob(path + ".bak-*")
			if tt.content != "" {
				if tt.name == "existing" && (doc.Model != "opus" || string(doc.Env["BIG"]) != "12345678901234567890" ||
					len(doc.Hooks["PreToolUse"]) != 1 || len(starts) != 2 || starts[0].Hooks[0].Command != "cat notes.md") {
					t.Errorf("other settings were not kept: %+v", doc)
				}
				if len(backups) != 1 || readOr(backups[0]) != tt.content {
					t.Errorf("backups %q do not hold the old settings", backups)
				}
				if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
					t.Errorf("mode of the new settings: %v %v, want 0640 kept", st.Mode(), err)
				}
			} else if len(backups) != 0 {
				t.Errorf("backups %q of a file that did not exist", backups)
			}

			// Idempotent: a second run changes nothing and says so.
			before := readOr(path)
			again := ok(t, "integrate", "claude-code", "--settings", path)
			if !strings.Contains(again, "nothing changed") || readOr(path) != before {
				t.Errorf("second run: %q, file changed: %v", again, readOr(path) != before)
			}
			if b, _ := filepath.Glob(path + ".bak-*"); len(b) != len(backups) {
				t.Errorf("second run made a backup: %q", b)
			}
		})
	}
}

func TestIntegrateMovedBinaryUpdatesTheHook(t *testing.T) {
	path := writeFile(t, "settings.json", `{"hooks":{"SessionStart":[{"matcher":"","hooks":[{"type":"command","command":"/old/medallionctl hook claude-code","timeout":5}]}]}}`)
	executable = func() (string, error) { return "/new dir/medallionctl", nil }
	t.Cleanup(func() { executable = os.Executable })
	ok(t, "integrate", "claude-code", "--settings", path)
	got := readOr(path)
	if strings.Count(got, "hook claude-code") != 1 || !strings.Contains(got, `"'/new dir/medallionctl' hook claude-code"`) {
		t.Errorf("settings after the binary moved:\n%s", got)
	}
}

func TestIntegrateRefusesBrokenSettings(t *testing.T) {
	path := writeFile(t, "settings.json", `{"hooks": [}`)
	r := ctl(t, "", "integrate", "claude-code", "--settings", path)
	if r.code != 1 || !strings.Contains(r.stderr, "nothing was changed") || readOr(path) != `{"hooks": [}` {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func readOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}
