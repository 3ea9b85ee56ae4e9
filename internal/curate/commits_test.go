package curate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/transcript"
)

func TestCommitMessage(t *testing.T) {
	cases := []struct{ name, cmd, subject, want string }{
		{"heredoc with wrapped bullets and a trailer",
			"git add -A && git commit -m \"$(cat <<'EOF'\nfeat: add state (gqc.4)\n\nAnnotations now have a :state attribute\n(:open/:closed).\n\n- index on (session_id, state)\n- close action\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"",
			"feat: add state (gqc.4)",
			"Annotations now have a :state attribute (:open/:closed); index on (session_id, state); close action"},
		{"• bullets", "git commit -m 'Subject' -m '• one\n• two'", "Subject", "one; two"},
		{"-m paragraphs", `git commit -m "Port to Rust" -m "Replace the \"Python\" code"`, "Port to Rust", `Replace the "Python" code`},
		{"-am single quotes", `git commit -am 'Fix the build'`, "Fix the build", ""},
		{"--message=", `git commit --message="Subject" --message="Body line"`, "Subject", "Body line"},
		{"no message (editor)", `git commit`, "Subject", ""},
	}
	for _, c := range cases {
		if got := commitBody(c.cmd, c.subject); got != c.want {
			t.Errorf("%s: commitBody = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCommits(t *testing.T) {
	var b builder
	b.prompt("Implement the lifecycle state for annotations, then commit.")
	// A commit the pre-commit hook blocked landed nothing.
	b.run("c1", "Bash", `git commit -m "feat: add state"`, nil, false, "Pre-commit validation failed: [FORMAT] Code is not formatted.")
	// Nothing to commit landed nothing either.
	b.run("c2", "Bash", `git commit -m "feat: add state"`, nil, true, "On branch main\nnothing to commit, working tree clean")
	b.run("c3", "Bash", "git commit -m \"feat: add state\" -m \"Annotations get :open/:closed with a close action.\"", nil, true,
		"[main 1a2b3c4] feat: add state\n 4 files changed, 231 insertions(+), 1 deletion(-)")
	// The output alone (its call in the previous checkpoint) still counts.
	b.add(transcript.Event{Kind: transcript.KindToolResult, Tool: "Bash", ToolCallID: "gone", OK: ptr(true),
		Text: "[main (root-commit) 9f8e7d6] Initial import\n 1 file changed, 1 insertion(+)"})
	it := Extract(b.episode())
	var got []string
	for _, d := range it.Decisions {
		if d.Confidence == confidenceCommit {
			got = append(got, d.Statement+" | "+d.Rationale)
		}
	}
	want := []string{
		"Committed: feat: add state. Annotations get :open/:closed with a close action | landed in commit 1a2b3c4",
		"Committed: Initial import | landed in commit 9f8e7d6",
	}
	if !slices.Equal(got, want) {
		t.Errorf("commit decisions = %q, want %q", got, want)
	}
}

func TestCommandKey(t *testing.T) {
	cases := map[string]string{
		"mix test test/a_test.exs 2>&1 | tail -30":                 "mix test",
		"cd /repo && go test ./...":                                "go test",
		"git add -A && git commit -m \"$(cat <<'EOF'\nx\nEOF\n)\"": "git commit",
		"git add lib/a.ex":                                         "git add",
		"MIX_ENV=test mix credo --strict":                          "mix credo",
	}
	for cmd, want := range cases {
		if got := commandKey(cmd); got != want {
			t.Errorf("commandKey(%q) = %q, want %q", cmd, got, want)
		}
	}
	// A long chain keeps its last step when quoted, so an open question's
	// blocked_on still names the check.
	long := "git add lib/spotter_web/controllers/otel_trace_helpers.ex lib/spotter_web/controllers/hooks_controller.ex && git commit -m \"feat: x\""
	short := shortCommand(long, 80)
	if len(short) > 80 || !strings.HasSuffix(short, "&& git commit") || commandKey(short) != "git commit" {
		t.Errorf("shortCommand = %q (%d bytes, key %q)", short, len(short), commandKey(short))
	}
}

// TestApplyRedoneCommit: a commit redone with the same subject (amended,
// retried past a hook) stays one decision, with the fuller message and the
// latest sha.
func TestApplyRedoneCommit(t *testing.T) {
	scope := []string{"repo:muse"}
	commit := func(statement, sha string) Items {
		return Items{Decisions: []Decision{{Statement: statement, Rationale: "landed in commit " + sha, Confidence: confidenceCommit,
			Evidence: Evidence{SessionID: "s1", EventIDs: []string{sha}}}}}
	}
	m := Apply(nil, scope, commit("Committed: feat: live tail (a0y.4). Subscribe PaneListLive to PubSub", "1111111"), t0)
	m = Apply(m, scope, commit("Committed: feat: live tail (a0y.4)", "2222222"), t0.Add(time.Minute))
	m = Apply(m, scope, commit("Committed: feat: tail adapter (a0y.3)", "3333333"), t0.Add(2*time.Minute))
	if len(m.Decisions) != 2 {
		t.Fatalf("decisions = %+v, want 2", m.Decisions)
	}
	if d := m.Decisions[0]; d.ID != "D-001" || d.Statement != "Committed: feat: live tail (a0y.4). Subscribe PaneListLive to PubSub" ||
		d.Rationale != "landed in commit 2222222" {
		t.Errorf("redone commit = %+v", d)
	}
}
