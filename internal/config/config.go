// Package config loads medalliond's HCL configuration file, fills in
// defaults and applies overrides from flags and the environment.
//
// Precedence, lowest to highest: built-in defaults, the config file, command
// line flags, MEDALLION_* environment variables.
//
// Paths may start with "~/" (the user's home). A relative data_dir or socket
// in a config file is resolved against the directory holding that file, so a
// config keeps working whatever the daemon's working directory is; relative
// paths from flags or the environment are resolved against the working
// directory, as a shell user expects.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/medallionhq/medallion/internal/paths"
)

// Environment variables that override the config file and flags.
const (
	EnvDataDir  = "MEDALLION_DATA_DIR"
	EnvSocket   = "MEDALLION_SOCKET"
	EnvLogLevel = "MEDALLION_LOG_LEVEL"
)

// DefaultMemoryLimit is the soft memory limit the daemon runs under unless
// configured otherwise; it keeps Badger's caches and the GC in a budget that
// suits a background service.
const DefaultMemoryLimit = 96 << 20

// MinMemoryLimit is the smallest memory_limit accepted: below it the Go GC
// would run almost continuously.
const MinMemoryLimit = 16 << 20

// maxSocketPath is the usable length of sun_path: 104 bytes on macOS and the
// BSDs (108 on Linux) including the terminating NUL.
const maxSocketPath = 104

// LogLevels lists the accepted log_level values, most verbose first.
var LogLevels = []string{"trace", "debug", "info", "warn", "error"}

// LogFormats lists the accepted log_format values.
var LogFormats = []string{"text", "json"}

// Config is the daemon's effective configuration.
//
// Later features add their blocks as new fields here and in fileSchema;
// existing fields keep their meaning.
type Config struct {
	// DataDir holds the store and the daemon's lock file (absolute).
	DataDir string
	// Socket is the Unix socket the local API listens on (absolute).
	Socket string
	// LogLevel is one of LogLevels.
	LogLevel string
	// LogFormat is one of LogFormats.
	LogFormat string
	// MemoryLimit is the Go runtime's soft memory limit in bytes; 0 means
	// the daemon leaves the runtime's limit alone (GOMEMLIMIT or none).
	MemoryLimit int64

	// Watches are the watch blocks in file order; empty means the daemon
	// watches DefaultWatches (see EffectiveWatches).
	Watches []Watch
	// Checkpoint is the checkpoint trigger policy.
	Checkpoint Checkpoint
	// ScopeRules map folders to graph nodes, in file order.
	ScopeRules []ScopeRule
	// Ingest bounds line and text sizes and sets the reconcile interval.
	Ingest Ingest
	// Export schedules the automatic export of every medallion.
	Export Export
	// LLM configures Tier 1; nil (no llm block) means no model and no
	// network.
	LLM *LLM

	// File is the config file these values were loaded from, "" when none.
	File string
}

// fileSchema lists the config file's keys. Every attribute is optional so
// defaults survive; hclsyntax rejects any other key with a diagnostic that
// suggests the closest known one.
var fileSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "data_dir"},
		{Name: "socket"},
		{Name: "log_level"},
		{Name: "log_format"},
		{Name: "memory_limit"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "watch", LabelNames: []string{"name"}},
		{Type: "checkpoint"},
		{Type: "scope_rule", LabelNames: []string{"name"}},
		{Type: "ingest"},
		{Type: "export"},
		{Type: "llm"},
	},
}

// Default returns the built-in configuration, with paths from the XDG
// environment (see package paths).
func Default() *Config {
	return &Config{
		DataDir:     paths.DataDir(),
		Socket:      paths.Socket(),
		LogLevel:    "info",
		LogFormat:   "text",
		MemoryLimit: DefaultMemoryLimit,
		Checkpoint:  DefaultCheckpoint,
		Ingest:      DefaultIngest,
		Export:      DefaultExport,
	}
}

// Load reads the config file at path on top of the defaults.
//
// With path "", the default file (paths.ConfigFile()) is read when it
// exists; without it, the defaults are returned. A path given explicitly must
// exist. Syntax errors, unknown keys and bad values come back as a
// *DiagnosticsError whose text names file:line,column of each problem.
func Load(path string) (*Config, error) {
	cfg := Default()
	if path == "" {
		def := paths.ConfigFile()
		if _, err := os.Stat(def); errors.Is(err, fs.ErrNotExist) {
			return cfg, nil
		}
		path = def
	}
	path, err := paths.ExpandHome(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	if err := cfg.decode(abs, src); err != nil {
		return nil, err
	}
	return cfg, nil
}

// decode parses src (named filename in diagnostics) onto c. It parses with
// hclsyntax directly so any file name works, not just *.hcl (hclsimple picks
// the syntax by extension).
func (c *Config) decode(filename string, src []byte) error {
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return &DiagnosticsError{Diagnostics: diags}
	}
	// Collect unknown keys and every bad value at once, so a user fixes
	// them in one go.
	content, errs := file.Body.Content(fileSchema)
	dir := filepath.Dir(filename)
	for _, key := range []string{"data_dir", "socket", "log_level", "log_format", "memory_limit"} {
		attr, ok := content.Attributes[key]
		if !ok {
			continue
		}
		v, d := stringValue(attr)
		if d != nil {
			errs = append(errs, d)
			continue
		}
		var err error
		switch key {
		case "data_dir":
			c.DataDir, err = resolvePath(v, dir)
		case "socket":
			var p string
			if p, err = resolvePath(v, dir); err == nil {
				if err = checkSocket(p); err == nil {
					c.Socket = p
				}
			}
		case "log_level":
			if err = checkOneOf(v, LogLevels); err == nil {
				c.LogLevel = v
			}
		case "log_format":
			if err = checkOneOf(v, LogFormats); err == nil {
				c.LogFormat = v
			}
		case "memory_limit":
			c.MemoryLimit, err = parseMemoryLimit(v)
		}
		if err != nil {
			errs = append(errs, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid " + key,
				Detail:   err.Error() + ".",
				Subject:  attr.Expr.Range().Ptr(),
			})
		}
	}
	errs = append(errs, c.decodeBlocks(dir, content.Blocks)...)
	if errs.HasErrors() {
		// In file order, whichever check found them.
		slices.SortStableFunc(errs, func(a, b *hcl.Diagnostic) int { return a.Subject.Start.Byte - b.Subject.Start.Byte })
		return &DiagnosticsError{Diagnostics: errs}
	}
	c.File = filename
	return nil
}

// stringValue evaluates attr as a constant string. Numbers and bools convert
// (memory_limit = 0 is natural); anything else is a diagnostic.
func stringValue(attr *hcl.Attribute) (string, *hcl.Diagnostic) {
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() {
		return "", diags[0]
	}
	sv, err := convert.Convert(v, cty.String)
	if err != nil || sv.IsNull() || !sv.IsKnown() {
		return "", &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("Inappropriate value for attribute %q: a string is required.", attr.Name),
			Subject:  attr.Expr.Range().Ptr(),
		}
	}
	return sv.AsString(), nil
}

// Override is one value set from outside the config file.
type Override struct {
	// Key is the config key: "data_dir", "socket" or "log_level".
	Key string
	// Value is the raw value; relative paths resolve against the working
	// directory.
	Value string
	// Origin names where the value came from ("--data-dir",
	// "MEDALLION_DATA_DIR"), for error messages.
	Origin string
}

// EnvOverrides returns the overrides set in the environment, read with
// getenv (os.Getenv outside tests). Empty variables are ignored.
func EnvOverrides(getenv func(string) string) []Override {
	var out []Override
	for _, e := range []struct{ key, env string }{
		{"data_dir", EnvDataDir},
		{"socket", EnvSocket},
		{"log_level", EnvLogLevel},
	} {
		if v := getenv(e.env); v != "" {
			out = append(out, Override{Key: e.key, Value: v, Origin: e.env})
		}
	}
	return out
}

// Apply sets each override in order, validating it as the file's values are.
func (c *Config) Apply(overrides ...Override) error {
	for _, o := range overrides {
		if err := c.set(o.Key, o.Value); err != nil {
			return fmt.Errorf("%s: %w", o.Origin, err)
		}
	}
	return nil
}

func (c *Config) set(key, value string) error {
	switch key {
	case "data_dir", "socket":
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("%s %q: %w", key, value, err)
		}
		p, err := resolvePath(value, wd)
		if err == nil && key == "socket" {
			err = checkSocket(p)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if key == "socket" {
			c.Socket = p
		} else {
			c.DataDir = p
		}
	case "log_level":
		if err := checkOneOf(value, LogLevels); err != nil {
			return fmt.Errorf("log_level: %w", err)
		}
		c.LogLevel = value
	default:
		return fmt.Errorf("unknown config key %q", key)
	}
	return nil
}

// HCL renders c as a config file that Load reads back to the same values.
func (c *Config) HCL() []byte {
	var b strings.Builder
	for _, kv := range [][2]string{
		{"data_dir", c.DataDir},
		{"socket", c.Socket},
		{"log_level", c.LogLevel},
		{"log_format", c.LogFormat},
		{"memory_limit", FormatSize(c.MemoryLimit)},
	} {
		fmt.Fprintf(&b, "%-12s = %s\n", kv[0], quoteHCL(kv[1]))
	}
	if len(c.Watches) == 0 {
		b.WriteString("\n# No watch block: the daemon watches these folders, each once it exists:\n")
		for _, w := range DefaultWatches() {
			fmt.Fprintf(&b, "#   %s (%s)\n", w.Path, w.Format)
		}
	}
	for _, w := range c.Watches {
		fmt.Fprintf(&b, "\nwatch %s {\n", quoteHCL(w.Name))
		fmt.Fprintf(&b, "  path    = %s\n", quoteHCL(w.Path))
		fmt.Fprintf(&b, "  format  = %s\n", quoteHCL(w.Format))
		fmt.Fprintf(&b, "  include = %s\n", hclList(w.Include))
		fmt.Fprintf(&b, "  exclude = %s\n", hclList(w.Exclude))
		b.WriteString("}\n")
	}
	cp := c.Checkpoint
	fmt.Fprintf(&b, "\ncheckpoint {\n  every_events = %d\n  min_events   = %d\n  idle         = %s\n  schedule     = %s\n}\n",
		cp.EveryEvents, cp.MinEvents, quoteHCL(formatDuration(cp.Idle)), quoteHCL(cp.Schedule))
	for _, r := range c.ScopeRules {
		fmt.Fprintf(&b, "\nscope_rule %s {\n  path  = %s\n  nodes = %s\n}\n", quoteHCL(r.Name), quoteHCL(r.Path), hclList(r.Nodes))
	}
	in := c.Ingest
	fmt.Fprintf(&b, "\ningest {\n  max_line         = %s\n  max_text         = %s\n  max_message_text = %s\n  reconcile        = %s\n}\n",
		quoteHCL(FormatSize(in.MaxLine)), quoteHCL(FormatSize(in.MaxText)), quoteHCL(FormatSize(in.MaxMessageText)), quoteHCL(formatDuration(in.Reconcile)))
	fmt.Fprintf(&b, "\nexport {\n  every = %s\n  keep  = %d\n}\n", quoteHCL(formatDuration(c.Export.Every)), c.Export.Keep)
	if c.LLM != nil {
		b.WriteString(c.LLM.HCL())
	}
	return []byte(b.String())
}

// hclList renders a list of strings as an HCL tuple.
func hclList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = quoteHCL(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// formatDuration renders d so that parseDuration reads it back: "off" for
// 0, else Go's form without the zero units ("10m", not "10m0s").
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "off"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// quoteHCL quotes s as an HCL string literal. Unlike strconv.Quote it also
// escapes "${" and "%{", which HCL would read as template sequences.
func quoteHCL(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, "${", "$${")
	return strings.ReplaceAll(q, "%{", "%%{")
}

// resolvePath expands "~" and makes p absolute relative to dir.
func resolvePath(p, dir string) (string, error) {
	if p == "" {
		return "", errors.New("must not be empty")
	}
	p, err := paths.ExpandHome(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	return filepath.Clean(p), nil
}

// checkSocket rejects socket paths the kernel cannot bind: sun_path holds
// at most 103 bytes plus a NUL on macOS (107 on Linux).
func checkSocket(p string) error {
	if len(p) >= maxSocketPath {
		return fmt.Errorf("socket path %s is %d bytes long; Unix sockets allow at most %d: choose a shorter path", p, len(p), maxSocketPath-1)
	}
	return nil
}

func checkOneOf(v string, allowed []string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(allowed, ", "))
}

// DiagnosticsError is a config file error: HCL diagnostics, each naming
// file:line,column and, for unknown keys, suggesting the likely intended one.
type DiagnosticsError struct {
	Diagnostics hcl.Diagnostics
}

// Error lists every diagnostic, one per line, as HCL formats them
// ("config.hcl:3,1-4: Unsupported argument; ... Did you mean ...?").
func (e *DiagnosticsError) Error() string {
	lines := make([]string, 0, len(e.Diagnostics))
	for _, d := range e.Diagnostics {
		lines = append(lines, d.Error())
	}
	return strings.Join(lines, "\n")
}
