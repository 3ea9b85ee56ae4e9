package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadWatchBlocks(t *testing.T) {
	root := setXDG(t)
	home := filepath.Join(root, "home")
	dir := filepath.Join(root, "etc")
	tests := []struct {
		name    string
		content string
		want    []Watch
	}{
		{"none", ``, nil},
		{"defaults of a block", `watch "w" { path = "/t" }`,
			[]Watch{{Name: "w", Path: "/t", Format: "auto", Include: []string{"**/*.jsonl"}, Exclude: []string{}}}},
		{"everything set", `watch "cc" {
  path    = "~/.claude/projects"
  format  = "claude-code"
  include = ["**/*.jsonl", "x/*.json"]
  exclude = ["**/subagents/**"]
}`, []Watch{{Name: "cc", Path: filepath.Join(home, ".claude", "projects"), Format: "claude-code",
			Include: []string{"**/*.jsonl", "x/*.json"}, Exclude: []string{"**/subagents/**"}}}},
		{"relative to the file, in file order", `
watch "b" {
  path   = "transcripts/b"
  format = "codex"
}
watch "a" {
  path   = "../a"
  format = "jsonl"
}`, []Watch{
			{Name: "b", Path: filepath.Join(dir, "transcripts", "b"), Format: "codex", Include: []string{"**/*.jsonl"}, Exclude: []string{}},
			{Name: "a", Path: filepath.Join(root, "a"), Format: "jsonl", Include: []string{"**/*.jsonl"}, Exclude: []string{}},
		}},
		{"siblings do not overlap", `
watch "a" { path = "/t/ab" }
watch "b" { path = "/t/a" }`, []Watch{
			{Name: "a", Path: "/t/ab", Format: "auto", Include: []string{"**/*.jsonl"}, Exclude: []string{}},
			{Name: "b", Path: "/t/a", Format: "auto", Include: []string{"**/*.jsonl"}, Exclude: []string{}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeFile(t, filepath.Join(dir, "config.hcl"), tt.content))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !reflect.DeepEqual(cfg.Watches, tt.want) {
				t.Errorf("Watches = %+v\nwant %+v", cfg.Watches, tt.want)
			}
		})
	}
}

func TestEffectiveWatches(t *testing.T) {
	root := setXDG(t)
	home := filepath.Join(root, "home")
	def := Default().EffectiveWatches()
	want := []Watch{
		{Name: "claude-code", Path: filepath.Join(home, ".claude", "projects"), Format: "claude-code", Include: []string{"**/*.jsonl"}, Exclude: []string{}},
		{Name: "codex", Path: filepath.Join(home, ".codex", "sessions"), Format: "codex", Include: []string{"**/*.jsonl"}, Exclude: []string{}},
		{Name: "gemini", Path: filepath.Join(home, ".gemini", "tmp"), Format: "gemini", Include: []string{"*/chats/**/*.jsonl", "*/chats/*.json"}, Exclude: []string{}},
	}
	if !reflect.DeepEqual(def, want) {
		t.Errorf("defaults = %+v\nwant %+v", def, want)
	}
	cfg, err := Load(writeFile(t, filepath.Join(root, "c.hcl"), `watch "mine" { path = "/x" }`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.EffectiveWatches(); len(got) != 1 || got[0].Name != "mine" {
		t.Errorf("a watch block replaces the defaults; got %+v", got)
	}
}

func TestLoadCheckpointBlock(t *testing.T) {
	setXDG(t)
	tests := []struct {
		name    string
		content string
		want    Checkpoint
	}{
		{"defaults", ``, Checkpoint{EveryEvents: 10, MinEvents: 5, Idle: 10 * time.Minute}},
		{"empty block keeps defaults", `checkpoint {}`, Checkpoint{EveryEvents: 10, MinEvents: 5, Idle: 10 * time.Minute}},
		{"all set", `checkpoint {
  every_events = 20
  min_events   = 3
  idle         = "1h30m"
  schedule     = "0 * * * *"
}`, Checkpoint{EveryEvents: 20, MinEvents: 3, Idle: 90 * time.Minute, Schedule: "0 * * * *"}},
		{"descriptor", `checkpoint { schedule = "@hourly" }`, Checkpoint{EveryEvents: 10, MinEvents: 5, Idle: 10 * time.Minute, Schedule: "@hourly"}},
		{"every", `checkpoint { schedule = " @every 30m " }`, Checkpoint{EveryEvents: 10, MinEvents: 5, Idle: 10 * time.Minute, Schedule: "@every 30m"}},
		{"time zone", `checkpoint { schedule = "CRON_TZ=Europe/Paris 0 18 * * 1-5" }`,
			Checkpoint{EveryEvents: 10, MinEvents: 5, Idle: 10 * time.Minute, Schedule: "CRON_TZ=Europe/Paris 0 18 * * 1-5"}},
		{"triggers off", `checkpoint {
  every_events = 0
  idle         = "off"
}`, Checkpoint{EveryEvents: 0, MinEvents: 5}},
		{"idle zero", `checkpoint { idle = 0 }`, Checkpoint{EveryEvents: 10, MinEvents: 5}},
		{"numbers as strings", `checkpoint { every_events = "12" }`, Checkpoint{EveryEvents: 12, MinEvents: 5, Idle: 10 * time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeFile(t, filepath.Join(t.TempDir(), "config.hcl"), tt.content))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.Checkpoint != tt.want {
				t.Errorf("Checkpoint = %+v, want %+v", cfg.Checkpoint, tt.want)
			}
		})
	}
}

func TestLoadScopeRules(t *testing.T) {
	root := setXDG(t)
	dir := filepath.Join(root, "etc")
	cfg, err := Load(writeFile(t, filepath.Join(dir, "config.hcl"), `
scope_rule "muse-cli" {
  path  = "~/work/muse/cli"
  nodes = ["repo:muse", "module:cli"]
}
scope_rule "scratch" {
  path  = "scratch"
  nodes = ["project:scratch"]
}`))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []ScopeRule{
		{Name: "muse-cli", Path: filepath.Join(root, "home", "work", "muse", "cli"), Nodes: []string{"repo:muse", "module:cli"}},
		{Name: "scratch", Path: filepath.Join(dir, "scratch"), Nodes: []string{"project:scratch"}},
	}
	if !reflect.DeepEqual(cfg.ScopeRules, want) {
		t.Errorf("ScopeRules = %+v\nwant %+v", cfg.ScopeRules, want)
	}
}

func TestLoadIngestBlock(t *testing.T) {
	setXDG(t)
	tests := []struct {
		name    string
		content string
		want    Ingest
	}{
		{"defaults", ``, Ingest{MaxLine: 16 << 20, MaxText: 4 << 10, MaxMessageText: 16 << 10, Reconcile: 5 * time.Minute}},
		{"all set", `ingest {
  max_line         = "1MiB"
  max_text         = "2KB"
  max_message_text = 8192
  reconcile        = "30s"
}`, Ingest{MaxLine: 1 << 20, MaxText: 2000, MaxMessageText: 8192, Reconcile: 30 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeFile(t, filepath.Join(t.TempDir(), "config.hcl"), tt.content))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.Ingest != tt.want {
				t.Errorf("Ingest = %+v, want %+v", cfg.Ingest, tt.want)
			}
		})
	}
}

func TestLoadBlockErrors(t *testing.T) {
	setXDG(t)
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"watch without path", "watch \"w\" {\n  format = \"codex\"\n}\n",
			[]string{"config.hcl:1,11-", "Missing required argument", `"path" is required`}},
		{"watch without a label", "watch {\n  path = \"/x\"\n}\n",
			[]string{"config.hcl:1,7-", "Missing name for watch"}},
		{"bad format", "watch \"w\" {\n  path = \"/x\"\n  format = \"cursor\"\n}\n",
			[]string{"config.hcl:3,12-20: Invalid watch.format", `"cursor" is not one of auto, claude-code, codex, gemini, jsonl`}},
		{"unknown key in watch", "watch \"w\" {\n  path = \"/x\"\n  includes = [\"*\"]\n}\n",
			[]string{"config.hcl:3,3-11: Unsupported argument", `Did you mean "include"?`}},
		{"duplicate watch names", "watch \"w\" { path = \"/x\" }\nwatch \"w\" { path = \"/y\" }\n",
			[]string{"config.hcl:2,1-10: Duplicate watch block", `a watch block named "w" at`, "config.hcl:1,1-10"}},
		{"overlapping watches", "watch \"a\" { path = \"/x\" }\nwatch \"b\" { path = \"/x/y\" }\n",
			[]string{"config.hcl:2,1-10: Overlapping watch blocks", `watch "b" (/x/y) and watch "a" (/x) overlap`}},
		{"same path twice", "watch \"a\" { path = \"/x\" }\nwatch \"b\" { path = \"/x/\" }\n",
			[]string{"Overlapping watch blocks"}},
		{"bad glob", "watch \"w\" {\n  path = \"/x\"\n  include = [\"[a-\"]\n}\n",
			[]string{"config.hcl:3,13-20: Invalid watch.include", "syntax error in pattern"}},
		{"absolute glob", "watch \"w\" {\n  path = \"/x\"\n  exclude = [\"/abs/*\"]\n}\n",
			[]string{"Invalid watch.exclude", "must be relative to the watch path"}},
		{"empty include", "watch \"w\" {\n  path = \"/x\"\n  include = []\n}\n",
			[]string{"Invalid watch.include", "would match no file"}},
		{"include not a list", "watch \"w\" {\n  path = \"/x\"\n  include = 3\n}\n",
			[]string{"config.hcl:3,13-14: Incorrect attribute value type", "a list of strings is required"}},
		{"slash in name", "watch \"a/b\" { path = \"/x\" }\n",
			[]string{"config.hcl:1,7-12: Invalid watch name"}},
		{"bad cron", "checkpoint {\n  schedule = \"every hour\"\n}\n",
			[]string{"config.hcl:2,14-26: Invalid checkpoint.schedule", `"every hour" is not a cron schedule`, "@hourly"}},
		{"cron with six fields", "checkpoint {\n  schedule = \"0 0 * * * *\"\n}\n",
			[]string{"config.hcl:2,14-27: Invalid checkpoint.schedule", "expected exactly 5 fields"}},
		{"bad descriptor", "checkpoint { schedule = \"@sometimes\" }\n",
			[]string{"Invalid checkpoint.schedule", "unrecognized descriptor"}},
		{"bad idle", "checkpoint {\n  idle = \"10\"\n}\n",
			[]string{"config.hcl:2,10-14: Invalid checkpoint.idle", `"10" is not a duration`}},
		{"negative every_events", "checkpoint { every_events = -1 }\n",
			[]string{"Invalid checkpoint.every_events", "not a whole number from 0 to 1000000"}},
		{"fractional min_events", "checkpoint { min_events = 2.5 }\n",
			[]string{"Invalid checkpoint.min_events", "2.5 is not a whole number"}},
		{"zero min_events", "checkpoint { min_events = 0 }\n",
			[]string{"Invalid checkpoint.min_events", "at least 1 event"}},
		{"min above every", "checkpoint {\n  every_events = 3\n  min_events = 4\n}\n",
			[]string{"config.hcl:1,1-11: Invalid checkpoint", "min_events (4) is larger than every_events (3)"}},
		{"every_events not a number", "checkpoint { every_events = \"ten\" }\n",
			[]string{"Incorrect attribute value type", "a number is required"}},
		{"two checkpoint blocks", "checkpoint {}\ncheckpoint {}\n",
			[]string{"config.hcl:2,1-11: Duplicate checkpoint block"}},
		{"unknown key in checkpoint", "checkpoint { min_event = 3 }\n",
			[]string{"Unsupported argument", `Did you mean "min_events"?`}},
		{"scope rule without nodes", "scope_rule \"r\" { path = \"/x\" }\n",
			[]string{"config.hcl:1,", `"nodes" is required`}},
		{"scope rule bad node", "scope_rule \"r\" {\n  path = \"/x\"\n  nodes = [\"muse\"]\n}\n",
			[]string{"config.hcl:3,11-19: Invalid scope_rule.nodes", `graph node "muse": write it as kind:name`}},
		{"scope rule no nodes", "scope_rule \"r\" {\n  path = \"/x\"\n  nodes = []\n}\n",
			[]string{"Invalid scope_rule.nodes", "at least one graph node"}},
		{"bad max_line", "ingest {\n  max_line = \"huge\"\n}\n",
			[]string{"config.hcl:2,14-20: Invalid ingest.max_line", `"huge" is not a size`}},
		{"max_line too small", "ingest { max_line = \"1KiB\" }\n",
			[]string{"Invalid ingest.max_line", "too small", "64KiB"}},
		{"max_text too large", "ingest { max_text = \"1GiB\" }\n",
			[]string{"Invalid ingest.max_text", "too large"}},
		{"reconcile off", "ingest { reconcile = \"off\" }\n",
			[]string{"Invalid ingest.reconcile", "cannot be turned off"}},
		{"reconcile too short", "ingest { reconcile = \"10ms\" }\n",
			[]string{"Invalid ingest.reconcile", "too short"}},
		{"errors in file order across blocks", "checkpoint { idle = \"x\" }\nlog_level = \"loud\"\n",
			[]string{"config.hcl:1,21-24: Invalid checkpoint.idle", "\n", "config.hcl:2,13-19: Invalid log_level"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeFile(t, filepath.Join(t.TempDir(), "config.hcl"), tt.content))
			if err == nil {
				t.Fatalf("Load(%q) succeeded, want an error", tt.content)
			}
			var de *DiagnosticsError
			if !errors.As(err, &de) {
				t.Errorf("error %T is not a *DiagnosticsError", err)
			}
			// In this order.
			rest := err.Error()
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("error %q does not contain %q (after the previous parts)", err, w)
					continue
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	for _, d := range []time.Duration{0, 50 * time.Millisecond, 90 * time.Second, 10 * time.Minute, time.Hour, 90 * time.Minute, 25*time.Hour + time.Second} {
		s := formatDuration(d)
		got, err := parseDuration(s, 0)
		if err != nil || got != d {
			t.Errorf("formatDuration(%v) = %q, parses back to %v, %v", d, s, got, err)
		}
	}
	if s := formatDuration(10 * time.Minute); s != "10m" {
		t.Errorf("formatDuration(10m) = %q, want 10m", s)
	}
}

// TestExampleDocumentsBlocks keeps every block key documented in
// config.hcl.example (as a commented-out or set "key = " line).
func TestExampleDocumentsBlocks(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "config.hcl.example"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range fileSchema.Blocks {
		if !strings.Contains(string(src), h.Type+" ") {
			t.Errorf("config.hcl.example does not document the %s block", h.Type)
		}
		for _, a := range blockSchemas[h.Type].Attributes {
			if !strings.Contains(string(src), a.Name+" ") {
				t.Errorf("config.hcl.example does not document %s.%s", h.Type, a.Name)
			}
		}
	}
}
