package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/spf13/cobra"
)

// executable is the path of the running medallionctl; tests replace it.
var executable = os.Executable

// hookCommandTimeout is the timeout, in seconds, written into the settings
// for the hook. The hook gives up on the daemon after 700 ms by itself;
// this is Claude Code's backstop if the process itself is stuck.
const hookCommandTimeout = 5

func (a *app) integrateCommand() *cobra.Command {
	var (
		dryRun, remove bool
		settings       string
	)
	cmd := &cobra.Command{
		Use:   "integrate claude-code",
		Short: "Install (or --remove) the session-start hook that gives an agent its save file",
		Long: `Integrate installs "medallionctl hook claude-code" as a SessionStart hook in
Claude Code's user settings (~/.claude/settings.json, or --settings PATH), so
every new Claude Code session starts with the save file of its directory.

It edits the file as text: it adds the hook and leaves every other byte as
it was (key order, indentation, other settings and hooks). Before changing
the file it saves a copy as settings.json.bak-<time>, and it writes the new
file atomically. Running it again changes nothing; if medallionctl moved, the
hook's command is updated in place.

--dry-run prints the change as a diff and writes nothing.

--remove takes out what integrate added: every medallionctl hook claude-code
hook, the group that held only it, and "SessionStart" and "hooks" when they
hold nothing else. After integrate and --remove the file is byte for byte
what it was (a file integrate created is left as "{}"). It backs up the file
the same way, and changes nothing when there is no hook to remove.`,
		Example: `  medallionctl integrate claude-code --dry-run
  medallionctl integrate claude-code
  medallionctl integrate claude-code --remove --dry-run
  medallionctl integrate claude-code --remove`,
		Args: exactArgs("AGENT"),
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the change as a diff instead of writing it")
	cmd.Flags().BoolVar(&remove, "remove", false, "remove the hook instead of installing it")
	cmd.Flags().StringVar(&settings, "settings", "", "Claude Code settings `file` (default ~/.claude/settings.json)")
	cmd.MarkFlagFilename("settings", "json")
	cmd.AddCommand(a.integrateMCPCommand())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if args[0] != "claude-code" {
			return usageErrorf("unknown agent %q: the supported one is claude-code", args[0])
		}
		a.customSettings = settings != ""
		if settings == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return fmt.Errorf("find the settings file: %w (give --settings PATH)", err)
			}
			settings = filepath.Join(home, ".claude", "settings.json")
		}
		if remove {
			return a.unintegrate(settings, dryRun)
		}
		self, err := executable()
		if err != nil {
			return fmt.Errorf("find medallionctl's own path: %w", err)
		}
		if p, err := filepath.EvalSymlinks(self); err == nil {
			self = p
		}
		command := shellQuote(self)
		if f := cmd.Flag("socket"); f != nil && f.Changed {
			// A daemon on another socket than the default: the hook, run
			// by Claude Code without our flags, must be told.
			command += " --socket " + shellQuote(a.socket)
		}
		command += " hook claude-code"
		return a.integrate(settings, command, dryRun)
	}
	return cmd
}

// shellQuote quotes s for sh when it needs it (Claude Code runs hook
// commands through a shell).
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// settingsFile is a settings file as read: its text, parsed with offsets.
type settingsFile struct {
	path   string
	exists bool
	text   []byte
	root   *jsonNode // nil when the file is missing or blank
}

func readSettings(path string) (*settingsFile, error) {
	text, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	sf, perr := readSettingsText(string(text))
	if perr != nil {
		return nil, fmt.Errorf("%s%w (fix it or move it away; nothing was changed)", path, perr)
	}
	sf.path, sf.exists = path, err == nil
	return sf, nil
}

// readSettingsText parses the text of a settings file; its errors read
// well after the file's path.
func readSettingsText(text string) (*settingsFile, error) {
	sf := &settingsFile{text: []byte(text)}
	if strings.TrimSpace(text) == "" {
		return sf, nil
	}
	root, err := parseJSONText(sf.text)
	if err != nil {
		return nil, fmt.Errorf(": %w", err)
	}
	if root.kind != '{' {
		return nil, errors.New(" is not a JSON object")
	}
	sf.root = root
	return sf, nil
}

// sessionStart finds hooks and hooks.SessionStart in the settings; either
// is nil when absent, and a value of the wrong type is an error.
func (sf *settingsFile) sessionStart() (hooks, groups *jsonNode, err error) {
	if sf.root == nil {
		return nil, nil, nil
	}
	hooks = sf.root.member("hooks")
	if hooks == nil {
		return nil, nil, nil
	}
	if hooks.kind != '{' {
		return nil, nil, fmt.Errorf("%s: \"hooks\" is not an object (nothing was changed)", sf.path)
	}
	groups = hooks.member("SessionStart")
	if groups != nil && groups.kind != '[' {
		return nil, nil, fmt.Errorf("%s: \"hooks.SessionStart\" is not a list (nothing was changed)", sf.path)
	}
	return hooks, groups, nil
}

// hookRef is one hook of a SessionStart group: element index of the
// "hooks" list of groups.elems[group].
type hookRef struct {
	group, index int
	command      *jsonNode // its "command" string
}

// sessionStartHooks lists the command hooks of every SessionStart group.
func sessionStartHooks(groups *jsonNode) []hookRef {
	if groups == nil {
		return nil
	}
	var refs []hookRef
	for gi, g := range groups.elems {
		if g.kind != '{' {
			continue
		}
		list := g.member("hooks")
		if list == nil || list.kind != '[' {
			continue
		}
		for hi, h := range list.elems {
			if h.kind != '{' {
				continue
			}
			c := h.member("command")
			if c == nil || c.kind != '"' {
				continue
			}
			refs = append(refs, hookRef{group: gi, index: hi, command: c})
		}
	}
	return refs
}

// commandOf decodes a hook's command string.
func commandOf(text []byte, c *jsonNode) string {
	var s string
	_ = json.Unmarshal(text[c.start:c.end], &s)
	return s
}

// isMedallionHook tells a hook that runs medallionctl's claude-code hook,
// from whatever path and with whatever flags.
func isMedallionHook(command string) bool {
	return strings.Contains(command, "medallionctl") && strings.Contains(command, " hook claude-code")
}

// hookGroup and hookEntry are what integrate adds, in the key order Claude
// Code's own files use.
type hookGroup struct {
	Matcher string      `json:"matcher"`
	Hooks   []hookEntry `json:"hooks"`
}

type hookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// integrate adds the hook command to the settings file at path.
func (a *app) integrate(path, command string, dryRun bool) error {
	sf, err := readSettings(path)
	if err != nil {
		return err
	}
	text, err := addSessionStartHook(sf, command)
	var installed alreadyInstalled
	if errors.As(err, &installed) {
		fmt.Fprintf(a.stdout, "%s already runs %q at SessionStart; nothing changed\n", path, string(installed))
		return nil
	}
	if err != nil {
		return err
	}
	if dryRun {
		fmt.Fprintf(a.stdout, "would add the SessionStart hook %q to %s:\n", command, path)
		_, err := a.stdout.Write(diff.Diff(path, sf.text, path+" (new)", text))
		return err
	}
	if err := a.writeSettings(sf, text); err != nil {
		return err
	}
	undo := "medallionctl integrate claude-code --remove"
	if a.customSettings {
		undo += " --settings " + shellQuote(path)
	}
	fmt.Fprintf(a.stdout, "added the SessionStart hook %q to %s\n(undo: %s)\n", command, path, undo)
	return nil
}

// alreadyInstalled is addSessionStartHook's answer when the settings have
// the hook already: the command they run.
type alreadyInstalled string

func (e alreadyInstalled) Error() string { return "already runs " + string(e) }

// addSessionStartHook returns the settings text with {"matcher": "",
// "hooks": [{"type": "command", "command": command, "timeout": 5}]} added
// to hooks.SessionStart, or alreadyInstalled when a hook there runs command
// or another medallionctl hook claude-code the user wrote (flags added to
// it). A medallionctl hook installed from another path (the binary moved)
// has its command replaced rather than doubled.
func addSessionStartHook(sf *settingsFile, command string) ([]byte, error) {
	text, root := sf.text, sf.root
	if root == nil {
		text = []byte("{}\n")
		root = &jsonNode{kind: '{', start: 0, end: 2}
	}
	hooks, groups, err := sf.sessionStart()
	if err != nil {
		return nil, err
	}
	refs := sessionStartHooks(groups)
	var stale *jsonNode
	for _, r := range refs {
		cmd := commandOf(text, r.command)
		switch {
		case cmd == command:
			return nil, alreadyInstalled(cmd)
		case strings.Contains(cmd, "medallionctl") && strings.HasSuffix(cmd, " hook claude-code"):
			stale = r.command
		case isMedallionHook(cmd):
			return nil, alreadyInstalled(cmd)
		}
	}
	if stale != nil {
		return replaceValue(text, stale, command)
	}
	st := styleOf(text, root)
	group := hookGroup{Hooks: []hookEntry{{Type: "command", Command: command, Timeout: hookCommandTimeout}}}
	switch {
	case hooks == nil:
		return appendItem(text, st, root, "hooks", struct {
			SessionStart []hookGroup `json:"SessionStart"`
		}{[]hookGroup{group}})
	case groups == nil:
		return appendItem(text, st, hooks, "SessionStart", []hookGroup{group})
	default:
		return appendItem(text, st, groups, "", group)
	}
}

// unintegrate removes every medallionctl hook from the settings at path.
func (a *app) unintegrate(path string, dryRun bool) error {
	sf, err := readSettings(path)
	if err != nil {
		return err
	}
	if !sf.exists {
		fmt.Fprintf(a.stdout, "%s does not exist; nothing to remove\n", path)
		return nil
	}
	text, removed, err := removeSessionStartHooks(sf)
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		fmt.Fprintf(a.stdout, "%s has no medallionctl hook; nothing changed\n", path)
		return nil
	}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	for _, c := range removed {
		fmt.Fprintf(a.stdout, "%s the SessionStart hook %q from %s\n", verb, c, path)
	}
	if dryRun {
		_, err := a.stdout.Write(diff.Diff(path, sf.text, path+" (new)", text))
		return err
	}
	return a.writeSettings(sf, text)
}

// removeSessionStartHooks returns the settings text without any
// medallionctl hook, and the commands it removed. What held only such a
// hook goes too, as integrate added it: its group, then "SessionStart" and
// "hooks" when they hold nothing else.
func removeSessionStartHooks(sf *settingsFile) ([]byte, []string, error) {
	text := sf.text
	var removed []string
	for {
		cur := &settingsFile{path: sf.path, text: text}
		if len(bytes.TrimSpace(text)) > 0 {
			root, err := parseJSONText(text)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", sf.path, err)
			}
			cur.root = root
		}
		hooks, groups, err := cur.sessionStart()
		if err != nil {
			return nil, nil, err
		}
		var target *hookRef
		for _, r := range sessionStartHooks(groups) {
			if isMedallionHook(commandOf(text, r.command)) {
				target = &r
				break
			}
		}
		if target == nil {
			return text, removed, nil
		}
		removed = append(removed, commandOf(text, target.command))
		group := groups.elems[target.group]
		list := group.member("hooks")
		onlyOurs := len(list.elems) == 1
		for _, m := range group.members {
			if m.key != "matcher" && m.key != "hooks" {
				onlyOurs = false // the user's group: keep it
			}
		}
		switch {
		case !onlyOurs:
			text = removeItem(text, list, target.index)
		case len(groups.elems) > 1:
			text = removeItem(text, groups, target.group)
		case len(hooks.members) > 1:
			text = removeItem(text, hooks, hooks.memberIndex("SessionStart"))
		default:
			text = removeItem(text, cur.root, cur.root.memberIndex("hooks"))
		}
	}
}

// writeSettings backs up the settings file, when there is one, and
// replaces it with text.
func (a *app) writeSettings(sf *settingsFile, text []byte) error {
	path := sf.path
	mode := fs.FileMode(0o600) // settings may hold tokens in "env"
	if sf.exists {
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		mode = st.Mode().Perm()
		backup, err := writeBackup(path, sf.text, mode)
		if err != nil {
			return fmt.Errorf("back up %s: %w", path, err)
		}
		fmt.Fprintf(a.stdout, "saved the previous settings as %s\n", backup)
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	return writeAtomic(path, text, mode)
}

// writeBackup writes data to path.bak-<time>, or path.bak-<time>-N when
// that exists (integrate and --remove in the same second), never over an
// earlier backup.
func writeBackup(path string, data []byte, mode fs.FileMode) (string, error) {
	base := path + ".bak-" + now().UTC().Format("20060102T150405Z")
	for i := 0; ; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return name, err
	}
}

// writeAtomic replaces path with data: a temporary file in the same
// directory, synced, then renamed over it, so Claude Code never reads a
// half-written settings file.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
