package curate

// Remedies: what led from a failure to the success that fixed it, in a
// phrase (the files edited, the changed lines, the commands run).

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/transcript"
)

// remedy says what fixed a failure: the edits made between the failure and
// the success (files, and the first line each change added), the other
// commands that succeeded on the way (mix format, deps.get …), then the
// succeeding call. The changed line and the commands are what the next
// session needs to repeat the fix, not just where it happened.
func (x *extractor) remedy(from, to int, success *transcript.Event) string {
	r, _ := x.remedyOf(from, to, success)
	return r
}

// remedyOf is remedy, and whether anything was edited or run between the
// failure and the success (bare: the success alone).
func (x *extractor) remedyOf(from, to int, success *transcript.Event) (remedy string, bare bool) {
	var edited, gists, ran []string
	seen := map[string]bool{}
	if success.Command != "" {
		seen[commandKey(success.Command)] = true
	}
	for i := from + 1; i < to; i++ {
		e := &x.ep.Events[i].Event
		switch {
		case e.Kind == transcript.KindToolCall && episode.EditsFiles(e.Tool) && (e.ToolCallID == "" || e.ToolCallID != success.ToolCallID):
			for _, p := range e.FilePaths {
				p = x.rel(e, p)
				if !slices.Contains(edited, p) {
					edited = append(edited, p)
				}
			}
			if g := x.editGistAt(i); g != "" && len(gists) < maxGists && !slices.Contains(gists, g) {
				gists = append(gists, g)
			}
		case e.Kind == transcript.KindToolResult && succeeded(e):
			// The cheap tests first: the output is read only for a
			// command that could still be quoted.
			c := x.call(e)
			if c.Command == "" || len(ran) == maxRan || x.textFailed(i) || x.trivialAt(i, c) {
				continue
			}
			if k := commandKey(c.Command); !seen[k] && !readOnly(k) {
				seen[k] = true
				ran = append(ran, "`"+shortCommand(c.Command, maxRemedyCommand)+"`")
			}
		}
	}
	var b strings.Builder
	if len(edited) > 0 {
		if len(edited) > 4 {
			edited = append(edited[:4], "…")
		}
		b.WriteString("edit " + strings.Join(edited, ", "))
		if len(gists) > 0 {
			b.WriteString(" (" + strings.Join(gists, "; ") + ")")
		}
		b.WriteString(", ")
	}
	if len(ran) > 0 {
		b.WriteString("run " + strings.Join(ran, ", ") + ", ")
	}
	if b.Len() > 0 {
		b.WriteString("then ")
	}
	if success.Command != "" {
		b.WriteString("`" + shortCommand(success.Command, maxRemedyCommand) + "`")
	} else {
		b.WriteString(subject(success))
	}
	b.WriteString(" succeeds")
	return b.String(), len(edited) == 0 && len(ran) == 0
}

// Bounds on what a fix quotes of the work between failure and success.
const (
	maxGists   = 2  // changed lines quoted
	maxGist    = 70 // characters of one changed line
	maxRan     = 2  // intermediate commands quoted
	minGistLen = 6  // shorter changed lines ("}", "end") say nothing
)

// editGist is the first line an edit adds: new_string lines not in
// old_string (Claude Code Edit/MultiEdit input), or "+" lines of a patch
// (Codex apply_patch). Whole-file writes have no gist.
func editGist(input string) string {
	var added []string
	if strings.HasPrefix(strings.TrimSpace(input), "{") {
		var in struct {
			Old   string `json:"old_string"`
			New   string `json:"new_string"`
			Edits []struct {
				Old string `json:"old_string"`
				New string `json:"new_string"`
			} `json:"edits"`
			Input string `json:"input"`
			Patch string `json:"patch"`
		}
		if json.Unmarshal([]byte(input), &in) != nil {
			return ""
		}
		if in.New == "" && len(in.Edits) > 0 {
			in.Old, in.New = in.Edits[0].Old, in.Edits[0].New
		}
		if in.New == "" {
			return patchGist(in.Input + in.Patch)
		}
		old := map[string]bool{}
		for l := range strings.Lines(in.Old) {
			old[strings.TrimSpace(l)] = true
		}
		for l := range strings.Lines(in.New) {
			if t := strings.TrimSpace(l); !old[t] {
				added = append(added, t)
			}
		}
	} else {
		return patchGist(input)
	}
	return firstGist(added)
}

// patchGist is the first added line of a unified or apply_patch diff.
func patchGist(patch string) string {
	var added []string
	for l := range strings.Lines(patch) {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			added = append(added, strings.TrimSpace(l[1:]))
		}
	}
	return firstGist(added)
}

// firstGist is the first line worth quoting: long enough to say something,
// not a comment.
func firstGist(lines []string) string {
	for _, l := range lines {
		if utf8.RuneCountInString(l) < minGistLen || strings.HasPrefix(l, "//") || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "--") {
			continue
		}
		return clip(strings.Join(strings.Fields(l), " "), maxGist)
	}
	return ""
}
