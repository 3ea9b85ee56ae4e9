package curate

import (
	"regexp"
	"strings"

	"github.com/medallionhq/medallion/internal/transcript"
)

// Commits: what the agent committed is what landed, in the agent's own
// summary of the change (the commit message names the design: the new
// resource, the attribute and its default, the macro that replaced a
// function). A next session that does not know it redoes or contradicts
// it, so every commit that git confirmed becomes a decision. Only a
// result showing git's "[branch sha] subject" line and its "N files
// changed" count is a commit: one a hook blocked, or with nothing to
// commit, landed nothing. The output alone is enough, so a commit whose
// call fell into the previous checkpoint still counts; its call, when in
// the episode, adds the message body.

const (
	// confidenceCommit is above an agent choice stated in passing (the
	// commit landed) and below everything the user said.
	confidenceCommit = 0.55
	// maxCommitStatement bounds a commit's statement: its subject and the
	// gist of its body.
	maxCommitStatement = 600
)

// committedPrefix opens a commit's statement.
const committedPrefix = "Committed: "

// sameCommit reports whether two decision statements are commits with the
// same subject: one commit redone, amended or retried.
func sameCommit(a, b string) bool {
	sa, oka := strings.CutPrefix(a, committedPrefix)
	sb, okb := strings.CutPrefix(b, committedPrefix)
	if !oka || !okb {
		return false
	}
	sa, _, _ = strings.Cut(sa, ". ")
	sb, _, _ = strings.Cut(sb, ". ")
	return sa == sb
}

// commitLine is git's report of a commit: "[main 1a2b3c4] subject", with
// "(root-commit)" for the first one.
var commitLine = regexp.MustCompile(`(?m)^\[([^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)\n(?:\s*Date: .*\n)?\s*\d+ files? changed`)

// messageFlag matches a commit message option up to its opening quote:
// -m "…", -am '…', --message="…".
var messageFlag = regexp.MustCompile(`(?:^|\s)(?:-[a-zA-Z]*m|--message)(?:=|\s*)["']`)

// commitCall matches a git invocation that commits ("git commit",
// "git -C dir commit").
var commitCall = regexp.MustCompile(`\bgit(?:\s+-C\s+\S+)?\s+commit\b`)

// mayReportCommit reports whether text holds what commitLine needs: a
// line that opens with '[', and " changed". A search for them is far
// cheaper than the pattern over the long outputs most results are, the
// rare '[' cheapest; the pattern, anchored at each line, would try every
// line of an output with a '[' elsewhere.
func mayReportCommit(text string) bool {
	return strings.IndexByte(text, '[') >= 0 && strings.Contains(text, " changed") &&
		(text[0] == '[' || strings.Contains(text, "\n["))
}

// commits turns every confirmed commit of the episode into a decision;
// a commit amended or redone with the same subject keeps one.
func (x *extractor) commits(it *Items) {
	for i := range x.ep.Events {
		r := &x.ep.Events[i].Event
		if r.Kind != transcript.KindToolResult || failed(r) || !mayReportCommit(r.Text) {
			continue
		}
		m := commitLine.FindStringSubmatch(r.Text)
		if m == nil {
			continue
		}
		sha, subject := m[2], strings.TrimSpace(m[3])
		statement := committedPrefix + strings.TrimSuffix(subject, ".")
		ev := x.evidence(r.ID)
		if c := x.call(r); c != r && commitCall.MatchString(c.Command) {
			ev = x.evidence(c.ID, r.ID)
			if body := commitBody(c.Command, subject); body != "" {
				statement += ". " + body
			}
		}
		it.Decisions = append(it.Decisions, Decision{
			Statement:  clip(statement, maxCommitStatement),
			Rationale:  "landed in commit " + sha[:min(len(sha), 7)],
			Confidence: confidenceCommit,
			Evidence:   ev,
		})
	}
}

// commitBody returns the gist of a commit message's body as the command
// gave it (a heredoc or further -m paragraphs): its paragraphs and bullets
// after the subject, hard-wrapped lines joined, "; " between them, without
// trailers (Co-Authored-By, Signed-off-by).
func commitBody(cmd, subject string) string {
	msg := commitMessage(cmd)
	var parts []string
	started, fresh := false, true
	for line := range strings.Lines(msg) {
		l := strings.TrimSpace(line)
		switch {
		case !started:
			// What precedes the subject is shell.
			started = strings.Contains(l, subject)
		case l == "":
			fresh = true
		case trailer(l):
		case fresh || strings.HasPrefix(l, "-") || strings.HasPrefix(l, "*") || strings.HasPrefix(l, "•"):
			parts = append(parts, strings.TrimSpace(strings.TrimLeft(l, "-*• ")))
			fresh = false
		default:
			parts[len(parts)-1] += " " + l
		}
	}
	for i, p := range parts {
		parts[i] = strings.TrimSuffix(p, ".")
	}
	return strings.Join(parts, "; ")
}

// trailer reports a git trailer line ("Co-Authored-By: …").
func trailer(l string) bool {
	k, _, ok := strings.Cut(l, ": ")
	if !ok || strings.ContainsAny(k, " \t") {
		return false
	}
	switch strings.ToLower(k) {
	case "co-authored-by", "signed-off-by", "reviewed-by", "refs", "fixes", "closes", "change-id":
		return true
	}
	return false
}

// commitMessage extracts the message text of a git commit command: a
// heredoc's body, or the -m/--message arguments as paragraphs. Shell
// quoting is undone only as far as a message needs (\" and \\ in double
// quotes).
func commitMessage(cmd string) string {
	if i := strings.Index(cmd, "<<"); i >= 0 {
		rest := cmd[i+2:]
		nl := strings.IndexByte(rest, '\n')
		if nl > 0 {
			tag := strings.Trim(strings.TrimSpace(strings.TrimPrefix(rest[:nl], "-")), `'"`)
			if j := strings.Index(rest[nl+1:], "\n"+tag); tag != "" && j >= 0 {
				return rest[nl+1 : nl+1+j]
			}
		}
	}
	var paras []string
	for rest := cmd; ; {
		loc := messageFlag.FindStringIndex(rest)
		if loc == nil {
			break
		}
		rest = rest[loc[1]-1:] // from the opening quote
		q := rest[0]
		var b strings.Builder
		k := 1
		for ; k < len(rest) && rest[k] != q; k++ {
			if q == '"' && rest[k] == '\\' && k+1 < len(rest) {
				k++
			}
			b.WriteByte(rest[k])
		}
		paras = append(paras, b.String())
		rest = rest[min(k+1, len(rest)):]
	}
	return strings.Join(paras, "\n")
}
