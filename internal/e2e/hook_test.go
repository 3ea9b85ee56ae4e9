package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/hookcache"
)

// hook runs the SessionStart hook for cwd against d and returns its
// stdout and its --verbose stderr.
func (d *daemon) hook(t *testing.T, cwd string) (stdout, stderr string) {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"session_id": "s", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"})
	cmd := exec.Command(d.ctl, "--socket", d.sock, "hook", "claude-code", "--verbose", "--no-start")
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

const keptNote = "answered from the daemon's kept answer"

// hookKept runs the hook for cwd until it reads the daemon's kept answer
// (the daemon writes the file just after it answers) and returns its
// stdout.
func (d *daemon) hookKept(t *testing.T, cwd string) string {
	t.Helper()
	var out, why string
	waitFor(t, 10*time.Second, "a hook answered from a kept answer", func() bool {
		out, why = d.hook(t, cwd)
		return strings.Contains(why, keptNote)
	})
	return out
}

// TestHookKeptAnswer: with the real binaries, the second hook for a
// folder reads the answer the daemon kept for the first, a new version
// is in the very next hook and kept again without a hook asking, a folder that became a repository of its own
// is asked for anew, a daemon killed leaves answers nobody reads, and a
// daemon that starts or stops leaves none.
// TestHookKeptAnswerWithScopeRules: a daemon with scope rules, which may
// give a folder other nodes than its repository's, keeps an answer per
// folder: a hook in a folder of the repository that no hook ran in asks
// the daemon, and one in a rule's folder gets the rule's scope, not the
// repository's kept answer.
func TestHookKeptAnswerWithScopeRules(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "x")
	docs, sub := filepath.Join(repo, "docs"), filepath.Join(repo, "sub")
	for _, dir := range []string{filepath.Join(repo, ".git"), docs, sub} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(t.TempDir(), "config.hcl")
	rule := fmt.Sprintf("scope_rule \"x-docs\" {\n  path  = %q\n  nodes = [\"repo:x\", \"module:docs\"]\n}\n", docs)
	if err := os.WriteFile(conf, []byte(rule), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemonWith(t, "--config", conf)
	seedLoad(t, d) // medallions of repo:x
	first := d.hookKept(t, repo)
	if !strings.Contains(first, "canonical state of repo:x") {
		t.Fatalf("the repository's hook printed %q", first)
	}
	if got, why := d.hook(t, sub); got != first || strings.Contains(why, keptNote) {
		t.Errorf("a new folder of the repository: stderr %q (want asked), the repository's answer: %v", why, got == first)
	}
	if got, why := d.hook(t, docs); strings.Contains(got, "canonical state of repo:x") || strings.Contains(why, keptNote) {
		t.Errorf("the rule's folder got the repository's answer: stderr %q", why)
	}
}

func TestHookKeptAnswer(t *testing.T) {
	d := startDaemon(t)
	repo := seedLoad(t, d)
	dir := d.sock + ".hook"

	first, why := d.hook(t, repo)
	if !strings.Contains(first, "canonical state of repo:x") || strings.Contains(why, keptNote) {
		t.Fatalf("first hook: stdout %q, stderr %q", first, why)
	}
	if again := d.hookKept(t, repo); again != first {
		t.Fatalf("the kept answer differs from the daemon's:\n%s\n---\n%s", again, first)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("answers folder: %v, %v; want 0700", err, fi.Mode())
	}
	if runtime.GOOS == "linux" {
		// The socket the first hook asked on (server.ServeHook).
		if fi, err := os.Lstat(hookcache.Socket(d.sock)); err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
			t.Errorf("hook socket: %v, %v; want a socket, 0600", err, fi.Mode())
		}
	}

	// A new version of a medallion of the scope: in the next hook.
	f := filepath.Join(t.TempDir(), "m.json")
	m := strings.Replace(loadMedallion(0), "x is a service that stores save files", "x now keeps hook answers as files", 1)
	if err := os.WriteFile(f, []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(d.ctl, "--socket", d.sock, "put", "-f", f).CombinedOutput(); err != nil {
		t.Fatalf("put: %v: %s", err, out)
	}
	// The daemon drops the answer before put returns, and renders it
	// again two seconds later: the next hook asks or reads the new one.
	if got, why := d.hook(t, repo); !strings.Contains(got, "x now keeps hook answers as files") {
		t.Fatalf("hook after a new version: stderr %q\n%s", why, got)
	}
	if got := d.hookKept(t, repo); !strings.Contains(got, "x now keeps hook answers as files") {
		t.Fatalf("the kept answer after a new version:\n%s", got)
	}
	// Another version, and no hook until the daemon has rendered it again
	// (two seconds after the write): the next hook reads it from its file.
	m = strings.Replace(m, "x now keeps hook answers as files", "x renders answers again after writes", 1)
	if err := os.WriteFile(f, []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(d.ctl, "--socket", d.sock, "put", "-f", f).CombinedOutput(); err != nil {
		t.Fatalf("put: %v: %s", err, out)
	}
	waitFor(t, 20*time.Second, "the answer rendered again", func() bool {
		return len(answerFiles(dir)) > 0
	})
	if got, why := d.hook(t, repo); !strings.Contains(got, "x renders answers again after writes") || !strings.Contains(why, keptNote) {
		t.Fatalf("after the rewrite went quiet: stderr %q\n%s", why, got)
	}

	// A folder of the repository no hook ran in yet: the daemon has no
	// scope rules, so the repository's answer is kept for all its folders.
	docs := filepath.Join(repo, "docs")
	if err := os.Mkdir(docs, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, why := d.hook(t, docs); !strings.Contains(got, "x renders answers again after writes") || !strings.Contains(why, keptNote) {
		t.Errorf("a new folder of the repository: stderr %q\n%s", why, got)
	}

	// A folder of the repository that becomes a repository of its own.
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	d.hookKept(t, sub)
	if err := os.Mkdir(filepath.Join(sub, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, why := d.hook(t, sub); strings.Contains(why, keptNote) {
		t.Error("a folder that became a repository was answered from the kept answer of repo:x")
	}

	// Killed: its answers stay on disk, but no hook reads them.
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	if len(answerFiles(dir)) == 0 {
		t.Fatal("the killed daemon's answers are gone: this test checks nothing")
	}
	if got, why := d.hook(t, repo); got != "" || !strings.Contains(why, "cannot reach medalliond") {
		t.Errorf("with the daemon killed, the hook printed %q (stderr %q)", got, why)
	}

	// A new daemon on the socket starts with none; stopped, it leaves none.
	d2 := restartDaemon(t, d)
	if files := answerFiles(dir); len(files) != 0 {
		t.Errorf("a new daemon kept %d answers of the one before", len(files))
	}
	if got, _ := d2.hook(t, repo); !strings.Contains(got, "x renders answers again after writes") {
		t.Errorf("hook after the restart: %q", got)
	}
	d2.stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a stopped daemon left its answers folder: %v", err)
	}
}

// TestHookAnswersReadyAfterStart: a daemon that starts readies the hook
// answers of the folders of recent sessions, so the first session there
// after a restart reads its file instead of asking.
func TestHookAnswersReadyAfterStart(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(t.TempDir(), "muse")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	d := newIngestd(t, root, "")
	d.start()
	line := fmt.Sprintf(`{"type":"user","sessionId":"s-ready","uuid":"u-1","cwd":%q,"timestamp":%q,"message":{"role":"user","content":"make the hook fast"}}`+"\n",
		repo, time.Now().UTC().Format(time.RFC3339))
	appendTo(t, filepath.Join(root, "s-ready.jsonl"), []byte(line))
	waitFor(t, 10*time.Second, "the session's event", func() bool { return d.eventCount("s-ready") == 1 })
	m := strings.NewReplacer("x-state-0", "muse-state", `"repo:x"`, `"repo:muse"`).Replace(loadMedallion(0))
	f := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(f, []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	ctl := filepath.Join(binDir, "medallionctl")
	if out, err := exec.Command(ctl, "--socket", d.sock, "put", "-f", f).CombinedOutput(); err != nil {
		t.Fatalf("put: %v: %s", err, out)
	}

	d.stop()
	d.start()
	dd := &daemon{sock: d.sock, ctl: ctl}
	waitFor(t, 20*time.Second, "the recent folder's answer readied", func() bool {
		return len(answerFiles(d.sock+".hook")) > 0
	})
	out, why := dd.hook(t, repo)
	if !strings.Contains(why, keptNote) || !strings.Contains(out, "canonical state of repo:muse") {
		t.Errorf("the first hook after a start: stderr %q\n%s", why, out)
	}
}

// answerFiles lists the kept answer files in the hook's folder dir: all
// but the hook's socket.
func answerFiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if e.Name() != hookcache.SocketName {
			names = append(names, e.Name())
		}
	}
	return names
}
