package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const testHook = "/opt/medallion/bin/medallionctl hook claude-code"

// integrateCases are settings files as users have them, and what integrate
// makes of each: the hook added in the file's own layout, nothing else
// touched.
var integrateCases = []struct {
	name, before, after string
}{
	{
		name: "claude code's own layout, no hooks",
		before: `{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(go test:*)"
    ]
  }
}
`,
		after: `{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(go test:*)"
    ]
  },
  "hooks": {
    "SessionStart": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/medallion/bin/medallionctl hook claude-code",
            "timeout": 5
          }
        ]
      }
    ]
  }
}
`,
	},
	{
		name:   "other hook events, keys not sorted, tabs",
		before: "{\n\t\"zeta\": 1,\n\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}\n\t\t]\n\t},\n\t\"alpha\": 1.50\n}",
		after:  "{\n\t\"zeta\": 1,\n\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}\n\t\t],\n\t\t\"SessionStart\": [\n\t\t\t{\n\t\t\t\t\"matcher\": \"\",\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"/opt/medallion/bin/medallionctl hook claude-code\",\n\t\t\t\t\t\t\"timeout\": 5\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t]\n\t},\n\t\"alpha\": 1.50\n}",
	},
	{
		name: "session start groups, one per line",
		before: `{
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "cat notes.md"}]}
        ]
    }
}`,
		after: `{
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "cat notes.md"}]},
            {
                "matcher": "",
                "hooks": [
                    {
                        "type": "command",
                        "command": "/opt/medallion/bin/medallionctl hook claude-code",
                        "timeout": 5
                    }
                ]
            }
        ]
    }
}`,
	},
	{
		name:   "session start on one line",
		before: "{\n  \"hooks\": {\n    \"SessionStart\": [{\"matcher\": \"startup\", \"hooks\": []}]\n  }\n}\n",
		after:  "{\n  \"hooks\": {\n    \"SessionStart\": [{\"matcher\": \"startup\", \"hooks\": []}, {\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"/opt/medallion/bin/medallionctl hook claude-code\", \"timeout\": 5}]}]\n  }\n}\n",
	},
	{
		name:   "compact file",
		before: `{"a":1,"hooks":{"Stop":[]}}`,
		after:  `{"a":1,"hooks":{"Stop":[],"SessionStart":[{"matcher":"","hooks":[{"type":"command","command":"/opt/medallion/bin/medallionctl hook claude-code","timeout":5}]}]}}`,
	},
	{
		name:   "empty object",
		before: "{}\n",
		after:  "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"matcher\": \"\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/opt/medallion/bin/medallionctl hook claude-code\",\n            \"timeout\": 5\n          }\n        ]\n      }\n    ]\n  }\n}\n",
	},
	{
		name:   "escapes and big numbers kept as written",
		before: "{\"env\": {\"N\": 12345678901234567890, \"S\": \"a\\u0026b \\\"q\\\"\"}, \"x\": 1e3}",
		after:  "{\"env\": {\"N\": 12345678901234567890, \"S\": \"a\\u0026b \\\"q\\\"\"}, \"x\": 1e3, \"hooks\": {\"SessionStart\": [{\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"/opt/medallion/bin/medallionctl hook claude-code\", \"timeout\": 5}]}]}}",
	},
}

// TestIntegrateKeepsTheFile: integrate adds the hook in the file's layout;
// remove gives back the original bytes.
func TestIntegrateKeepsTheFile(t *testing.T) {
	for _, tt := range integrateCases {
		t.Run(tt.name, func(t *testing.T) {
			sf := mustSettings(t, tt.before)
			got, err := addSessionStartHook(sf, testHook, claudeAgent(t))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.after {
				t.Errorf("integrate gave\n%s\nwant\n%s", got, tt.after)
			}
			back, removed, err := removeSessionStartHooks(mustSettings(t, string(got)), agentClaudeCode)
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != tt.before || len(removed) != 1 || removed[0] != testHook {
				t.Errorf("remove gave (removed %q)\n%s\nwant the original\n%s", removed, back, tt.before)
			}
		})
	}
}

// TestRemoveTakesOnlyOurs: the user's hooks stay, also in a group that
// holds ours; hooks of any medallionctl path and flags go.
func TestRemoveTakesOnlyOurs(t *testing.T) {
	before := `{
  "hooks": {
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "cat notes.md"}, {"type": "command", "command": "'/my bin/medallionctl' hook claude-code --no-start"}]},
      {"matcher": "", "hooks": [{"type": "command", "command": "/old/medallionctl --socket /s.sock hook claude-code", "timeout": 5}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "medallion-notes hook"}]}]
  }
}
`
	want := `{
  "hooks": {
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "cat notes.md"}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "medallion-notes hook"}]}]
  }
}
`
	got, removed, err := removeSessionStartHooks(mustSettings(t, before), agentClaudeCode)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want || len(removed) != 2 {
		t.Errorf("removed %q, gave\n%s\nwant\n%s", removed, got, want)
	}
}

// FuzzIntegrateRemove: for any settings object integrate accepts, the
// result is valid JSON holding the hook, and remove restores it byte for
// byte, unless it already held empty "hooks" or "SessionStart" (which
// remove cannot tell from the ones integrate created) or was an empty
// object with space inside.
func FuzzIntegrateRemove(f *testing.F) {
	for _, tt := range integrateCases {
		f.Add(tt.before)
	}
	f.Add(`{"a":[1,{"b":"}"}],"c":"\"{"}`)
	f.Fuzz(func(t *testing.T, before string) {
		sf, err := readSettingsText(before)
		if err != nil || sf.root == nil || strings.Contains(before, "medallionctl") {
			return
		}
		got, err := addSessionStartHook(sf, testHook, claudeAgent(t))
		if err != nil {
			return // hooks or SessionStart of the wrong type: refused
		}
		// Maps, not structs: encoding/json matches struct fields without
		// regard to case, and "sessionstart" is not Claude Code's key.
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(got))
		dec.UseNumber() // 1e700 is valid JSON, not a float64
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("integrate made invalid JSON: %v\n%s", err, got)
		}
		want := map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command", "command": testHook, "timeout": json.Number("5")}}}
		hooks, _ := doc["hooks"].(map[string]any)
		ss, _ := hooks["SessionStart"].([]any)
		if len(ss) == 0 || !reflect.DeepEqual(ss[len(ss)-1], want) {
			t.Fatalf("integrate did not add the hook:\n%s", got)
		}
		back, _, err := removeSessionStartHooks(mustSettings(t, string(got)), agentClaudeCode)
		if err != nil {
			t.Fatal(err)
		}
		hooksNode, groups, _ := sf.sessionStart()
		if (hooksNode != nil && len(hooksNode.members) == 0) || (groups != nil && len(groups.elems) == 0) ||
			(len(sf.root.members) == 0 && strings.TrimSpace(before) != "{}") {
			return // and "{ }" comes back as "{}"
		}
		if string(back) != before {
			t.Fatalf("remove after integrate gave\n%q\nnot the original\n%q", back, before)
		}
	})
}

// TestIntegrateRemove drives the command: --dry-run prints a diff,
// --remove restores the file byte for byte with a backup each time, and
// both are idempotent.
func TestIntegrateRemove(t *testing.T) {
	executable = func() (string, error) { return "/opt/medallion/bin/medallionctl", nil }
	t.Cleanup(func() { executable = os.Executable })
	before := integrateCases[0].before
	path := writeFile(t, "settings.json", before)

	dry := ok(t, "integrate", "claude-code", "--settings", path, "--dry-run")
	for _, want := range []string{"would add the SessionStart hook", "--- " + path, "+++ " + path + " (new)", "     ]\n+  },\n", `+            "command": "` + testHook + `",`} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry)
		}
	}
	if strings.Contains(dry, `"model"`) {
		t.Errorf("dry run shows more than the change and its context:\n%s", dry)
	}
	ok(t, "integrate", "claude-code", "--settings", path)
	if readOr(path) != integrateCases[0].after {
		t.Fatalf("integrate wrote\n%s", readOr(path))
	}

	dry = ok(t, "integrate", "claude-code", "--settings", path, "--remove", "--dry-run")
	if !strings.Contains(dry, "would remove the SessionStart hook") || !strings.Contains(dry, `-            "command": "`+testHook) {
		t.Errorf("remove dry run:\n%s", dry)
	}
	if readOr(path) != integrateCases[0].after {
		t.Fatal("remove --dry-run changed the file")
	}
	out := ok(t, "integrate", "claude-code", "--settings", path, "--remove")
	if !strings.Contains(out, `removed the SessionStart hook "`+testHook+`" from `+path) || !strings.Contains(out, "saved the previous settings.json as") {
		t.Errorf("remove says %q", out)
	}
	if got := readOr(path); got != before {
		t.Errorf("after integrate and remove:\n%s\nwant the original\n%s", got, before)
	}
	backups, _ := filepath.Glob(path + ".bak-*")
	if len(backups) != 2 {
		t.Errorf("backups %q, want one per change (both in the same second)", backups)
	}
	again := ok(t, "integrate", "claude-code", "--settings", path, "--remove")
	if !strings.Contains(again, "has no medallionctl hook; nothing changed") {
		t.Errorf("second remove says %q", again)
	}
	missing := ok(t, "integrate", "claude-code", "--settings", filepath.Join(t.TempDir(), "none.json"), "--remove")
	if !strings.Contains(missing, "does not exist; nothing to remove") {
		t.Errorf("remove of a missing file says %q", missing)
	}
}

func TestIntegrateRefusesWrongShapes(t *testing.T) {
	for _, tt := range []struct{ content, want string }{
		{`[1]`, "is not a JSON object"},
		{`{"hooks": []}`, `"hooks" is not an object`},
		{`{"hooks": {"SessionStart": {}}}`, `"hooks.SessionStart" is not a list`},
	} {
		path := writeFile(t, "settings.json", tt.content)
		for _, args := range [][]string{{"integrate", "claude-code", "--settings", path}, {"integrate", "claude-code", "--settings", path, "--remove"}} {
			r := ctl(t, "", args...)
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) || !strings.Contains(r.stderr, "nothing was changed") || readOr(path) != tt.content {
				t.Errorf("%q on %s: exit %d, stderr %q", args, tt.content, r.code, r.stderr)
			}
		}
	}
}

func mustSettings(t *testing.T, text string) *settingsFile {
	t.Helper()
	sf, err := readSettingsText(text)
	if err != nil {
		t.Fatal(err)
	}
	return sf
}

// TestIntegrateKeepsTheUsersFlags: a medallionctl hook the user gave flags
// to counts as installed; integrate neither doubles nor rewrites it.
func TestIntegrateKeepsTheUsersFlags(t *testing.T) {
	executable = func() (string, error) { return "/opt/medallion/bin/medallionctl", nil }
	t.Cleanup(func() { executable = os.Executable })
	content := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "medallionctl hook claude-code --budget 800"}]}]}}`
	path := writeFile(t, "settings.json", content)
	out := ok(t, "integrate", "claude-code", "--settings", path)
	if !strings.Contains(out, `already runs "medallionctl hook claude-code --budget 800" at SessionStart; nothing changed`) || readOr(path) != content {
		t.Errorf("integrate says %q and left\n%s", out, readOr(path))
	}
}

func claudeAgent(t testing.TB) *hookAgent {
	t.Helper()
	ag, err := agentNamed(agentClaudeCode)
	if err != nil {
		t.Fatal(err)
	}
	return ag
}
