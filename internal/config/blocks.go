package config

import (
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/robfig/cron/v3"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/medallionhq/medallion/internal/paths"
)

// The ingestion blocks of the config file:
//
//	watch "NAME" { path, format, include, exclude }     repeatable
//	checkpoint { every_events, min_events, idle, schedule }
//	scope_rule "NAME" { path, nodes }                   repeatable
//	ingest { max_line, max_text, max_message_text, reconcile }

// Watch formats besides the transcript formats: FormatAuto detects the
// format of each file from its first line.
const FormatAuto = "auto"

// WatchFormats lists the accepted watch format values.
var WatchFormats = []string{FormatAuto, "claude-code", "codex", "gemini", "jsonl"}

// DefaultInclude is the include list of a watch block that sets none:
// every JSONL file at any depth under the root.
var DefaultInclude = []string{"**/*.jsonl"}

// Watch is one folder of transcripts to ingest.
type Watch struct {
	// Name is the block's label; unique.
	Name string
	// Path is the root folder (absolute); it need not exist yet.
	Path string
	// Format is one of WatchFormats.
	Format string
	// Include and Exclude are glob patterns over paths relative to Path,
	// with "/" separators; "**" matches any number of folders. A file is
	// ingested when it matches an Include pattern and no Exclude pattern.
	Include []string
	Exclude []string
}

// GeminiInclude is what the default Gemini CLI watch reads under
// ~/.gemini/tmp/<project>/: the chat recordings, appended .jsonl files
// (subagents in chats/<parent session>/) and the whole-file .json of
// Gemini CLI up to 0.38; not logs.json, checkpoints or tool outputs.
var GeminiInclude = []string{"*/chats/**/*.jsonl", "*/chats/*.json"}

// DefaultWatches are the roots watched when the config has no watch block:
// where Claude Code, Codex CLI and Gemini CLI keep their session
// transcripts.
func DefaultWatches() []Watch {
	home := func(p string) string {
		abs, err := paths.ExpandHome(p)
		if err != nil {
			return p
		}
		return filepath.Clean(abs)
	}
	return []Watch{
		{Name: "claude-code", Path: home("~/.claude/projects"), Format: "claude-code", Include: slices.Clone(DefaultInclude), Exclude: []string{}},
		{Name: "codex", Path: home("~/.codex/sessions"), Format: "codex", Include: slices.Clone(DefaultInclude), Exclude: []string{}},
		{Name: "gemini", Path: home("~/.gemini/tmp"), Format: "gemini", Include: slices.Clone(GeminiInclude), Exclude: []string{}},
	}
}

// EffectiveWatches returns the configured watch blocks, or DefaultWatches
// when there are none. Whether a default root exists is the daemon's
// business: it watches it once it appears.
func (c *Config) EffectiveWatches() []Watch {
	if len(c.Watches) > 0 {
		return c.Watches
	}
	return DefaultWatches()
}

// Checkpoint is the checkpoint trigger policy.
type Checkpoint struct {
	// EveryEvents fires a checkpoint when a session has buffered this many
	// events since its last one; 0 turns the trigger off.
	EveryEvents int
	// MinEvents is the least number of buffered events for the automatic
	// mid-session triggers (every_events and schedule). Idle (the session
	// ended), significant events and manual checkpoints need only one.
	MinEvents int
	// Idle fires a checkpoint when a session has had no new event for this
	// long; 0 turns the trigger off.
	Idle time.Duration
	// Schedule is a cron spec (five fields, or a descriptor such as
	// "@hourly" or "@every 30m") checkpointing every session with at least
	// MinEvents buffered; "" turns it off.
	Schedule string
}

// DefaultCheckpoint is the trigger policy without a checkpoint block.
var DefaultCheckpoint = Checkpoint{EveryEvents: 10, MinEvents: 5, Idle: 10 * time.Minute}

// ScopeRule maps sessions working under a folder to graph nodes.
type ScopeRule struct {
	// Name is the block's label; unique.
	Name string
	// Path is a folder (absolute): a session whose cwd is this folder or
	// below it gets Nodes. The longest matching path wins.
	Path string
	// Nodes are graph nodes such as "repo:muse", "module:cli".
	Nodes []string
}

// Ingest bounds what is read and stored per line and sets the safety scan.
type Ingest struct {
	// MaxLine is the longest transcript line read, in bytes; longer lines
	// are skipped and counted as "line_too_long".
	MaxLine int64
	// MaxText bounds the text stored for tool calls, tool results,
	// reasoning and system events.
	MaxText int64
	// MaxMessageText bounds the text stored for user prompts, assistant
	// messages, compaction summaries and plans.
	MaxMessageText int64
	// Reconcile is how often every watch root is rescanned as a safety net
	// for missed file events.
	Reconcile time.Duration
}

// DefaultIngest is the ingestion setting without an ingest block.
var DefaultIngest = Ingest{MaxLine: 16 << 20, MaxText: 4 << 10, MaxMessageText: 16 << 10, Reconcile: 5 * time.Minute}

// Bounds of the ingest sizes: a line cap below 64 KiB would skip ordinary
// tool results; the text bounds follow the transcript package's minimum.
const (
	minMaxLine   = 64 << 10
	maxMaxLine   = 1 << 30
	minMaxText   = 256
	maxMaxText   = 16 << 20
	minReconcile = time.Second
)

var blockSchemas = map[string]*hcl.BodySchema{
	"watch": {Attributes: []hcl.AttributeSchema{
		{Name: "path", Required: true}, {Name: "format"}, {Name: "include"}, {Name: "exclude"},
	}},
	"checkpoint": {Attributes: []hcl.AttributeSchema{
		{Name: "every_events"}, {Name: "min_events"}, {Name: "idle"}, {Name: "schedule"},
	}},
	"scope_rule": {Attributes: []hcl.AttributeSchema{
		{Name: "path", Required: true}, {Name: "nodes", Required: true},
	}},
	"ingest": {Attributes: []hcl.AttributeSchema{
		{Name: "max_line"}, {Name: "max_text"}, {Name: "max_message_text"}, {Name: "reconcile"},
	}},
	"export": {Attributes: []hcl.AttributeSchema{{Name: "every"}, {Name: "keep"}}},
	"llm": {Attributes: []hcl.AttributeSchema{
		{Name: "base_url"}, {Name: "model"}, {Name: "api_key_env"}, {Name: "api_key"}, {Name: "timeout"},
		{Name: "max_input_tokens"}, {Name: "daily_tokens"}, {Name: "structured"}, {Name: "review"},
	}},
}

// blockDecoder decodes the blocks of one file, collecting diagnostics.
type blockDecoder struct {
	dir   string // the config file's folder, for relative paths
	diags hcl.Diagnostics
}

func (d *blockDecoder) errorAt(rng hcl.Range, summary, detail string) {
	d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
}

// invalid reports a bad value of attr.
func (d *blockDecoder) invalid(attr *hcl.Attribute, block string, err error) {
	d.errorAt(attr.Expr.Range(), "Invalid "+block+"."+attr.Name, err.Error()+".")
}

// decodeBlocks reads every block of content onto c.
func (c *Config) decodeBlocks(dir string, blocks hcl.Blocks) hcl.Diagnostics {
	d := &blockDecoder{dir: dir}
	seen := map[string]*hcl.Block{}
	for _, b := range blocks {
		key := b.Type
		if len(b.Labels) > 0 {
			key += " " + b.Labels[0]
		}
		if prev, dup := seen[key]; dup {
			what := fmt.Sprintf("a %s block", b.Type)
			if len(b.Labels) > 0 {
				what = fmt.Sprintf("a %s block named %q", b.Type, b.Labels[0])
			}
			d.errorAt(b.DefRange, "Duplicate "+b.Type+" block",
				fmt.Sprintf("There is already %s at %s; give each its own name or merge them.", what, prev.DefRange))
			continue
		}
		seen[key] = b
		content, diags := b.Body.Content(blockSchemas[b.Type])
		d.diags = append(d.diags, diags...)
		switch b.Type {
		case "watch":
			if w, ok := d.watch(b, content); ok {
				c.Watches = append(c.Watches, w)
			}
		case "checkpoint":
			d.checkpoint(b, content, &c.Checkpoint)
		case "scope_rule":
			if r, ok := d.scopeRule(b, content); ok {
				c.ScopeRules = append(c.ScopeRules, r)
			}
		case "ingest":
			d.ingest(content, &c.Ingest)
		case "export":
			d.export(content, &c.Export)
		case "llm":
			if l, ok := d.llm(b, content); ok {
				c.LLM = l
			}
		}
	}
	d.checkOverlaps(c.Watches, seen)
	return d.diags
}

func (d *blockDecoder) label(b *hcl.Block) (string, bool) {
	name := b.Labels[0]
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, "/\\") {
		d.errorAt(b.LabelRanges[0], "Invalid "+b.Type+" name",
			fmt.Sprintf("%q: a %s name must be non-empty and without slashes.", name, b.Type))
		return "", false
	}
	return name, true
}

func (d *blockDecoder) watch(b *hcl.Block, content *hcl.BodyContent) (Watch, bool) {
	name, ok := d.label(b)
	w := Watch{Name: name, Format: FormatAuto, Include: slices.Clone(DefaultInclude), Exclude: []string{}}
	if attr, found := content.Attributes["path"]; found {
		if v, diag := stringValue(attr); diag != nil {
			d.diags, ok = append(d.diags, diag), false
		} else if p, err := resolvePath(v, d.dir); err != nil {
			d.invalid(attr, "watch", err)
			ok = false
		} else {
			w.Path = p
		}
	} else {
		ok = false // the schema reported the missing path
	}
	if attr, found := content.Attributes["format"]; found {
		if v, diag := stringValue(attr); diag != nil {
			d.diags, ok = append(d.diags, diag), false
		} else if err := checkOneOf(v, WatchFormats); err != nil {
			d.invalid(attr, "watch", err)
			ok = false
		} else {
			w.Format = v
		}
	}
	for _, key := range []string{"include", "exclude"} {
		attr, found := content.Attributes[key]
		if !found {
			continue
		}
		list, good := d.stringList(attr)
		if !good {
			ok = false
			continue
		}
		for _, p := range list {
			if err := CheckGlob(p); err != nil {
				d.invalid(attr, "watch", err)
				good = false
				break
			}
		}
		if !good {
			ok = false
			continue
		}
		if key == "include" {
			if len(list) == 0 {
				d.invalid(attr, "watch", errors.New("an empty include list would match no file; leave include out for the default [\"**/*.jsonl\"]"))
				ok = false
				continue
			}
			w.Include = list
		} else {
			w.Exclude = list
		}
	}
	return w, ok
}

// checkOverlaps rejects two watch roots where one holds the other: every
// file below both would be reported twice, possibly with two formats.
func (d *blockDecoder) checkOverlaps(watches []Watch, blocks map[string]*hcl.Block) {
	for i, a := range watches {
		for _, b := range watches[:i] {
			if within(a.Path, b.Path) || within(b.Path, a.Path) {
				d.errorAt(blocks["watch "+a.Name].DefRange, "Overlapping watch blocks",
					fmt.Sprintf("watch %q (%s) and watch %q (%s) overlap; use one root and its include/exclude patterns instead.", a.Name, a.Path, b.Name, b.Path))
			}
		}
	}
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

func (d *blockDecoder) checkpoint(b *hcl.Block, content *hcl.BodyContent, cp *Checkpoint) {
	ok := true
	for _, key := range []string{"every_events", "min_events"} {
		attr, found := content.Attributes[key]
		if !found {
			continue
		}
		n, good := d.count(attr, "checkpoint", 0, 1_000_000)
		if !good {
			ok = false
			continue
		}
		if key == "every_events" {
			cp.EveryEvents = n
		} else {
			if n < 1 {
				d.invalid(attr, "checkpoint", fmt.Errorf("%d is too small: a checkpoint needs at least 1 event", n))
				ok = false
				continue
			}
			cp.MinEvents = n
		}
	}
	if attr, found := content.Attributes["idle"]; found {
		if v, diag := stringValue(attr); diag != nil {
			d.diags = append(d.diags, diag)
		} else if dur, err := parseDuration(v, time.Millisecond); err != nil {
			d.invalid(attr, "checkpoint", err)
		} else {
			cp.Idle = dur
		}
	}
	if attr, found := content.Attributes["schedule"]; found {
		if v, diag := stringValue(attr); diag != nil {
			d.diags = append(d.diags, diag)
		} else if err := CheckSchedule(v); err != nil {
			d.invalid(attr, "checkpoint", err)
		} else {
			cp.Schedule = strings.TrimSpace(v)
		}
	}
	if ok && cp.EveryEvents > 0 && cp.MinEvents > cp.EveryEvents {
		d.errorAt(b.DefRange, "Invalid checkpoint",
			fmt.Sprintf("min_events (%d) is larger than every_events (%d): lower min_events or raise every_events.", cp.MinEvents, cp.EveryEvents))
	}
}

func (d *blockDecoder) scopeRule(b *hcl.Block, content *hcl.BodyContent) (ScopeRule, bool) {
	name, ok := d.label(b)
	r := ScopeRule{Name: name}
	if attr, found := content.Attributes["path"]; found {
		if v, diag := stringValue(attr); diag != nil {
			d.diags, ok = append(d.diags, diag), false
		} else if p, err := resolvePath(v, d.dir); err != nil {
			d.invalid(attr, "scope_rule", err)
			ok = false
		} else {
			r.Path = p
		}
	} else {
		ok = false
	}
	if attr, found := content.Attributes["nodes"]; found {
		list, good := d.stringList(attr)
		if good && len(list) == 0 {
			d.invalid(attr, "scope_rule", errors.New("a rule needs at least one graph node, such as \"repo:muse\""))
			good = false
		}
		for _, n := range list {
			if err := CheckNode(n); err != nil && good {
				d.invalid(attr, "scope_rule", err)
				good = false
			}
		}
		if good {
			r.Nodes = list
		} else {
			ok = false
		}
	} else {
		ok = false
	}
	return r, ok
}

func (d *blockDecoder) ingest(content *hcl.BodyContent, in *Ingest) {
	sizes := []struct {
		key      string
		min, max int64
		dst      *int64
	}{
		{"max_line", minMaxLine, maxMaxLine, &in.MaxLine},
		{"max_text", minMaxText, maxMaxText, &in.MaxText},
		{"max_message_text", minMaxText, maxMaxText, &in.MaxMessageText},
	}
	for _, s := range sizes {
		attr, found := content.Attributes[s.key]
		if !found {
			continue
		}
		v, diag := stringValue(attr)
		if diag != nil {
			d.diags = append(d.diags, diag)
			continue
		}
		n, err := ParseSize(v)
		switch {
		case err != nil:
		case n < s.min:
			err = fmt.Errorf("%q is too small: use at least %s", v, FormatSize(s.min))
		case n > s.max:
			err = fmt.Errorf("%q is too large: use at most %s", v, FormatSize(s.max))
		}
		if err != nil {
			d.invalid(attr, "ingest", err)
			continue
		}
		*s.dst = n
	}
	if attr, found := content.Attributes["reconcile"]; found {
		if v, diag := stringValue(attr); diag != nil {
			d.diags = append(d.diags, diag)
		} else if dur, err := parseDuration(v, minReconcile); err != nil {
			d.invalid(attr, "ingest", err)
		} else if dur == 0 {
			d.invalid(attr, "ingest", errors.New("the reconcile scan is the safety net for missed file events and cannot be turned off; use a long interval such as \"1h\" instead"))
		} else {
			in.Reconcile = dur
		}
	}
}

// stringList evaluates attr as a list of strings.
func (d *blockDecoder) stringList(attr *hcl.Attribute) ([]string, bool) {
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() {
		d.diags = append(d.diags, diags...)
		return nil, false
	}
	lv, err := convert.Convert(v, cty.List(cty.String))
	if err != nil || lv.IsNull() || !lv.IsWhollyKnown() {
		d.errorAt(attr.Expr.Range(), "Incorrect attribute value type",
			fmt.Sprintf("Inappropriate value for attribute %q: a list of strings is required.", attr.Name))
		return nil, false
	}
	out := []string{}
	for _, e := range lv.AsValueSlice() {
		if e.IsNull() {
			d.errorAt(attr.Expr.Range(), "Incorrect attribute value type",
				fmt.Sprintf("Inappropriate value for attribute %q: the list must not hold null.", attr.Name))
			return nil, false
		}
		out = append(out, e.AsString())
	}
	return out, true
}

// count evaluates attr as a whole number in [lo, hi].
func (d *blockDecoder) count(attr *hcl.Attribute, block string, lo, hi int) (int, bool) {
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() {
		d.diags = append(d.diags, diags...)
		return 0, false
	}
	nv, err := convert.Convert(v, cty.Number)
	if err != nil || nv.IsNull() || !nv.IsKnown() {
		d.errorAt(attr.Expr.Range(), "Incorrect attribute value type",
			fmt.Sprintf("Inappropriate value for attribute %q: a number is required.", attr.Name))
		return 0, false
	}
	f := nv.AsBigFloat()
	if !f.IsInt() || f.Cmp(big.NewFloat(float64(lo))) < 0 || f.Cmp(big.NewFloat(float64(hi))) > 0 {
		d.invalid(attr, block, fmt.Errorf("%s is not a whole number from %d to %d", f.Text('g', -1), lo, hi))
		return 0, false
	}
	n, _ := f.Int64()
	return int(n), true
}

// parseDuration parses a Go duration ("90s", "10m", "1h30m"); "0" and "off"
// give 0 (the feature is off). A non-zero duration must be at least min.
func parseDuration(s string, min time.Duration) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "0" || strings.EqualFold(t, "off") {
		return 0, nil
	}
	dur, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: use a number with a unit s, m or h (e.g. \"10m\", \"1h30m\"), or \"off\"", s)
	}
	if dur < min {
		return 0, fmt.Errorf("%q is too short: use at least %s, or \"off\"", s, min)
	}
	return dur, nil
}

// CheckSchedule validates a checkpoint schedule: "" (none), a standard
// five-field cron spec, or a descriptor such as "@hourly" or "@every 1h",
// optionally prefixed by CRON_TZ=<zone>.
func CheckSchedule(spec string) error {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil
	}
	if _, err := cron.ParseStandard(spec); err != nil {
		return fmt.Errorf("%q is not a cron schedule (%v): use five fields \"minute hour day-of-month month day-of-week\" such as \"0 * * * *\", or a descriptor such as \"@hourly\" or \"@every 30m\"", spec, err)
	}
	return nil
}

// CheckGlob validates a watch include/exclude pattern: "/"-separated
// segments, each "**" or a filepath.Match pattern; relative to the root.
func CheckGlob(pattern string) error {
	if pattern == "" {
		return errors.New("an empty pattern matches nothing")
	}
	if strings.HasPrefix(pattern, "/") {
		return fmt.Errorf("pattern %q must be relative to the watch path", pattern)
	}
	for seg := range strings.SplitSeq(pattern, "/") {
		if seg == "**" {
			continue
		}
		if _, err := filepath.Match(seg, ""); err != nil {
			return fmt.Errorf("pattern %q: %w", pattern, err)
		}
	}
	return nil
}

// CheckNode validates a graph node: "<kind>:<name>", both non-empty and
// without spaces.
func CheckNode(n string) error {
	kind, name, ok := strings.Cut(n, ":")
	if !ok || kind == "" || name == "" || strings.ContainsAny(n, " \t\n") {
		return fmt.Errorf("graph node %q: write it as kind:name, such as \"repo:muse\" or \"module:cli\"", n)
	}
	return nil
}
