package agents

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// inspector is the MCP reference client's CLI mode, pinned.
const inspectorPkg = "@modelcontextprotocol/inspector@2.12.0"

// TestMCPInspector drives "medallionctl mcp" with a real MCP client, the
// MCP Inspector's CLI from npm, the way its README shows
// (mcp-inspector --cli medallionctl mcp --method tools/list): the tools
// are listed with their read-only marks, load returns the save file of a
// directory, record adds a decision that search then finds and get shows
// in full.
func TestMCPInspector(t *testing.T) {
	c := setup(t)
	exe := install(t, c.cache, inspectorPkg, "mcp-inspector")
	h := newHarness(t, c)
	h.startDaemon()

	// A save file for the repository, from a session given as evidence.
	const rule = "Never write to the orders table outside a transaction: the quuxmcprule audit depends on it."
	evidence := filepath.Join(h.home, "evidence.json")
	b, _ := json.Marshal(map[string]any{"session_summary": "Set up the orders service.",
		"transcripts": []string{"user: " + rule + "\nassistant: Understood."}})
	writeFile(t, evidence, string(b))
	h.ctl("checkpoint", "--node", "repo:"+filepath.Base(h.repo), "--evidence", evidence)

	// MCP clients start a stdio server with a minimal environment (the
	// Inspector passes HOME, PATH, SHELL, TERM, USER, LOGNAME): the
	// daemon's runtime dir has to be handed over, as a client's config
	// "env" would.
	inspect := func(args ...string) map[string]any {
		t.Helper()
		full := append([]string{"--cli", "-e", "XDG_RUNTIME_DIR=" + h.runtime, h.ctlBin, "mcp"}, args...)
		out := h.run(time.Minute, h.repo, exe, full...)
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("inspector %s: not JSON: %v\n%s", strings.Join(args, " "), err, out)
		}
		if res["isError"] == true {
			t.Fatalf("inspector %s: the tool failed: %s", strings.Join(args, " "), out)
		}
		return res
	}
	call := func(tool string, kv ...string) (string, map[string]any) {
		t.Helper()
		args := []string{"--method", "tools/call", "--tool-name", tool}
		for _, a := range kv {
			args = append(args, "--tool-arg", a)
		}
		res := inspect(args...)
		var text []string
		for _, c := range asSlice(res["content"]) {
			if s, ok := asMap(c)["text"].(string); ok {
				text = append(text, s)
			}
		}
		return strings.Join(text, "\n"), asMap(res["structuredContent"])
	}

	tools := map[string]map[string]any{}
	for _, tl := range asSlice(inspect("--method", "tools/list")["tools"]) {
		tools[asMap(tl)["name"].(string)] = asMap(tl)
	}
	for _, name := range []string{"load", "search", "get", "record", "checkpoint"} {
		tl, ok := tools[name]
		if !ok {
			t.Fatalf("tools/list lacks %q: %v", name, slices.Sorted(maps.Keys(tools)))
		}
		readOnly := asMap(tl["annotations"])["readOnlyHint"] == true
		if want := name == "load" || name == "search" || name == "get"; readOnly != want || tl["description"] == "" {
			t.Errorf("tool %s: readOnlyHint %v (want %v), description %q", name, readOnly, want, tl["description"])
		}
	}

	if text, _ := call("load", "cwd="+h.repo); !strings.Contains(text, "quuxmcprule") {
		t.Errorf("load cwd=%s does not hold the rule:\n%s", h.repo, text)
	}
	const decision = "Keep order totals as snapshots (quuxmcpdecision)"
	text, rec := call("record", "cwd="+h.repo, "kind=decision", "text="+decision, "why=amended orders must not change sent invoices")
	item, _ := rec["item"].(string)
	if item == "" {
		t.Fatalf("record gave no item address: %s %v", text, rec)
	}
	text, found := call("search", "query=quuxmcpdecision")
	hit := false
	for _, r := range asSlice(found["results"]) {
		hit = hit || asMap(r)["item"] == item
	}
	if !hit {
		t.Errorf("search quuxmcpdecision does not find the recorded %s:\n%s", item, text)
	}
	if text, _ := call("get", "item="+item); !strings.Contains(text, decision) || !strings.Contains(text, "amended orders") {
		t.Errorf("get %s lacks the decision and its why:\n%s", item, text)
	}
	if text, _ := call("checkpoint"); text == "" {
		t.Error("checkpoint answered nothing")
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
