package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/version"
)

// testNow is the time the tests run at, as far as medallionctl knows.
var testNow = time.Date(2025, 11, 17, 9, 30, 0, 0, time.UTC)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeCodexEnv); mode != "" && len(os.Args) > 1 && os.Args[1] == "app-server" {
		os.Exit(fakeCodexMain(mode)) // integrate_agents_test.go runs this binary as codex
	}
	// Never the codex of the machine running the tests.
	codexBinary = func() (string, error) { return "", os.ErrNotExist }
	// A fixed build version keeps the golden files independent of how the
	// test binary was built (VCS stamping, -ldflags).
	version.Version = "v1.0.0-test"
	// Relative times ("3m ago") are measured from the fake daemon's clock.
	now = func() time.Time { return testNow }
	// Never a real daemon from a hook that finds the test's socket down:
	// TestHookStartsADaemonThatIsDown replaces this to see the call.
	spawnDaemon = func(string) (string, error) { return "", errors.New("tests start no daemon") }
	if sock := os.Getenv(hookStackEnv); sock != "" {
		hookStackChild(sock) // TestHookFitsItsStack runs this binary as a hook
	}
	os.Exit(m.Run())
}

type result struct {
	stdout, stderr string
	code           int
}

// ctl runs medallionctl in-process with args and stdin.
func ctl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return result{out.String(), errb.String(), code}
}

// ok runs medallionctl and fails the test unless it exits 0 with nothing on
// stderr.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := ctl(t, "", args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("medallionctl %s: exit %d\nstderr: %s\nstdout: %s", strings.Join(args, " "), r.code, r.stderr, r.stdout)
	}
	return r.stdout
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// writeFile writes content to a new file in a test directory and returns
// its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// museJSON is a medallion as a user writes it: no timestamps, no version.
const museJSON = `{
  "meta": {"medallion_id": "muse-project-state", "schema_version": "medallion.v1", "model": "user", "status": "active"},
  "scope": {"graph_nodes": ["repo:muse"], "tags": ["project_state"]},
  "summary": {
    "high_level": "Muse turns text scores into MIDI.\nThe parser is done; streaming output is next.",
    "subsystems": [
      {"name": "parser", "status": "stable", "notes": "hand written, fuzzed"},
      {"name": "midi-writer", "status": "in_progress", "notes": ""}
    ]
  },
  "decisions": [
    {"id": "D-001", "statement": "Write MIDI as a stream, never buffer a whole track", "rationale": "tracks reach 2 GB", "confidence": 0.9},
    {"id": "D-002", "statement": "Keep tempo maps immutable", "rationale": "", "confidence": 0.55}
  ],
  "open_questions": [
    {"id": "Q-001", "question": "Should tempo changes inside a bar be supported?", "blocked_on": ["user_input", "spec"], "priority": "medium"},
    {"id": "Q-002", "question": "Windows line endings in scores?", "blocked_on": [], "priority": "low"}
  ],
  "affordances": {
    "recommended_entry_points": ["cmd/muse/main.go", "internal/parse/parse.go"],
    "avoid_repeating": ["go test ./... without -short takes 20 minutes"],
    "invariants": ["never commit generated .mid files"]
  }
}`

// otherJSON is a second, small medallion in an overlapping scope.
const otherJSON = `{
  "meta": {"medallion_id": "muse-cli", "schema_version": "medallion.v1", "model": "tier0", "status": "stale"},
  "scope": {"graph_nodes": ["repo:muse", "module:cli"], "tags": []},
  "summary": {"high_level": "", "subsystems": []},
  "decisions": [], "open_questions": [],
  "affordances": {"recommended_entry_points": [], "avoid_repeating": [], "invariants": []}
}`

// seeded starts a fake daemon holding muse-project-state (2 versions) and
// muse-cli, stored through the CLI itself.
func seeded(t *testing.T) (*fakeDaemon, string) {
	t.Helper()
	f := startFake(t)
	sock := "--socket=" + f.sock
	ok(t, sock, "put", "-f", writeFile(t, "muse.json", museJSON))
	ok(t, sock, "put", "-f", writeFile(t, "other.json", otherJSON))
	v2 := strings.Replace(museJSON, `"confidence": 0.55`, `"confidence": 0.75`, 1)
	ok(t, sock, "put", "-f", writeFile(t, "muse2.json", v2))
	return f, sock
}

func TestOutputs(t *testing.T) {
	_, sock := seeded(t)
	tests := []struct {
		name   string
		args   []string
		golden string
		// into, for -o json, is what the output must decode into without
		// unknown fields: the API response type.
		into any
	}{
		{"status", []string{"status"}, "status.txt", nil},
		{"status json", []string{"status", "-o", "json"}, "status.json", &api.Status{}},
		{"list", []string{"list", "--node", "repo:muse"}, "list.txt", nil},
		{"list json", []string{"list", "--node", "repo:muse", "--tag", "project_state", "-o", "json"}, "list.json", &api.ListResponse{}},
		{"list with limit", []string{"list", "--node", "repo:muse", "--limit", "1"}, "list_limit.txt", nil},
		{"show", []string{"show", "muse-project-state"}, "show.txt", nil},
		{"show sparse", []string{"show", "muse-cli"}, "show_sparse.txt", nil},
		{"show json", []string{"show", "muse-project-state", "-o", "json"}, "show.json", &medallion.Medallion{}},
		{"show old version json", []string{"show", "muse-project-state", "--version", "1", "-o", "json"}, "show_v1.json", &medallion.Medallion{}},
		{"history", []string{"history", "muse-project-state"}, "history.txt", nil},
		{"history json", []string{"history", "muse-project-state", "-o", "json"}, "history.json", &api.HistoryResponse{}},
		{"version", []string{"version"}, "version.txt", nil},
		{"version json", []string{"version", "-o", "json"}, "version.json", &versions{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := ok(t, append([]string{sock}, tt.args...)...)
			golden(t, tt.golden, out)
			if tt.into == nil {
				return
			}
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tt.into); err != nil {
				t.Fatalf("-o json output does not decode as %T: %v", tt.into, err)
			}
			// Stable: re-encoding the decoded value gives the same bytes.
			var again bytes.Buffer
			if err := writeJSON(&again, tt.into); err != nil {
				t.Fatal(err)
			}
			if again.String() != out {
				t.Errorf("-o json is not the indented API response:\n got:\n%s\nwant:\n%s", out, again.String())
			}
		})
	}
}

func TestShowOldVersion(t *testing.T) {
	_, sock := seeded(t)
	v1 := ok(t, sock, "show", "muse-project-state", "--version", "1")
	if !strings.Contains(v1, "version 1") || !strings.Contains(v1, "(confidence 0.55)") {
		t.Errorf("show --version 1 does not show version 1:\n%s", v1)
	}
	latest := ok(t, sock, "show", "muse-project-state")
	if !strings.Contains(latest, "version 2") || !strings.Contains(latest, "(confidence 0.75)") {
		t.Errorf("show does not show the latest version:\n%s", latest)
	}
}

func TestShowEscapesControlCharacters(t *testing.T) {
	f := startFake(t)
	sock := "--socket=" + f.sock
	m := strings.Replace(otherJSON, `"decisions": []`,
		`"decisions": [{"id": "D-1", "statement": "clear \u001b[2J the screen", "rationale": "tab\there", "confidence": 1}]`, 1)
	ok(t, sock, "put", "-f", writeFile(t, "m.json", m))
	out := ok(t, sock, "show", "muse-cli")
	if strings.ContainsRune(out, '\x1b') {
		t.Errorf("show printed a raw escape character:\n%q", out)
	}
	if !strings.Contains(out, `clear \x1b[2J the screen`) || !strings.Contains(out, "why: tab here") {
		t.Errorf("show output does not show the escaped text:\n%s", out)
	}
}

func TestListNothingFound(t *testing.T) {
	_, sock := seeded(t)
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no match", []string{"list", "--node", "repo:nope", "--tag", "x"},
			"no medallions found for node repo:nope, tag x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ctl(t, "", append([]string{sock}, tt.args...)...)
			if r.code != 0 || r.stdout != "" || r.stderr != tt.wantStderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0, no stdout, stderr %q", r.code, r.stdout, r.stderr, tt.wantStderr)
			}
		})
	}
	// Scripts asking for JSON get an empty list, not a note.
	if out := ok(t, sock, "list", "--node", "repo:nope", "-o", "json"); out != "{\n  \"medallions\": []\n}\n" {
		t.Errorf("list -o json with no match = %q", out)
	}
}

func TestListSendsScope(t *testing.T) {
	f := startFake(t)
	if r := ctl(t, "", "--socket", f.sock, "list", "--node", "repo:muse", "--node", "module:cli", "--tag", "a", "--tag", "b c", "--limit", "3"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := []string{"GET /v1/medallions?limit=3&node=repo%3Amuse&node=module%3Acli&tag=a&tag=b+c"}
	if got := f.seen(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
}

func TestNotFound(t *testing.T) {
	_, sock := seeded(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"show", "nope"}, "medallionctl: medallion \"nope\" not found\n"},
		{[]string{"show", "muse-cli", "--version", "7"}, "medallionctl: version 7 of medallion \"muse-cli\" not found\n"},
		{[]string{"history", "nope"}, "medallionctl: medallion \"nope\" not found\n"},
		{[]string{"show", "no/such"}, "medallionctl: invalid medallion id \"no/such\": want 1-128 ASCII letters, digits or . _ : -\n"},
	}
	for _, tt := range tests {
		r := ctl(t, "", append([]string{sock}, tt.args...)...)
		if r.code != 1 || r.stdout != "" || r.stderr != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
}

func TestPut(t *testing.T) {
	invalid := strings.NewReplacer(
		`"schema_version": "medallion.v1"`, `"schema_version": "medallion.v0"`,
		`"confidence": 0.9`, `"confidence": 1.5`,
		`"priority": "low"`, `"priority": "urgent"`,
	).Replace(museJSON)

	tests := []struct {
		name  string
		file  string // content; "" means -f - with stdin
		stdin string
		args  []string
		// seed is put first, when set.
		seed       string
		wantCode   int
		wantStdout string
		wantStderr []string // each must appear in stderr
		// wantWrites is how many POST/PUT requests reach the daemon.
		wantWrites int
	}{
		{name: "create", file: museJSON, wantStdout: "created muse-project-state (version 1)\n", wantWrites: 1},
		{name: "update", seed: museJSON, file: museJSON, wantStdout: "updated muse-project-state (version 2)\n", wantWrites: 1},
		{name: "from stdin", stdin: otherJSON, wantStdout: "created muse-cli (version 1)\n", wantWrites: 1},
		{name: "update based on the latest version", seed: museJSON,
			file:       strings.Replace(museJSON, `"status": "active"`, `"status": "active", "version": 1`, 1),
			wantStdout: "updated muse-project-state (version 2)\n", wantWrites: 1},
		{name: "json output", file: otherJSON, args: []string{"-o", "json"},
			wantStdout: `"created": true`, wantWrites: 1},
		{name: "invalid medallion lists every field", file: invalid, wantCode: 1, wantWrites: 1, wantStderr: []string{
			"medallionctl: invalid medallion\n",
			"\n  meta.schema_version: must be \"medallion.v1\" (got \"medallion.v0\")\n",
			"\n  decisions[0].confidence: must be between 0 and 1 (got 1.5)\n",
			"\n  open_questions[1].priority: must be one of low, medium, high (got \"urgent\")\n",
		}},
		{name: "invalid id is validated with the rest", wantCode: 1, wantWrites: 1,
			file: strings.Replace(strings.Replace(otherJSON, `"muse-cli"`, `"muse cli"`, 1), `"status": "stale"`, `"status": "old"`, 1),
			wantStderr: []string{
				"\n  meta.medallion_id: must be 1-128 ASCII letters, digits or . _ : - (got \"muse cli\")\n",
				"\n  meta.status: must be one of active, stale, superseded (got \"old\")\n",
			}},
		{name: "unknown field fails before the daemon", wantCode: 1,
			file: strings.Replace(museJSON, `"decisions"`, `"decisons"`, 1),
			wantStderr: []string{
				"medallionctl: ", "does not fit the medallion.v1 format:\n",
				"  decisons: unknown field (did you mean \"decisions\"?)\n",
			}},
		{name: "every shape problem at once, by JSON path", wantCode: 1,
			file: strings.NewReplacer(`"confidence": 0.9`, `"confidense": 0.9`, `"priority": "low"`, `"priority": 2`,
				`"Meta"`, `"meta"`).Replace(museJSON),
			wantStderr: []string{
				"  decisions[0].confidense: unknown field (did you mean \"confidence\"?)\n",
				"  open_questions[1].priority: must be a string, not a number\n",
			}},
		{name: "case-insensitive match is still refused", wantCode: 1,
			file:       strings.Replace(museJSON, `"scope"`, `"Scope"`, 1),
			wantStderr: []string{"  Scope: unknown field (did you mean \"scope\"?)\n"}},
		{name: "malformed JSON names the line", wantCode: 1,
			file:       "{\n  \"meta\": {,\n}",
			wantStderr: []string{"medallionctl: ", "invalid JSON at line 2, column 12: invalid character ','"}},
		{name: "not JSON at all", wantCode: 1, file: "this is not { json",
			wantStderr: []string{"invalid JSON at line 1, column 2"}},
		{name: "truncated", wantCode: 1, file: museJSON[:100],
			wantStderr: []string{"invalid JSON: unexpected end of input"}},
		{name: "two documents", wantCode: 1, file: otherJSON + otherJSON,
			wantStderr: []string{"unexpected data after the medallion"}},
		{name: "empty", wantCode: 1, file: " \n",
			wantStderr: []string{"is empty: want a JSON medallion (see medallionctl schema)\n"}},
		{name: "an array is not a medallion", wantCode: 1, file: "[]",
			wantStderr: []string{"  (document): must be an object, not an array\n"}},
		{name: "stale version gets a hint", seed: museJSON, wantCode: 1, wantWrites: 1,
			file: strings.Replace(museJSON, `"status": "active"`, `"status": "active", "version": 7`, 1),
			wantStderr: []string{
				"medallionctl: version conflict: medallion \"muse-project-state\" is at version 1, the update is based on 7\n",
				"\nhint: 'medallionctl show muse-project-state -o json' prints the latest version to edit\n",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t)
			if tt.seed != "" {
				ok(t, "--socket", f.sock, "put", "-f", writeFile(t, "seed.json", tt.seed))
			}
			before := len(f.seen())
			args := []string{"--socket", f.sock, "put", "-f", "-"}
			if tt.file != "" {
				args[len(args)-1] = writeFile(t, "m.json", tt.file)
			}
			r := ctl(t, tt.stdin, append(args, tt.args...)...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstderr: %s", r.code, tt.wantCode, r.stderr)
			}
			if tt.wantCode == 0 && r.stderr != "" {
				t.Errorf("stderr = %q, want nothing", r.stderr)
			}
			if !strings.Contains(r.stdout, tt.wantStdout) || (tt.wantStdout == "" && r.stdout != "") {
				t.Errorf("stdout = %q, want %q", r.stdout, tt.wantStdout)
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, r.stderr)
				}
			}
			if writes := len(f.seen()) - before; writes != tt.wantWrites {
				t.Errorf("%d requests reached the daemon (%q), want %d", writes, f.seen()[before:], tt.wantWrites)
			}
		})
	}
}

func TestPutStoresWhatItRead(t *testing.T) {
	f := startFake(t)
	ok(t, "--socket", f.sock, "put", "-f", writeFile(t, "m.json", museJSON))
	var want medallion.Medallion
	if err := json.Unmarshal([]byte(museJSON), &want); err != nil {
		t.Fatal(err)
	}
	got := f.latest("muse-project-state")
	if got == nil {
		t.Fatal("nothing stored")
	}
	// The daemon's own fields aside, it must hold exactly the file.
	want.Meta.CreatedAt, want.Meta.UpdatedAt, want.Meta.Version = got.Meta.CreatedAt, got.Meta.UpdatedAt, got.Meta.Version
	want.Normalize()
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("stored\n%+v\nwant\n%+v", got, &want)
	}
}

func TestDaemonDown(t *testing.T) {
	sock := socketPath(t)
	file := writeFile(t, "m.json", museJSON)
	want := "medallionctl: cannot reach medalliond at " + sock + ": is it running? (medalliond start, or medalliond service start --user)\n"
	for _, args := range [][]string{
		{"status"},
		{"list", "--node", "repo:muse"},
		{"list", "--tag", "x", "-o", "json"},
		{"show", "muse-project-state"},
		{"history", "muse-project-state"},
		{"put", "-f", file},
		{"sessions"},
		{"session", "show", "0b9c6a1e"},
		{"checkpoint", "--note", "done"},
	} {
		r := ctl(t, "", append([]string{"--socket", sock}, args...)...)
		if r.code != 1 || r.stdout != "" || r.stderr != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q\nwant exit 1 and stderr %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
}

func TestSocketFromEnvironment(t *testing.T) {
	f := startFake(t)
	t.Setenv(socketEnv, f.sock)
	if out := ok(t, "status"); !strings.Contains(out, "pid 4242") {
		t.Errorf("status via $%s:\n%s", socketEnv, out)
	}
	// --socket wins over the environment.
	other := socketPath(t)
	if r := ctl(t, "", "--socket", other, "status"); r.code != 1 || !strings.Contains(r.stderr, other) {
		t.Errorf("--socket did not override $%s: exit %d, stderr %q", socketEnv, r.code, r.stderr)
	}
}

func TestVersionWithoutDaemon(t *testing.T) {
	sock := socketPath(t)
	r := ctl(t, "", "--socket", sock, "version")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
	}
	want := "medallionctl  " + version.String() + "\n" +
		"medalliond    unknown (cannot reach medalliond at " + sock + ": is it running? (medalliond start, or medalliond service start --user))\n"
	if r.stdout != want {
		t.Errorf("stdout =\n%s\nwant\n%s", r.stdout, want)
	}
	var v versions
	if err := json.Unmarshal([]byte(ok(t, "--socket", sock, "version", "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Client != version.String() || v.Server != "" || !strings.Contains(v.ServerError, "cannot reach medalliond") {
		t.Errorf("version -o json = %+v", v)
	}
}

func TestVersionMismatchWarning(t *testing.T) {
	f := startFake(t)
	f.configure(func(f *fakeDaemon) { f.version = "v9.9.9" })
	r := ctl(t, "", "--socket", f.sock, "status")
	want := "medallionctl: warning: medalliond is version v9.9.9 but medallionctl is " + version.String() + "; restart medalliond after upgrading\n"
	if r.code != 0 || r.stderr != want {
		t.Errorf("exit %d, stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
	if !strings.Contains(r.stdout, "v9.9.9 (pid 4242)") {
		t.Errorf("stdout = %q", r.stdout)
	}
	// version shows both anyway: no separate warning.
	r = ctl(t, "", "--socket", f.sock, "version")
	if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "medalliond    v9.9.9\n") {
		t.Errorf("version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestStatusWaitGivesUp(t *testing.T) {
	sock := socketPath(t)
	r := ctl(t, "", "--socket", sock, "status", "--wait", "150ms")
	want := "medallionctl: waiting up to 150ms for medalliond at " + sock + "\n" +
		"medallionctl: gave up waiting for medalliond after 150ms: cannot reach medalliond at " + sock + ": is it running? (medalliond start, or medalliond service start --user)\n"
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, stdout %q, stderr\n%s\nwant exit 1 and\n%s", r.code, r.stdout, r.stderr, want)
	}
}

// notifyWriter is a goroutine-safe buffer that closes first once something
// has been written, so a test can act on a command's first message.
type notifyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() == 0 {
		close(w.first)
	}
	return w.buf.Write(p)
}

func (w *notifyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestStatusWaitForStartingDaemon(t *testing.T) {
	sock := socketPath(t)
	stderr := &notifyWriter{first: make(chan struct{})}
	var stdout bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--socket", sock, "status", "--wait", "1m"}, strings.NewReader(""), &stdout, stderr)
	}()
	// The daemon starts only once the CLI has found it down and said it
	// is waiting.
	select {
	case <-stderr.first:
	case code := <-done:
		t.Fatalf("status --wait exited %d before the daemon started: %s", code, stderr.String())
	}
	startFakeAt(t, sock)
	if code := <-done; code != 0 {
		t.Fatalf("status --wait exited %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "pid 4242") {
		t.Errorf("stdout = %q", stdout.String())
	}
	if want := "medallionctl: waiting up to 1m0s for medalliond at " + sock + "\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
}

func TestStatusWaitStopsOnDaemonError(t *testing.T) {
	f := startFake(t)
	f.configure(func(f *fakeDaemon) { f.statusErr = &api.Error{Error: "store closed", Code: api.CodeInternal} })
	// A daemon that answers with an error is not retried: waiting an hour
	// would not help.
	r := ctl(t, "", "--socket", f.sock, "status", "--wait", "1h")
	if r.code != 1 || r.stderr != "medallionctl: store closed\n" {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if n := len(f.seen()); n != 1 {
		t.Errorf("status was asked %d times, want 1", n)
	}
}

func TestInterruptedWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &notifyWriter{first: make(chan struct{})}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--socket", socketPath(t), "status", "--wait", "1h"}, strings.NewReader(""), &bytes.Buffer{}, stderr)
	}()
	<-stderr.first
	cancel()
	select {
	case code := <-done:
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("status --wait ignored cancellation")
	}
	if strings.Contains(stderr.String(), "gave up waiting") {
		t.Errorf("an interrupted wait is not a timeout: %s", stderr.String())
	}
}

func TestSchemaNeedsNoDaemon(t *testing.T) {
	out := ok(t, "--socket", socketPath(t), "schema")
	want, err := medallion.JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want)+"\n" {
		t.Errorf("schema output differs from medallion.JSONSchema()")
	}
	if !json.Valid([]byte(out)) {
		t.Error("schema output is not JSON")
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, "medallionctl: unknown command \"bogus\"\nRun 'medallionctl --help' for usage.\n"},
		{[]string{"lst"}, "medallionctl: unknown command \"lst\" (did you mean \"list\"?)\nRun 'medallionctl --help' for usage.\n"},
		{[]string{"list", "--bogus"}, "medallionctl: unknown flag: --bogus\nRun 'medallionctl list --help' for usage.\n"},
		{[]string{"list", "-o", "yaml"}, "medallionctl: invalid argument \"yaml\" for \"-o, --output\" flag: must be table or json, not \"yaml\"\nRun 'medallionctl list --help' for usage.\n"},
		{[]string{"list", "--tag", "x", "--limit", "0"}, "medallionctl: --limit must be at least 1 (got 0)\nRun 'medallionctl list --help' for usage.\n"},
		{[]string{"list"}, "medallionctl: list needs at least one --node or --tag (e.g. --node repo:muse)\nRun 'medallionctl list --help' for usage.\n"},
		{[]string{"list", "extra"}, "medallionctl: list takes 0 argument(s), got 1: [\"extra\"]\nRun 'medallionctl list --help' for usage.\n"},
		{[]string{"show"}, "medallionctl: show needs ID\nRun 'medallionctl show --help' for usage.\n"},
		{[]string{"show", "a", "b"}, "medallionctl: show takes 1 argument(s), got 2: [\"a\" \"b\"]\nRun 'medallionctl show --help' for usage.\n"},
		{[]string{"show", "a", "--version", "-1"}, "medallionctl: --version must be at least 1 (got -1)\nRun 'medallionctl show --help' for usage.\n"},
		{[]string{"history"}, "medallionctl: history needs ID\nRun 'medallionctl history --help' for usage.\n"},
		{[]string{"put"}, "medallionctl: put needs -f FILE (or -f - for stdin)\nRun 'medallionctl put --help' for usage.\n"},
		{[]string{"status", "--wait", "soon"}, "medallionctl: invalid argument \"soon\" for \"--wait\" flag: time: invalid duration \"soon\"\nRun 'medallionctl status --help' for usage.\n"},
		{[]string{"status", "--wait", "-1s"}, "medallionctl: --wait must not be negative (got -1s)\nRun 'medallionctl status --help' for usage.\n"},
		{[]string{"sessions", "x"}, "medallionctl: sessions takes 0 argument(s), got 1: [\"x\"]\nRun 'medallionctl sessions --help' for usage.\n"},
		{[]string{"sessions", "--limit", "-1"}, "medallionctl: --limit must not be negative (got -1)\nRun 'medallionctl sessions --help' for usage.\n"},
		{[]string{"session", "shwo"}, "medallionctl: unknown command \"shwo\" for \"medallionctl session\" (did you mean \"show\"?)\nRun 'medallionctl session --help' for usage.\n"},
		{[]string{"session", "show"}, "medallionctl: show needs ID\nRun 'medallionctl session show --help' for usage.\n"},
		{[]string{"session", "show", "a", "--limit", "0"}, "medallionctl: --limit must be at least 1 (got 0)\nRun 'medallionctl session show --help' for usage.\n"},
		{[]string{"session", "show", "a", "--all", "--limit", "5"}, "medallionctl: give --all or --limit, not both\nRun 'medallionctl session show --help' for usage.\n"},
		{[]string{"checkpoint", "--session", " "}, "medallionctl: --session needs a session id (leave it out to checkpoint every session)\nRun 'medallionctl checkpoint --help' for usage.\n"},
		{[]string{"checkpoint", "now"}, "medallionctl: checkpoint takes 0 argument(s), got 1: [\"now\"]\nRun 'medallionctl checkpoint --help' for usage.\n"},
	}
	for _, tt := range tests {
		r := ctl(t, "", append([]string{"--socket", "/nonexistent/s.sock"}, tt.args...)...)
		if r.code != 2 || r.stdout != "" || r.stderr != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q\nwant exit 2 and %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
}

func TestHelpTeaches(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"medallionctl talks to medalliond", "Examples:", "--socket", "status", "put"}},
		{[]string{}, []string{"Available Commands:"}},
		{[]string{"status", "--help"}, []string{"--wait", "Examples:", "status --wait 10s"}},
		{[]string{"list", "--help"}, []string{"--node", "--tag", "--limit", "-o, --output", "Examples:"}},
		{[]string{"show", "--help"}, []string{"--version", "Examples:", "show muse-project-state"}},
		{[]string{"history", "--help"}, []string{"oldest first", "Examples:"}},
		{[]string{"put", "--help"}, []string{"-f, --file", "meta.version", "Examples:", "put -f -"}},
		{[]string{"schema", "--help"}, []string{"without a running daemon", "Examples:"}},
		{[]string{"version", "--help"}, []string{"exit code is 0", "Examples:"}},
		{[]string{"sessions", "--help"}, []string{"BUFFERED", "--agent", "--scope", "--limit", "Examples:", "sessions --scope repo:muse"}},
		{[]string{"session"}, []string{"show", "medallionctl sessions"}},
		{[]string{"session", "show", "--help"}, []string{"--all", "--limit", "FAILED", "Examples:", "/agent-a1b2 --all"}},
		{[]string{"checkpoint", "--help"}, []string{"--session", "--note", "exit code is 1", "Examples:", "checkpoint --note"}},
		{[]string{"status", "--help"}, []string{"how far behind", "skipped"}},
		{[]string{"completion", "bash"}, []string{"bash completion"}},
	}
	for _, tt := range tests {
		out := ok(t, tt.args...)
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q output does not contain %q:\n%s", tt.args, w, out)
			}
		}
	}
}

// TestCommandNames checks that commands names each subcommand by the
// name cobra matches, and that commandName finds it in a command line.
func TestCommandNames(t *testing.T) {
	a := &app{}
	for _, c := range a.commands() {
		if got := c.build().Name(); got != c.name {
			t.Errorf("command listed as %q is named %q", c.name, got)
		}
	}
	if n := len(a.rootCommand("").Commands()); n != len(a.commands()) {
		t.Errorf("the whole tree has %d commands, want %d", n, len(a.commands()))
	}
	if cmds := a.rootCommand("hook").Commands(); len(cmds) != 1 || cmds[0].Name() != "hook" {
		t.Errorf("tree for hook: %v", cmds)
	}
	tests := []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"hook", "claude-code"}, "hook"},
		{[]string{"--socket", "/s", "hook", "claude-code"}, "hook"},
		{[]string{"--socket=/s", "load", "--node", "x"}, "load"},
		{[]string{"-h"}, ""},
		{[]string{"--", "status"}, "status"},
		{[]string{"help", "status"}, "help"},
		{[]string{"--socket"}, ""},
	}
	for _, tt := range tests {
		if got := commandName(tt.args); got != tt.want {
			t.Errorf("commandName(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestImportRefusesCompressed: a compressed export (the daemon's own are
// zstd) gets the command that imports it, before any daemon is asked.
func TestImportRefusesCompressed(t *testing.T) {
	zst := writeFile(t, "medallions-20260301T120000Z.jsonl.zst", "\x28\xb5\x2f\xfd rest of the frame")
	r := ctl(t, "", "--socket", "/nonexistent/s.sock", "import", zst)
	if want := "decompress it into import: zstd -dc " + zst + " | medallionctl import -"; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("import of a zstd file: exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, want)
	}
	r = ctl(t, "\x1f\x8b\x08\x00", "--socket", "/nonexistent/s.sock", "import", "-")
	if want := "compressed with gzip (the daemon's automatic exports are); decompress it into import: gzip -dc FILE | medallionctl import -"; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("import of gzip on stdin: exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, want)
	}
}
