package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// setXDG points every XDG base directory into a fresh temp dir, so tests
// never read the real user's config, and returns that dir.
func setXDG(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "data"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(root, "run"))
	return root
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefaultHonoursXDG(t *testing.T) {
	root := setXDG(t)
	got := Default()
	want := Config{
		DataDir:     filepath.Join(root, "data", "medallion"),
		Socket:      filepath.Join(root, "run", "medallion", "medallion.sock"),
		LogLevel:    "info",
		LogFormat:   "text",
		MemoryLimit: 96 << 20,
		Checkpoint:  Checkpoint{EveryEvents: 10, MinEvents: 5, Idle: 10 * time.Minute},
		Ingest:      Ingest{MaxLine: 16 << 20, MaxText: 4 << 10, MaxMessageText: 16 << 10, Reconcile: 5 * time.Minute},
		Export:      DefaultExport,
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("Default() = %+v, want %+v", *got, want)
	}
}

func TestLoadDefaultFile(t *testing.T) {
	root := setXDG(t)

	// No file at all: defaults, no error.
	cfg, err := Load("")
	if err != nil {
		t.Fatalf("Load(\"\") without a file: %v", err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("Load(\"\") = %+v, want defaults %+v", *cfg, *Default())
	}

	// The default file, found through XDG_CONFIG_HOME.
	path := writeFile(t, filepath.Join(root, "config", "medallion", "config.hcl"), `log_level = "debug"`)
	cfg, err = Load("")
	if err != nil {
		t.Fatalf("Load(\"\") with %s: %v", path, err)
	}
	if cfg.LogLevel != "debug" || cfg.File != path {
		t.Errorf("Load(\"\") = level %q file %q, want debug from %s", cfg.LogLevel, cfg.File, path)
	}
}

func TestLoadMissingExplicitFile(t *testing.T) {
	setXDG(t)
	path := filepath.Join(t.TempDir(), "nope.hcl")
	_, err := Load(path)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(%s) = %v, want a not-exist error", path, err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
}

func TestLoadKeys(t *testing.T) {
	root := setXDG(t)
	home := filepath.Join(root, "home")
	dir := filepath.Join(root, "etc")

	tests := []struct {
		name    string
		content string
		check   func(c *Config) bool
		want    string
	}{
		{"empty file keeps defaults", ``,
			func(c *Config) bool { return c.LogLevel == "info" && c.MemoryLimit == 96<<20 }, "defaults"},
		{"data_dir absolute", `data_dir = "/var/lib/med"`,
			func(c *Config) bool { return c.DataDir == "/var/lib/med" }, "/var/lib/med"},
		{"data_dir tilde", `data_dir = "~/med/data"`,
			func(c *Config) bool { return c.DataDir == filepath.Join(home, "med", "data") }, "~ expanded"},
		{"data_dir relative to the file", `data_dir = "data"`,
			func(c *Config) bool { return c.DataDir == filepath.Join(dir, "data") }, "next to the file"},
		{"data_dir dotdot", `data_dir = "../shared/./data"`,
			func(c *Config) bool { return c.DataDir == filepath.Join(root, "shared", "data") }, "cleaned"},
		{"socket absolute", `socket = "/tmp/m/s.sock"`,
			func(c *Config) bool { return c.Socket == "/tmp/m/s.sock" }, "/tmp/m/s.sock"},
		{"socket tilde", `socket = "~/s.sock"`,
			func(c *Config) bool { return c.Socket == filepath.Join(home, "s.sock") }, "~ expanded"},
		{"socket relative", `socket = "run/s.sock"`,
			func(c *Config) bool { return c.Socket == filepath.Join(dir, "run", "s.sock") }, "next to the file"},
		{"log_level trace", `log_level = "trace"`,
			func(c *Config) bool { return c.LogLevel == "trace" }, "trace"},
		{"log_level error", `log_level = "error"`,
			func(c *Config) bool { return c.LogLevel == "error" }, "error"},
		{"log_format json", `log_format = "json"`,
			func(c *Config) bool { return c.LogFormat == "json" }, "json"},
		{"memory_limit MiB", `memory_limit = "64MiB"`,
			func(c *Config) bool { return c.MemoryLimit == 64<<20 }, "64MiB"},
		{"memory_limit MB", `memory_limit = "100MB"`,
			func(c *Config) bool { return c.MemoryLimit == 100e6 }, "100e6"},
		{"memory_limit fractional GiB", `memory_limit = "1.5GiB"`,
			func(c *Config) bool { return c.MemoryLimit == 3<<29 }, "1.5GiB"},
		{"memory_limit with space, lower case", `memory_limit = "128 mib"`,
			func(c *Config) bool { return c.MemoryLimit == 128<<20 }, "128MiB"},
		{"memory_limit off", `memory_limit = "off"`,
			func(c *Config) bool { return c.MemoryLimit == 0 }, "0"},
		{"memory_limit number zero", `memory_limit = 0`,
			func(c *Config) bool { return c.MemoryLimit == 0 }, "0"},
		{"memory_limit plain bytes", `memory_limit = "33554432"`,
			func(c *Config) bool { return c.MemoryLimit == 32<<20 }, "32MiB"},
		{"comments and all keys", "# c\ndata_dir = \"/d\" // c\nsocket = \"/s\"\nlog_level = \"warn\"\nlog_format = \"text\"\nmemory_limit = \"1GiB\"\n",
			func(c *Config) bool {
				return reflect.DeepEqual(*c, Config{DataDir: "/d", Socket: "/s", LogLevel: "warn", LogFormat: "text", MemoryLimit: 1 << 30, File: c.File,
					Checkpoint: DefaultCheckpoint, Ingest: DefaultIngest, Export: DefaultExport})
			}, "all set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(dir, "config.hcl"), tt.content)
			cfg, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !tt.check(cfg) {
				t.Errorf("Load(%q) = %+v, want %s", tt.content, *cfg, tt.want)
			}
			if cfg.File != path {
				t.Errorf("File = %q, want %q", cfg.File, path)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	setXDG(t)
	long := "/tmp/" + strings.Repeat("x", 100) + "/s.sock"
	tests := []struct {
		name    string
		content string
		want    []string // substrings of the error
	}{
		{"unknown key with suggestion", "log_level = \"loud\"\n\ndat_dir = \"/x\"\n",
			[]string{"config.hcl:3,1-8: Unsupported argument", `Did you mean "data_dir"?`, "config.hcl:1,13-19: Invalid log_level"}},
		{"unknown block", "watcher \"x\" {\n}\n",
			[]string{"config.hcl:1,1-8: Unsupported block type", `Did you mean "watch"?`}},
		{"syntax error", "log_level = \n",
			[]string{"config.hcl:1,"}},
		{"bad log_level", "log_level = \"loud\"\n",
			[]string{"config.hcl:1,13-19: Invalid log_level", `"loud" is not one of trace, debug, info, warn, error`}},
		{"bad log_format", "\nlog_format = \"xml\"",
			[]string{"config.hcl:2,14-19: Invalid log_format", "text, json"}},
		{"bad memory_limit", "memory_limit = \"lots\"",
			[]string{"config.hcl:1,16-22: Invalid memory_limit", `"lots" is not a size`, "96MiB"}},
		{"unknown size unit", "memory_limit = \"12 parsecs\"",
			[]string{"Invalid memory_limit", "is not a size"}},
		{"memory_limit too small", "memory_limit = \"1MB\"",
			[]string{"Invalid memory_limit", "too small", "16MiB"}},
		{"wrong type", "data_dir = [\"a\"]",
			[]string{"config.hcl:1,12-17: Incorrect attribute value type", "a string is required"}},
		{"empty data_dir", "data_dir = \"\"",
			[]string{"Invalid data_dir", "must not be empty"}},
		{"variables are not allowed", "data_dir = home",
			[]string{"config.hcl:1,12-16: Variables not allowed"}},
		{"socket too long", "socket = \"" + long + "\"",
			[]string{"config.hcl:1,10-", "Invalid socket", "at most 103"}},
		{"several bad values at once", "log_level = \"loud\"\nmemory_limit = \"lots\"\n",
			[]string{"config.hcl:1,13-19: Invalid log_level", "config.hcl:2,16-22: Invalid memory_limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "config.hcl"), tt.content)
			_, err := Load(path)
			if err == nil {
				t.Fatalf("Load(%q) succeeded, want an error", tt.content)
			}
			var de *DiagnosticsError
			if !errors.As(err, &de) {
				t.Errorf("error %T is not a *DiagnosticsError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadAnyFileName(t *testing.T) {
	setXDG(t)
	// hclsimple would refuse a name without ".hcl"; Load must not.
	path := writeFile(t, filepath.Join(t.TempDir(), "medalliond.conf"), `log_level = "warn"`)
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	if cfg.LogLevel != "warn" {
		t.Errorf("LogLevel = %q, want warn", cfg.LogLevel)
	}
}

func TestLoadTildeConfigPath(t *testing.T) {
	root := setXDG(t)
	writeFile(t, filepath.Join(root, "home", "m.hcl"), `log_format = "json"`)
	cfg, err := Load("~/m.hcl")
	if err != nil {
		t.Fatalf("Load(~/m.hcl): %v", err)
	}
	if cfg.LogFormat != "json" {
		t.Errorf("LogFormat = %q, want json", cfg.LogFormat)
	}
}

func TestApplyOverrides(t *testing.T) {
	root := setXDG(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		overrides []Override
		check     func(c *Config) bool
		wantErr   string
	}{
		{"data_dir absolute", []Override{{"data_dir", "/srv/med", "--data-dir"}},
			func(c *Config) bool { return c.DataDir == "/srv/med" }, ""},
		{"data_dir relative to the working dir", []Override{{"data_dir", "d", "--data-dir"}},
			func(c *Config) bool { return c.DataDir == filepath.Join(wd, "d") }, ""},
		{"socket tilde", []Override{{"socket", "~/s", "MEDALLION_SOCKET"}},
			func(c *Config) bool { return c.Socket == filepath.Join(root, "home", "s") }, ""},
		{"later wins", []Override{{"log_level", "debug", "--log-level"}, {"log_level", "error", "MEDALLION_LOG_LEVEL"}},
			func(c *Config) bool { return c.LogLevel == "error" }, ""},
		{"bad log level names its origin", []Override{{"log_level", "loud", "MEDALLION_LOG_LEVEL"}},
			nil, `MEDALLION_LOG_LEVEL: log_level: "loud" is not one of`},
		{"long socket", []Override{{"socket", "/" + strings.Repeat("s", 120), "--socket"}},
			nil, "--socket: socket: socket path"},
		{"empty data dir", []Override{{"data_dir", "", "--data-dir"}},
			nil, "--data-dir: data_dir: must not be empty"},
		{"unknown key", []Override{{"colour", "red", "--colour"}},
			nil, `unknown config key "colour"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			err := cfg.Apply(tt.overrides...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Apply = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if !tt.check(cfg) {
				t.Errorf("Apply(%v) = %+v", tt.overrides, *cfg)
			}
		})
	}
}

func TestEnvOverrides(t *testing.T) {
	env := map[string]string{
		EnvDataDir:  "/d",
		EnvLogLevel: "warn",
		"UNRELATED": "x",
	}
	got := EnvOverrides(func(k string) string { return env[k] })
	want := []Override{
		{Key: "data_dir", Value: "/d", Origin: EnvDataDir},
		{Key: "log_level", Value: "warn", Origin: EnvLogLevel},
	}
	if len(got) != len(want) {
		t.Fatalf("EnvOverrides = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("EnvOverrides[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestHCLRoundTrip(t *testing.T) {
	setXDG(t)
	tests := []*Config{
		Default(),
		{DataDir: "/data/${x}", Socket: `/run/"q"/s.sock`, LogLevel: "trace", LogFormat: "json", MemoryLimit: 0,
			Checkpoint: DefaultCheckpoint, Ingest: DefaultIngest, Export: DefaultExport},
		{DataDir: "/d", Socket: "/s", LogLevel: "warn", LogFormat: "text", MemoryLimit: 100e6,
			Watches: []Watch{
				{Name: "claude", Path: "/home/u/.claude/projects", Format: "claude-code", Include: []string{"**/*.jsonl"}, Exclude: []string{}},
				{Name: "mine %{x}", Path: "/t/${y}", Format: "auto", Include: []string{"a/*.jsonl", "**/b-?.jsonl"}, Exclude: []string{"**/tmp/**"}},
			},
			Checkpoint: Checkpoint{EveryEvents: 0, MinEvents: 3, Idle: 90 * time.Minute, Schedule: "CRON_TZ=UTC 30 2 * * 1-5"},
			ScopeRules: []ScopeRule{{Name: "cli", Path: "/w/muse/cli", Nodes: []string{"repo:muse", "module:cli"}}},
			Ingest:     Ingest{MaxLine: 1 << 20, MaxText: 1000, MaxMessageText: 8 << 10, Reconcile: 90 * time.Second},
			Export:     Export{Every: 0, Keep: 3},
		},
	}
	for _, want := range tests {
		path := writeFile(t, filepath.Join(t.TempDir(), "shown.hcl"), string(want.HCL()))
		got, err := Load(path)
		if err != nil {
			t.Fatalf("Load(HCL()) of %+v: %v\n%s", *want, err, want.HCL())
		}
		got.File = ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip = %+v, want %+v\n%s", *got, *want, want.HCL())
		}
	}
}

// TestExampleParses keeps config.hcl.example loadable and equal to the
// defaults it documents.
func TestExampleParses(t *testing.T) {
	setXDG(t)
	cfg, err := Load(filepath.Join("..", "..", "config.hcl.example"))
	if err != nil {
		t.Fatalf("config.hcl.example: %v", err)
	}
	cfg.File = ""
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("config.hcl.example sets %+v, want the defaults %+v", *cfg, *Default())
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "config.hcl.example"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range fileSchema.Attributes {
		if !strings.Contains(string(src), a.Name+" = ") {
			t.Errorf("config.hcl.example does not document %s", a.Name)
		}
	}
}
