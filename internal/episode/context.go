package episode

import (
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/transcript"
)

// Context is what an episode's events say, derived deterministically from
// them: the same events always give the same Context. It is what a
// checkpoint hands the curator besides the events themselves.
type Context struct {
	// FilesRead and FilesEdited are the file paths tools read and changed,
	// each once, in the order first seen; a file both read and edited is in
	// FilesEdited only.
	FilesRead   []string `json:"files_read"`
	FilesEdited []string `json:"files_edited"`
	// Tools counts tool calls by tool name.
	Tools map[string]int `json:"tools"`
	// Errors are the failures: failed tool results (rejected and
	// interrupted calls included) and error events, in order.
	Errors []transcript.Event `json:"errors"`
	// Fixes pair a failed tool result with the later successful result of
	// the same call (see FixTracker).
	Fixes []Fix `json:"fixes"`
	// Corrections are the user prompts that correct or constrain the agent
	// (see IsCorrection).
	Corrections []transcript.Event `json:"corrections"`
	// Todos is the agent's latest todo list or plan; nil when the episode
	// has none.
	Todos []transcript.Todo `json:"todos"`
}

// Fix is an error followed, in the same episode, by a success of the same
// call: the failure and what finally worked.
type Fix struct {
	Error   transcript.Event `json:"error"`
	Success transcript.Event `json:"success"`
}

// Derive computes the Context of a buffered episode.
func Derive(events []BufferedEvent) Context {
	c := Context{FilesRead: []string{}, FilesEdited: []string{}, Tools: map[string]int{},
		Errors: []transcript.Event{}, Fixes: []Fix{}, Corrections: []transcript.Event{}}
	var fixes FixTracker
	read := map[string]bool{}
	edited := map[string]bool{}
	for i := range events {
		e := &events[i].Event
		switch e.Kind {
		case transcript.KindToolCall:
			if e.Tool != "" {
				c.Tools[e.Tool]++
			}
			if EditsFiles(e.Tool) {
				for _, p := range e.FilePaths {
					if !edited[p] {
						edited[p] = true
						c.FilesEdited = append(c.FilesEdited, p)
					}
				}
			} else {
				for _, p := range e.FilePaths {
					if !read[p] {
						read[p] = true
						c.FilesRead = append(c.FilesRead, p)
					}
				}
			}
		case transcript.KindPlanUpdate:
			if e.Tool != "" {
				c.Tools[e.Tool]++
			}
			if e.Subtype == transcript.SubtypeTodos {
				c.Todos = slices.Clone(e.Todos)
			}
		case transcript.KindUserPrompt:
			if !e.Boilerplate && IsCorrection(e.Text) {
				c.Corrections = append(c.Corrections, *e)
			}
		}
		if e.Failed() {
			c.Errors = append(c.Errors, *e)
		}
		if f, ok := fixes.Add(e); ok {
			c.Fixes = append(c.Fixes, f)
		}
	}
	// A file that was read and then edited counts as edited only.
	c.FilesRead = slices.DeleteFunc(c.FilesRead, func(p string) bool { return edited[p] })
	return c
}

// EditsFiles reports whether a tool of this name changes the files it is
// given (Claude Code Edit, MultiEdit, Write, NotebookEdit; Codex
// apply_patch), as opposed to reading or searching them.
func EditsFiles(tool string) bool {
	t := strings.ToLower(tool)
	return strings.Contains(t, "edit") || strings.Contains(t, "write") || strings.Contains(t, "patch") ||
		strings.Contains(t, "create_file") || strings.Contains(t, "delete_file")
}

// maxTrackedCalls bounds FixTracker's memory of calls and open failures:
// an episode is checkpointed long before, so reaching it means a session
// whose checkpoints keep failing; forgetting old calls then only misses a
// fix, never invents one.
const maxTrackedCalls = 4096

// FixTracker finds fixes in a stream of events: a failed tool result
// followed by a successful result of the same call. Two results are of the
// same call when their calls have the same tool and the same command
// (whitespace-normalised) — or, for tools without a command, the same tool
// and the same file paths, or the same tool when it has neither. Rejected
// and interrupted calls are not errors to be fixed. The zero value is
// ready to use.
type FixTracker struct {
	calls map[string]string           // tool call id → key
	open  map[string]transcript.Event // key → latest unfixed failure
}

// Add feeds the next event and returns the fix it completes, if any.
func (t *FixTracker) Add(e *transcript.Event) (Fix, bool) {
	switch e.Kind {
	case transcript.KindToolCall:
		if e.ToolCallID != "" {
			if t.calls == nil || len(t.calls) >= maxTrackedCalls {
				t.calls = map[string]string{}
			}
			t.calls[e.ToolCallID] = CallKey(e)
		}
	case transcript.KindToolResult:
		key := CallKey(e)
		if k, ok := t.calls[e.ToolCallID]; ok && e.ToolCallID != "" {
			// The call is the better source: a result parsed after a
			// restart may not know its call's command.
			key = k
			delete(t.calls, e.ToolCallID)
		}
		if key == "" {
			return Fix{}, false
		}
		switch {
		case e.Failed():
			if e.Subtype == transcript.SubtypeRejected || e.Subtype == transcript.SubtypeInterrupted {
				return Fix{}, false
			}
			if t.open == nil || len(t.open) >= maxTrackedCalls {
				t.open = map[string]transcript.Event{}
			}
			t.open[key] = *e
		case e.OK != nil && *e.OK:
			if failure, ok := t.open[key]; ok {
				delete(t.open, key)
				return Fix{Error: failure, Success: *e}, true
			}
		}
	}
	return Fix{}, false
}

// Open returns the failures not fixed so far, in no particular order.
func (t *FixTracker) Open() []transcript.Event {
	out := make([]transcript.Event, 0, len(t.open))
	for _, e := range t.open {
		out = append(out, e)
	}
	return out
}

// CallKey names what a call did, for pairing a failure with its fix: the
// same tool and command, or the same tool and file paths. Tier 0's
// curator pairs them by the same key.
func CallKey(e *transcript.Event) string {
	switch {
	case e.Command != "":
		return e.Tool + "\x00" + strings.Join(strings.Fields(e.Command), " ")
	case len(e.FilePaths) > 0:
		paths := slices.Clone(e.FilePaths)
		slices.Sort(paths)
		return e.Tool + "\x01" + strings.Join(paths, "\x00")
	}
	return e.Tool
}
