package curate

import (
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Shell commands: what a call did (its key), which calls only look around,
// and how a command is named in a medallion line.

// shellOnly are commands that only set up the shell for the real one.
var shellOnly = map[string]bool{"cd": true, "export": true, "source": true, "set": true, "sleep": true}

// commandKey names what a shell command checks: its program and first
// word that is neither a flag nor a path ("mix test", "git push", "go
// test"), from its first segment that does more than set up the shell. A
// later success of the same check shows a failure fixed even when the
// arguments changed ("mix test test/a_test.exs" then "mix test"). Staging
// ("git add -A && git commit …") only prepares the command after it.
func commandKey(cmd string) string {
	staged := false
	for _, seg := range strings.FieldsFunc(cmd, func(r rune) bool { return r == '&' || r == ';' || r == '|' || r == '\n' }) {
		f := commandWords(seg)
		if len(f) == 0 || shellOnly[f[0]] {
			continue
		}
		key := filepath.Base(f[0])
		words := 0
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") && !strings.ContainsAny(a, "/.\"'$<>") {
				key += " " + a
				words++
				// A script runner's "run" names no check; the script
				// after it does ("bun run lint", "pnpm run typecheck").
				if words == 2 || !runnerVerbs[a] {
					break
				}
			}
		}
		if key == "git add" {
			staged = true
			continue
		}
		return key
	}
	if staged {
		return "git add"
	}
	return strings.Join(strings.Fields(cmd), " ")
}

// runnerVerbs are the subcommands of script runners (npm, pnpm, yarn, bun,
// uv, poetry) that run the script named next.
var runnerVerbs = map[string]bool{"run": true, "exec": true, "run-script": true, "x": true, "dlx": true}

// commandWords splits a shell command into its words, without the VAR=value
// assignments before the program.
func commandWords(cmd string) []string {
	f := strings.Fields(cmd)
	for len(f) > 0 && strings.Contains(f[0], "=") {
		f = f[1:]
	}
	return f
}

// blockedKey is what Apply matches an open question's blocked_on against
// a later Success by.
func blockedKey(blockedOn string) string {
	if inner, ok := strings.CutPrefix(blockedOn, "`"); ok && strings.HasSuffix(inner, "`") {
		return commandKey(strings.TrimSuffix(inner, "`"))
	}
	return blockedOn
}

// exploratory commands only look around; their failures are typos and
// globs that miss, not problems of the project.
var exploratory = map[string]bool{
	"ls": true, "cat": true, "find": true, "grep": true, "rg": true, "head": true, "tail": true, "echo": true,
	"which": true, "pwd": true, "wc": true, "tree": true, "file": true, "stat": true, "sed": true, "awk": true,
	"cd": true, "bd": true, "type": true, "command": true, "less": true, "open": true, "curl": true,
}

// editMisses are what an edit tool says, in any case, when it missed its
// target text or file.
var editMisses = newWordFinder(true, "not found", "has not been read", "modified since")

// noOps are failures where nothing was wrong with the project: git's
// refusals (nothing to commit, a first push that needs its upstream
// named, an add of ignored or mistyped paths) and a parallel call
// cancelled because a sibling failed (Claude Code). Nothing was fixed.
var noOps = newWordFinder(false, "nothing to commit", "has no upstream branch", "no changes added to commit", "fatal: pathspec",
	"Sibling tool call errored",
	"paths are ignored by one of your .gitignore files")

// Trivial calls are those whose failures are trivial retries: file
// reads, searches and listings, edits that missed their target text, and
// git's no-op refusals (extractor.trivialAt asks both halves below).

// trivialResult is trivial's test of the result alone: a shell that never
// ran the command, or one of git's no-op refusals.
func trivialResult(result *transcript.Event) bool {
	if shellMisuse(result.Text) {
		return true
	}
	return noOps.in(result.Text)
}

// trivialCall is trivial's test of the call: a read, search or listing,
// or an edit that missed its target.
func trivialCall(c, result *transcript.Event) bool {
	if c.Command != "" {
		f := commandWords(c.Command)
		return len(f) == 0 || exploratory[filepath.Base(f[0])]
	}
	t := strings.ToLower(c.Tool)
	if t == "write_stdin" {
		return true // polling a running command, not writing a file
	}
	if episode.EditsFiles(c.Tool) {
		return editMisses.inLower(result.Text)
	}
	return t == "read" || t == "glob" || t == "grep" || t == "ls" || strings.Contains(t, "search") || strings.Contains(t, "fetch") ||
		strings.Contains(t, "read_file") || strings.Contains(t, "list") || strings.Contains(t, "view")
}

// shellMisuse reports an error of the shell itself (a glob that matched
// nothing, quoting, a sandbox refusing a command): the command never ran.
func shellMisuse(text string) bool {
	l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "Exit code 1"))
	for _, p := range []string{"zsh:", "(eval):", "bash: line", "/bin/bash: line", "sh: "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// subject names a call: its command, or its tool and file paths.
func subject(c *transcript.Event) string {
	switch {
	case c.Command != "":
		return "`" + shortCommand(c.Command, maxSignature) + "`"
	case len(c.FilePaths) > 0:
		return tool(c) + " " + clip(strings.Join(c.FilePaths, ", "), maxSignature)
	}
	return tool(c)
}

func tool(c *transcript.Event) string {
	switch {
	case c.Tool != "":
		return c.Tool
	case c.Subtype != "":
		return c.Subtype
	}
	return string(c.Kind)
}

// readOnly reports checks that only look at the state of the repository:
// running them changes nothing, so they are no part of a fix.
func readOnly(key string) bool {
	switch key {
	case "git status", "git diff", "git log", "git show", "git branch", "git add":
		return true
	}
	return false
}

// maxRemedyCommand bounds the command quoted in a fix.
const maxRemedyCommand = 80

// shortCommand is a command as a fix or an open question quotes it, in at
// most n bytes: without its message (commit messages, heredocs,
// substitutions) and output plumbing, which say nothing about what made
// it pass or fail.
func shortCommand(cmd string, n int) string {
	c := strings.Join(strings.Fields(cmd), " ")
	for _, cut := range []string{" -m ", " --message", " <<", " $(", " 2>&1", " | tail", " | head", " | grep"} {
		if i := strings.Index(c, cut); i > 0 {
			c = c[:i]
		}
	}
	return clipMiddle(c, n)
}

// clipMiddle bounds s to n bytes by eliding its middle: the end of a
// command chain ("git add <many files> && git commit") is the step that
// counts, and it names the check an open question is blocked on.
func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := (n-len("…"))*3/5, (n-len("…"))*2/5
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:head] + "…" + s[from:]
}
