package episode

import (
	"reflect"
	"slices"
	"testing"

	"github.com/medallionhq/medallion/internal/transcript"
)

func TestIsCorrection(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"No, use the stream writer.", true},
		{"no. the other file", true},
		{"No!", true},
		{"no", true},
		{"Nope, that breaks the build", true},
		{"Don't touch the public API", true},
		{"don’t add comments", true}, // typographic apostrophe
		{"Do not run the migrations", true},
		{"Never commit to main", true},
		{"Stop. Revert that change", true},
		{"stop", true},
		{"Wrong file, it is in cmd/", true},
		{"Instead, write a table test", true},
		{"Use a map instead of a slice", false},
		{"Refactor the parser so that it streams instead of buffering", false},
		{"always use tabs in Makefiles", true},
		{"From now on, never use panics in library code", true},
		{"It works, but don't log the token", true},
		{"Looks good. Please don't push yet", true},
		{"OK, do not merge it", true},
		{"That's wrong: the limit is per user", true},
		{"that is wrong", true},
		{"That's not what I asked for", true},
		{"You shouldn't swallow that error", true},
		{"you should not retry forever", true},
		{"Stop using fmt.Println for logs", true},
		{"Fix the test.\nNo, the other one", true},

		{"No need to rush", false},
		{"no worries, carry on", false},
		{"I don't know why this fails", false},
		{"Why doesn't the stop button work?", false},
		{"What's wrong with this test?", false},
		{"Add a stop command to the CLI", false},
		{"Nevertheless, continue with the plan", false},
		{"Do the migration now", false},
		{"Do, not yet", false},
		{"Add notes about the do-not-disturb mode", false},
		{"Please add tests", false},
		{"I never saw this error before", false},
		{"Never mind, it was my fault", false},
		{"Whatever you tried, never works", false},
		{"It works, but never mind the docs", false},
		{"", false},
		{"Write the file; it has no newline", false},
	}
	for _, tt := range tests {
		if got := IsCorrection(tt.text); got != tt.want {
			t.Errorf("IsCorrection(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func boolp(b bool) *bool { return &b }

func call(id, tool, cmd string, paths ...string) transcript.Event {
	return transcript.Event{ID: "call:" + id, Kind: transcript.KindToolCall, Tool: tool, ToolCallID: id, Command: cmd, FilePaths: paths}
}

func result(id string, ok bool) transcript.Event {
	return transcript.Event{ID: "result:" + id, Kind: transcript.KindToolResult, ToolCallID: id, OK: boolp(ok)}
}

func buffered(events ...transcript.Event) []BufferedEvent {
	out := make([]BufferedEvent, len(events))
	for i, e := range events {
		out[i] = BufferedEvent{Seq: uint64(i + 1), Event: e}
	}
	return out
}

func ids(events []transcript.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.ID)
	}
	return out
}

func TestFixTracker(t *testing.T) {
	tests := []struct {
		name   string
		events []transcript.Event
		want   [][2]string // error id, success id
	}{
		{"same command fails then succeeds", []transcript.Event{
			call("1", "Bash", "go test ./..."), result("1", false),
			call("2", "Bash", "go   test ./... "), result("2", true),
		}, [][2]string{{"result:1", "result:2"}}},
		{"different command is no fix", []transcript.Event{
			call("1", "Bash", "go test ./..."), result("1", false),
			call("2", "Bash", "go vet ./..."), result("2", true),
		}, nil},
		{"file tool: same tool and path", []transcript.Event{
			call("1", "Edit", "", "/a.go"), result("1", false),
			call("2", "Edit", "", "/b.go"), result("2", true),
			call("3", "Edit", "", "/a.go"), result("3", true),
		}, [][2]string{{"result:1", "result:3"}}},
		{"rejected call is not an error to fix", []transcript.Event{
			call("1", "Bash", "rm -rf build"),
			{ID: "result:1", Kind: transcript.KindToolResult, ToolCallID: "1", OK: boolp(false), Subtype: transcript.SubtypeRejected},
			call("2", "Bash", "rm -rf build"), result("2", true),
		}, nil},
		{"unknown outcome is no success", []transcript.Event{
			call("1", "shell", "make"), result("1", false),
			call("2", "shell", "make"), {ID: "result:2", Kind: transcript.KindToolResult, ToolCallID: "2"},
		}, nil},
		{"result carries its own command (call not seen)", []transcript.Event{
			{ID: "r1", Kind: transcript.KindToolResult, ToolCallID: "x", Tool: "Bash", Command: "make", OK: boolp(false)},
			{ID: "r2", Kind: transcript.KindToolResult, ToolCallID: "y", Tool: "Bash", Command: "make", OK: boolp(true)},
		}, [][2]string{{"r1", "r2"}}},
		{"one fix per failure", []transcript.Event{
			call("1", "Bash", "make"), result("1", false),
			call("2", "Bash", "make"), result("2", true),
			call("3", "Bash", "make"), result("3", true),
		}, [][2]string{{"result:1", "result:2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ft FixTracker
			var got [][2]string
			for i := range tt.events {
				if f, ok := ft.Add(&tt.events[i]); ok {
					got = append(got, [2]string{f.Error.ID, f.Success.ID})
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("fixes = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDerive(t *testing.T) {
	events := buffered(
		transcript.Event{ID: "u1", Kind: transcript.KindUserPrompt, Text: "Make the tests pass"},
		call("r", "Read", "", "/repo/a.go"),
		result("r", true),
		call("g", "Grep", "", "/repo"),
		call("e1", "Edit", "", "/repo/a.go"),
		result("e1", false),
		call("b1", "Bash", "go test ./..."),
		result("b1", false),
		transcript.Event{ID: "u2", Kind: transcript.KindUserPrompt, Text: "No, don't change the API"},
		transcript.Event{ID: "u3", Kind: transcript.KindUserPrompt, Text: "Never do that", Boilerplate: true, Subtype: "hook"},
		transcript.Event{ID: "p1", Kind: transcript.KindPlanUpdate, Subtype: transcript.SubtypeTodos, Tool: "TodoWrite",
			Todos: []transcript.Todo{{Content: "old", Status: "pending"}}},
		call("e2", "Edit", "", "/repo/a.go"),
		result("e2", true),
		call("w", "Write", "", "/repo/b.go"),
		call("b2", "Bash", "go test ./..."),
		result("b2", true),
		transcript.Event{ID: "api", Kind: transcript.KindError, Subtype: transcript.SubtypeAPIError},
		transcript.Event{ID: "p2", Kind: transcript.KindPlanUpdate, Subtype: transcript.SubtypeTodos, Tool: "TodoWrite",
			Todos: []transcript.Todo{{Content: "fix tests", Status: "completed"}}},
	)
	c := Derive(events)
	if want := []string{"/repo"}; !slices.Equal(c.FilesRead, want) {
		t.Errorf("FilesRead = %q, want %q", c.FilesRead, want)
	}
	if want := []string{"/repo/a.go", "/repo/b.go"}; !slices.Equal(c.FilesEdited, want) {
		t.Errorf("FilesEdited = %q, want %q", c.FilesEdited, want)
	}
	if want := map[string]int{"Read": 1, "Grep": 1, "Edit": 2, "Bash": 2, "Write": 1, "TodoWrite": 2}; !reflect.DeepEqual(c.Tools, want) {
		t.Errorf("Tools = %v, want %v", c.Tools, want)
	}
	if want := []string{"result:e1", "result:b1", "api"}; !slices.Equal(ids(c.Errors), want) {
		t.Errorf("Errors = %q, want %q", ids(c.Errors), want)
	}
	var fixes [][2]string
	for _, f := range c.Fixes {
		fixes = append(fixes, [2]string{f.Error.ID, f.Success.ID})
	}
	if want := [][2]string{{"result:e1", "result:e2"}, {"result:b1", "result:b2"}}; !reflect.DeepEqual(fixes, want) {
		t.Errorf("Fixes = %v, want %v", fixes, want)
	}
	if want := []string{"u2"}; !slices.Equal(ids(c.Corrections), want) {
		t.Errorf("Corrections = %q, want %q", ids(c.Corrections), want)
	}
	if want := []transcript.Todo{{Content: "fix tests", Status: "completed"}}; !reflect.DeepEqual(c.Todos, want) {
		t.Errorf("Todos = %v, want %v", c.Todos, want)
	}
	// Deterministic: the same events give the same context.
	if again := Derive(events); !reflect.DeepEqual(again, c) {
		t.Error("Derive is not deterministic")
	}
	// Empty: non-nil lists, so JSON shows [] rather than null.
	empty := Derive(nil)
	if empty.FilesRead == nil || empty.Errors == nil || empty.Fixes == nil || empty.Tools == nil || empty.Todos != nil {
		t.Errorf("Derive(nil) = %+v", empty)
	}
}

func TestEditsFiles(t *testing.T) {
	for tool, want := range map[string]bool{
		"Edit": true, "MultiEdit": true, "Write": true, "NotebookEdit": true, "apply_patch": true,
		"Read": false, "Grep": false, "Glob": false, "Bash": false, "shell": false, "view_image": false,
	} {
		if got := EditsFiles(tool); got != want {
			t.Errorf("EditsFiles(%q) = %v, want %v", tool, got, want)
		}
	}
}

func TestSettled(t *testing.T) {
	ev := func(kind transcript.Kind, id string) BufferedEvent {
		return BufferedEvent{Event: transcript.Event{Kind: kind, ToolCallID: id}}
	}
	call, result, say := transcript.KindToolCall, transcript.KindToolResult, transcript.KindAssistantMessage
	cases := []struct {
		name   string
		events []BufferedEvent
		want   int
	}{
		{"every call answered", []BufferedEvent{ev(say, ""), ev(call, "a"), ev(result, "a")}, 3},
		{"the last call waits", []BufferedEvent{ev(say, ""), ev(call, "a"), ev(result, "a"), ev(call, "b")}, 3},
		{"parallel calls, one answered", []BufferedEvent{ev(say, ""), ev(call, "a"), ev(call, "b"), ev(result, "b")}, 1},
		{"everything would wait: take it all", []BufferedEvent{ev(call, "a"), ev(say, "")}, 2},
	}
	for _, c := range cases {
		if got := Settled(c.events); got != c.want {
			t.Errorf("%s: Settled = %d, want %d", c.name, got, c.want)
		}
	}
	// A call older than the hold window holds nothing back.
	old := []BufferedEvent{ev(say, ""), ev(call, "lost")}
	for range HoldWindow {
		old = append(old, ev(say, ""))
	}
	if got := Settled(old); got != len(old) {
		t.Errorf("old unanswered call: Settled = %d, want %d", got, len(old))
	}
}
