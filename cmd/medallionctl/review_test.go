package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/server"
	"github.com/medallionhq/medallion/internal/socket"
	"github.com/medallionhq/medallion/internal/store"
)

// startDaemon serves the real local API over a real Badger store on a
// real socket, the way medalliond does, for the commands whose daemon side
// is more than a lookup (review changes medallions; a fake would only test
// itself). configure may set the server's options. It returns the store
// and the --socket flag.
func startDaemon(t *testing.T, configure func(*server.Config)) (*store.Badger, string) {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{GCInterval: -1, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sock := filepath.Join(filepath.Dir(socketPath(t)), "m.sock")
	ln, err := socket.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Store: st, Socket: sock}
	if configure != nil {
		configure(&cfg)
	}
	srv := server.New(cfg)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	})
	return st, "--socket=" + sock
}

// tier1JSON is museJSON after a Tier 1 pass: D-002, Q-002, the invariant,
// one entry point and the summary are the model's and pending; D-001 is
// the user's.
const tier1JSON = `{
  "meta": {"medallion_id": "muse-project-state", "schema_version": "medallion.v1", "model": "tier1:qwen3:8b", "status": "active"},
  "scope": {"graph_nodes": ["repo:muse"], "tags": ["project_state"]},
  "summary": {"high_level": "Muse turns text scores into MIDI.", "subsystems": []},
  "decisions": [
    {"id": "D-001", "statement": "Write MIDI as a stream, never buffer a whole track", "rationale": "tracks reach 2 GB", "confidence": 0.9},
    {"id": "D-002", "statement": "Keep tempo maps immutable", "rationale": "a tempo change is a new map", "confidence": 0.7}
  ],
  "open_questions": [
    {"id": "Q-002", "question": "Windows line endings in scores?", "blocked_on": ["user_input"], "priority": "low"}
  ],
  "affordances": {
    "recommended_entry_points": ["cmd/muse/main.go", "internal/parse/parse.go"],
    "avoid_repeating": [],
    "invariants": ["never commit generated .mid files"]
  },
  "evidence": [
    {"item": "D-002", "session_id": "0b9c6a1e", "event_ids": ["e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"]},
    {"item": "invariant", "text": "never commit generated .mid files", "session_id": "0b9c6a1e", "event_ids": ["e9"]}
  ],
  "review": [
    {"item": "summary", "text": "Muse turns text scores into MIDI.", "source": "tier1:qwen3:8b", "state": "pending"},
    {"item": "D-002", "text": "Keep tempo maps immutable", "source": "tier1:qwen3:8b", "state": "pending"},
    {"item": "Q-002", "text": "Windows line endings in scores?", "source": "tier1:qwen3:8b", "state": "pending"},
    {"item": "invariant", "text": "never commit generated .mid files", "source": "tier1:qwen3:8b", "state": "pending"},
    {"item": "entry_point", "text": "internal/parse/parse.go", "source": "tier1:qwen3:8b", "state": "pending"}
  ]
}`

// cliJSON is a second medallion in the same repo with one pending invariant.
const cliJSON = `{
  "meta": {"medallion_id": "muse-cli", "schema_version": "medallion.v1", "model": "tier1:qwen3:8b", "status": "active"},
  "scope": {"graph_nodes": ["repo:muse", "module:cli"], "tags": []},
  "summary": {"high_level": "", "subsystems": []},
  "decisions": [], "open_questions": [],
  "affordances": {"recommended_entry_points": [], "avoid_repeating": [], "invariants": ["keep flags POSIX"]},
  "review": [{"item": "invariant", "text": "keep flags POSIX", "source": "tier1:qwen3:8b", "state": "pending"}]
}`

// seededReview starts a real daemon holding tier1JSON and a second
// medallion, muse-cli, with one pending invariant, both put by the CLI.
func seededReview(t *testing.T, configure func(*server.Config)) (*store.Badger, string) {
	t.Helper()
	st, sock := startDaemon(t, configure)
	ok(t, sock, "put", "-f", writeFile(t, "m.json", tier1JSON))
	ok(t, sock, "put", "-f", writeFile(t, "cli.json", cliJSON))
	return st, sock
}

func TestReviewOutputs(t *testing.T) {
	_, sock := seededReview(t, nil)
	for _, tt := range []struct {
		name, golden string
		args         []string
		into         any
	}{
		{"all medallions", "review.txt", []string{"review"}, nil},
		{"scope", "review_scope.txt", []string{"review", "--node", "module:cli"}, nil},
		{"json", "review.json", []string{"review", "--node", "repo:muse", "--tag", "project_state", "-o", "json"}, &api.ReviewResponse{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := ok(t, append([]string{sock}, tt.args...)...)
			golden(t, tt.golden, out)
			if tt.into != nil {
				dec := json.NewDecoder(strings.NewReader(out))
				dec.DisallowUnknownFields()
				if err := dec.Decode(tt.into); err != nil {
					t.Fatalf("-o json does not decode as %T: %v", tt.into, err)
				}
			}
		})
	}
	// Nothing to review is a note on stderr, not an error.
	r := ctl(t, "", sock, "review", "--node", "repo:none")
	if r.code != 0 || r.stdout != "" || r.stderr != "no pending items in 0 medallions\n" {
		t.Errorf("empty review: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestReviewActions(t *testing.T) {
	st, sock := seededReview(t, nil)
	ctx := context.Background()
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"review", "approve", "muse-project-state:D-002"},
			"approved muse-project-state:D-002 (version 2): Keep tempo maps immutable\n"},
		{[]string{"review", "approve", "D-002"},
			"muse-project-state:D-002: already approved, nothing changed (version 2)\n"},
		// One medallion holds a model-made invariant:1 in the scope.
		{[]string{"review", "reject", "invariant:1", "--node", "repo:muse", "--tag", "project_state"},
			"rejected muse-project-state:invariant:1 (version 3): never commit generated .mid files\n"},
		{[]string{"review", "edit", "muse-project-state:Q-002", "--text", "Accept CRLF line endings in scores?"},
			"edited muse-project-state:Q-002 (version 4): Accept CRLF line endings in scores?\n"},
		{[]string{"review", "reject", "--all", "--node", "module:cli"},
			"rejected muse-cli:invariant:1 (version 2): keep flags POSIX\n1 item rejected in 1 medallion\n"},
		{[]string{"review", "approve", "--all", "--tag", "project_state"},
			"approved muse-project-state:summary (version 5): Muse turns text scores into MIDI.\n" +
				"approved muse-project-state:entry_point:2 (version 5): internal/parse/parse.go\n" +
				"2 items approved in 1 medallion\n"},
		{[]string{"review", "approve", "--all", "--tag", "project_state"},
			"nothing pending in project_state: nothing approved\n"},
	}
	for _, s := range steps {
		if got := ok(t, append([]string{sock}, s.args...)...); got != s.want {
			t.Errorf("%q:\n got %q\nwant %q", s.args, got, s.want)
		}
	}
	m, err := st.Get(ctx, "muse-project-state")
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Version != 5 || m.Meta.Model != "user" || len(m.Affordances.Invariants) != 0 ||
		m.OpenQuestions[0].Question != "Accept CRLF line endings in scores?" {
		t.Errorf("after the review: %+v", m)
	}
	for _, r := range m.Review {
		if want := map[string]medallion.ReviewState{"invariant": medallion.ReviewRejected}[r.Item]; want != "" && r.State != want ||
			want == "" && r.State != medallion.ReviewApproved {
			t.Errorf("review entry %+v", r)
		}
	}
	// diff shows what each review step did.
	if d := ok(t, sock, "diff", "muse-project-state", "--from", "1", "--to", "2"); !strings.Contains(d, "\nReview (items a model wrote)\n  ~ D-002  pending → approved\n") ||
		!strings.Contains(d, "model: tier1:qwen3:8b → user") {
		t.Errorf("diff of an approve:\n%s", d)
	}
	if d := ok(t, sock, "diff", "muse-project-state", "--from", "2", "--to", "3"); !strings.Contains(d, "\nInvariants\n  - never commit generated .mid files\n") ||
		!strings.Contains(d, "  ~ invariant \"never commit generated .mid files\"  pending → rejected\n") {
		t.Errorf("diff of a reject:\n%s", d)
	}
	// history shows the user's versions.
	hist := ok(t, sock, "history", "muse-project-state")
	if strings.Count(hist, "user") != 4 || !strings.Contains(hist, "tier1:qwen3:8b") {
		t.Errorf("history:\n%s", hist)
	}
	// The rejected invariant is listed as such, and no longer in the load.
	rejected := ok(t, sock, "review", "--state", "rejected")
	if !strings.Contains(rejected, "muse-project-state:invariant  invariant  rejected") || !strings.Contains(rejected, "never commit generated .mid files") {
		t.Errorf("review --state rejected:\n%s", rejected)
	}
	if load := ok(t, sock, "load", "--node", "repo:muse"); strings.Contains(load, ".mid files") || strings.Contains(load, "(unreviewed)") {
		t.Errorf("load after the review:\n%s", load)
	}
	// -o json is the API response.
	var resp api.ReviewActionResponse
	out := ok(t, sock, "review", "edit", "muse-project-state:D-002", "--text", "Tempo maps are immutable", "-o", "json")
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Changes) != 1 || resp.Changes[0].Version != 6 {
		t.Errorf("edit -o json: %s (%v)", out, err)
	}
}

func TestReviewErrors(t *testing.T) {
	_, sock := seededReview(t, nil)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"review", "approve", "muse-project-state:D-009"},
			"medallionctl: no item \"D-009\" in medallion muse-project-state; its model-made items are: summary, D-002, Q-002, invariant:1, entry_point:2\n"},
		{[]string{"review", "reject", "muse-project-state:D-001"},
			"medallionctl: D-001 in medallion muse-project-state was not written by a model: there is nothing to review\n"},
		{[]string{"review", "approve", "invariant:1"},
			"medallionctl: invariant:1 is a model-made item in 2 medallions (muse-cli, muse-project-state): say which, e.g. muse-cli:invariant:1\n"},
		{[]string{"review", "approve", "nope:D-002"}, "medallionctl: medallion nope not found\n"},
	} {
		r := ctl(t, "", append([]string{sock}, tt.args...)...)
		if r.code != 1 || r.stdout != "" || r.stderr != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr\n%q\nwant exit 1 and\n%q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
}

func TestReviewUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"review", "approve"}, "medallionctl: approve needs ITEM\nRun 'medallionctl review approve --help' for usage.\n"},
		{[]string{"review", "approve", "--all"}, "medallionctl: --all needs a scope: --node N or --tag T (e.g. --all --node repo:muse)\nRun 'medallionctl review approve --help' for usage.\n"},
		{[]string{"review", "reject", "D-1", "--all", "--node", "repo:x"}, "medallionctl: reject takes 0 argument(s), got 1: [\"D-1\"]\nRun 'medallionctl review reject --help' for usage.\n"},
		{[]string{"review", "edit", "D-1"}, "medallionctl: edit needs --text with the new text\nRun 'medallionctl review edit --help' for usage.\n"},
		{[]string{"review", "edit", "--all"}, "medallionctl: unknown flag: --all\nRun 'medallionctl review edit --help' for usage.\n"},
		{[]string{"review", "--state", "new"}, "medallionctl: --state must be pending, approved, rejected or all (got \"new\")\nRun 'medallionctl review --help' for usage.\n"},
		{[]string{"review", "aprove", "D-1"}, "medallionctl: unknown command \"aprove\" for \"medallionctl review\" (did you mean \"approve\"?)\nRun 'medallionctl review --help' for usage.\n"},
		{[]string{"llm", "check", "x"}, "medallionctl: check takes 0 argument(s), got 1: [\"x\"]\nRun 'medallionctl llm check --help' for usage.\n"},
	} {
		r := ctl(t, "", append([]string{"--socket", "/nonexistent/s.sock"}, tt.args...)...)
		if r.code != 2 || r.stdout != "" || r.stderr != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q\nwant exit 2 and %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
}

func TestReviewHelpTeaches(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"review", "--help"}, []string{"MEDALLION_ID:REF", "invariant:2", "avoid_repeating:1", "entry_point:3", "summary",
			"(unreviewed)", "required", "--state", "Examples:", "review approve --all --node repo:muse", "Available Commands:"}},
		{[]string{"review", "approve", "--help"}, []string{"--all", "--node", "MEDALLION_ID:REF", "Examples:", "approve muse-state:D-003"}},
		{[]string{"review", "reject", "--help"}, []string{"never adds it again", "invariant:2", "Examples:"}},
		{[]string{"review", "edit", "--help"}, []string{"--text", "and approves it", "Examples:"}},
		{[]string{"llm", "check", "--help"}, []string{"json_schema", "api_key_env", "Examples:"}},
		{[]string{"status", "--help"}, []string{"LLM", "fallbacks", "medallionctl review"}},
	} {
		out := ok(t, tt.args...)
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q output does not contain %q:\n%s", tt.args, w, out)
			}
		}
	}
}

func TestLoadMarksUnreviewed(t *testing.T) {
	for _, tt := range []struct {
		mode          string
		marked, shown bool
	}{{"", true, true}, {"required", false, false}, {"off", false, true}} {
		_, sock := seededReview(t, func(c *server.Config) { c.ReviewMode = tt.mode })
		load := ok(t, sock, "load", "--node", "repo:muse", "--tag", "project_state")
		if got := strings.Contains(load, "- [D-002] Keep tempo maps immutable — a tempo change is a new map (unreviewed)\n"); got != tt.marked {
			t.Errorf("mode %q: D-002 marked %v:\n%s", tt.mode, got, load)
		}
		if got := strings.Contains(load, "Keep tempo maps"); got != tt.shown {
			t.Errorf("mode %q: D-002 shown %v:\n%s", tt.mode, got, load)
		}
		if !strings.Contains(load, "- [D-001] Write MIDI as a stream, never buffer a whole track — tracks reach 2 GB\n") {
			t.Errorf("mode %q: the user's decision is missing or marked:\n%s", tt.mode, load)
		}
	}
}

func TestStatusLLM(t *testing.T) {
	f := startFake(t)
	sock := "--socket=" + f.sock
	if out := ok(t, sock, "status"); strings.Contains(out, "LLM") {
		t.Errorf("status without an llm block mentions the LLM:\n%s", out)
	}
	f.configure(func(f *fakeDaemon) {
		f.llm = &api.LLMStatus{Endpoint: "http://127.0.0.1:11434/v1", Model: "qwen3:8b", Structured: "json_schema",
			Calls: 14, TokensToday: 84_000, DailyTokens: 2_000_000, Passes: 6, Fallbacks: 2, Refused: 3,
			LastError: "answer is not valid JSON after the repair turn", LastErrorAt: "2025-11-17T09:12:00Z", PendingReview: 7}
	})
	golden(t, "status_llm.txt", ok(t, sock, "status"))
	out := ok(t, sock, "status", "-o", "json")
	var st api.Status
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil || st.LLM == nil || st.LLM.PendingReview != 7 {
		t.Errorf("status -o json: %v %+v", err, st.LLM)
	}
	golden(t, "status_llm.json", out)
}

func TestLLMCheck(t *testing.T) {
	// No llm block: the daemon has no check.
	_, sock := startDaemon(t, nil)
	r := ctl(t, "", sock, "llm", "check")
	if r.code != 1 || r.stdout != "" || r.stderr != "medallionctl: "+api.NoLLMMessage+"\n" {
		t.Errorf("without an llm block: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	result := api.LLMCheck{Endpoint: "http://127.0.0.1:11434/v1", Model: "qwen3:8b", Reachable: true, AuthOK: true, ValidJSON: true,
		Lines: []string{
			"reachable: http://127.0.0.1:11434/v1 answered in 0.4s",
			"auth: no key needed (api_key_env is not set)",
			"json_schema: refused by the server; structured = \"auto\" uses json_object",
			"answer: valid JSON that fits the schema",
		}}
	var fail error
	_, sock = startDaemon(t, func(c *server.Config) {
		c.LLMCheck = func(ctx context.Context) (api.LLMCheck, error) { return result, fail }
	})
	want := "qwen3:8b at http://127.0.0.1:11434/v1\n" +
		"  reachable: http://127.0.0.1:11434/v1 answered in 0.4s\n" +
		"  auth: no key needed (api_key_env is not set)\n" +
		"  json_schema: refused by the server; structured = \"auto\" uses json_object\n" +
		"  answer: valid JSON that fits the schema\n"
	if got := ok(t, sock, "llm", "check"); got != want {
		t.Errorf("llm check:\n%s\nwant\n%s", got, want)
	}
	var check api.LLMCheck
	if err := json.Unmarshal([]byte(ok(t, sock, "llm", "check", "-o", "json")), &check); err != nil || !check.OK || len(check.Lines) != 4 {
		t.Errorf("llm check -o json: %+v, %v", check, err)
	}

	// A failed step: the lines are printed and the exit code is 1.
	result.AuthOK = false
	result.Lines[1] = "auth: 401 Unauthorized: is OPENAI_API_KEY set for medalliond?"
	r = ctl(t, "", sock, "llm", "check")
	if r.code != 1 || !strings.Contains(r.stdout, "401 Unauthorized") || !strings.Contains(r.stderr, "cannot curate yet") {
		t.Errorf("failed check: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	fail = errors.New("no llm client")
	r = ctl(t, "", sock, "llm", "check")
	if r.code != 1 || !strings.Contains(r.stderr, "llm check: no llm client") {
		t.Errorf("check error: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestReviewDaemonDown(t *testing.T) {
	sock := socketPath(t)
	want := "medallionctl: cannot reach medalliond at " + sock + ": is it running? (medalliond start, or medalliond service start --user)\n"
	for _, args := range [][]string{
		{"review"},
		{"review", "approve", "m:D-001"},
		{"review", "reject", "--all", "--node", "repo:x"},
		{"review", "edit", "D-001", "--text", "x"},
		{"llm", "check"},
	} {
		r := ctl(t, "", append([]string{"--socket", sock}, args...)...)
		if r.code != 1 || r.stdout != "" || r.stderr != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestReviewListOrder: the items of one medallion come in review order.
func TestReviewListOrder(t *testing.T) {
	_, sock := seededReview(t, nil)
	var resp api.ReviewResponse
	if err := json.Unmarshal([]byte(ok(t, sock, "review", "--tag", "project_state", "-o", "json")), &resp); err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, it := range resp.Items {
		refs = append(refs, it.Ref)
	}
	if want := []string{"summary", "D-002", "Q-002", "invariant:1", "entry_point:2"}; !slices.Equal(refs, want) {
		t.Errorf("refs %q, want %q", refs, want)
	}
}
