package transcript

import (
	"path"
	"strings"

	"github.com/medallionhq/medallion/internal/jsonscan"
)

// toolInput holds the tool-call input fields worth indexing, under the names
// Claude Code and Codex tools use. Decoding is best effort: MCP tools use the
// same names for values of other shapes, which are ignored.
type toolInput struct {
	Paths       []string // file_path, notebook_path, path
	Command     string   // command or cmd, a string or an argv list
	Query       string   // pattern, query
	URL         string
	Plan        string // ExitPlanMode's plan text
	Todos       []Todo // TodoWrite's todos, update_plan's steps
	Explanation string // update_plan's explanation
	Patch       string // apply_patch called as a function: its input
}

func decodeToolInput(raw []byte) toolInput {
	var in toolInput
	it := jsonscan.NewObjectIter(raw)
	for it.Next() {
		v := it.Val
		switch string(it.Key) {
		case "file_path", "notebook_path", "path":
			in.Paths = appendUnique(in.Paths, jsonString(v))
		case "command", "cmd":
			in.Command = firstNonEmpty(in.Command, commandText(v))
		case "pattern", "query":
			in.Query = joinNonEmpty(" ", in.Query, jsonString(v))
		case "url":
			in.URL = jsonString(v)
		case "explanation":
			in.Explanation = jsonString(v)
		case "input":
			in.Patch = jsonString(v)
		case "plan":
			if v[0] == '"' {
				in.Plan = jsonString(v)
			} else {
				in.Todos = decodeTodos(v, "step")
			}
		case "todos":
			in.Todos = decodeTodos(v, "content")
		}
	}
	return in
}

// decodeTodos reads a list of {<textKey>, status, activeForm} items.
func decodeTodos(raw []byte, textKey string) []Todo {
	todos := []Todo{}
	a := jsonscan.NewArrayIter(raw)
	for a.Next() {
		var t Todo
		it := jsonscan.NewObjectIter(a.Val)
		for it.Next() {
			switch string(it.Key) {
			case textKey:
				t.Content = jsonString(it.Val)
			case "status":
				t.Status = jsonString(it.Val)
			case "activeForm":
				t.ActiveForm = jsonString(it.Val)
			}
		}
		todos = append(todos, t)
	}
	return todos
}

// commandText reads a command given as a string or as an argv list; a shell
// wrapper (bash -lc "…") is unwrapped to the script it runs.
func commandText(raw []byte) string {
	if raw[0] == '"' {
		return jsonString(raw)
	}
	var argv []string
	a := jsonscan.NewArrayIter(raw)
	for a.Next() {
		argv = append(argv, jsonString(a.Val))
	}
	if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") && strings.HasSuffix(path.Base(argv[0]), "sh") {
		return argv[2]
	}
	return strings.Join(argv, " ")
}
