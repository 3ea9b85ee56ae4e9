package curate

import (
	"slices"
	"testing"

	"github.com/medallionhq/medallion/internal/transcript"
)

func TestCommitMessage(t *testing.T) {
	cases := []struct{ name, cmd, subject, want string }{
		{"heredoc with wrapped bullets and a trailer",
			"git add -A && git commit -m \"$(cat <<'EOF'\nfeat: add state (gqc.4)\n\nAnnotations now have a :state attribute\n(:open/:closed).\n\n- index on (session_id, state)\n- close action\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"",
			"feat: add state (gqc.4)",
			"Annotations now have a :state attribute (:open/:closed); index on (session_id, state); close action"},
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
