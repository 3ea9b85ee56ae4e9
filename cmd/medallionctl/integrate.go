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

func (a *app) integrateCommand() *cobra.Command {
	var (
		dryRun, remove bool
		settings       string
	)
	cmd := &cobra.Command{
		Use:   "integrate claude-code|codex|gemini",
		Short: "Install (or --remove) the session-start hook that gives an agent its save file",
		Long: `Integrate installs "medallionctl hook AGENT" as a SessionStart hook of a
coding agent, so that every new session of it starts with the save file of
its directory:

  claude-code  ~/.claude/settings.json (or --settings PATH)
  codex        $CODEX_HOME/hooks.json (default ~/.codex), and the hook's
               trust: Codex runs a hook only once its hash is recorded in
               config.toml, and skips an untrusted one without a word. With
               the codex binary on PATH, integrate asks Codex itself
               ("codex app-server": hooks/list, config/batchWrite) to record
               it, the way Codex's own /hooks screen does, and checks that
               Codex then reports the hook trusted. When it cannot, it adds a
               block to $CODEX_HOME/AGENTS.md instead, asking Codex to run
               "medallionctl load" at the start of a session, and says so.
  gemini       ~/.gemini/settings.json (or --settings PATH), matcher "*"

It edits each file as text: it adds the hook and leaves every other byte as
it was (key order, indentation, other settings and hooks). Before changing a
file it saves a copy as <file>.bak-<time>, and it writes the new file
atomically. Running it again changes nothing; if medallionctl moved, the
hook's command is updated in place.

--dry-run prints the change as a diff and writes nothing.

--remove takes out what integrate added: every medallionctl hook of the
agent, the group that held only it, and "SessionStart" and "hooks" when they
hold nothing else (for Codex also its trust entry and the AGENTS.md block).
After integrate and --remove the file is byte for byte what it was (a file
integrate created is left as "{}"). It backs up the file the same way, and
changes nothing when there is no hook to remove.`,
		Example: `  medallionctl integrate claude-code --dry-run
  medallionctl integrate claude-code
  medallionctl integrate codex
  medallionctl integrate gemini
  medallionctl integrate claude-code --remove --dry-run
  medallionctl integrate codex --remove`,
		Args: exactArgs("AGENT"),
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the change as a diff instead of writing it")
	cmd.Flags().BoolVar(&remove, "remove", false, "remove the hook instead of installing it")
	cmd.Flags().StringVar(&settings, "settings", "", "the agent's settings `file` (claude-code, gemini; Codex reads $CODEX_HOME/hooks.json)")
	cmd.MarkFlagFilename("settings", "json")
	cmd.AddCommand(a.integrateMCPCommand())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ag, err := agentNamed(args[0])
		if err != nil {
			return err
		}
		if settings != "" && ag.name == agentCodex {
			return usageErrorf("codex reads its hooks from $CODEX_HOME/hooks.json: set CODEX_HOME instead of --settings")
		}
		a.customSettings = settings != ""
		if settings == "" {
			if settings, err = ag.settings(); err != nil {
				return fmt.Errorf("find the settings file: %w (give --settings PATH)", err)
			}
		}
		in := &integration{app: a, agent: ag, path: settings, dryRun: dryRun}
		self, err := executable()
		if err != nil {
			return fmt.Errorf("find medallionctl's own path: %w", err)
		}
		if p, err := filepath.EvalSymlinks(self); err == nil {
			self = p
		}
		in.ctl = shellQuote(self)
		if f := cmd.Flag("socket"); f != nil && f.Changed {
			// A daemon on another socket than the default: the hook, run
			// by the agent without our flags, must be told.
			in.ctl += " --socket " + shellQuote(a.socket)
		}
		if remove {
			return in.remove()
		}
		return in.install(in.ctl + " hook " + ag.name)
	}
	return cmd
}

// shellQuote quotes s for sh when it needs it (the agents run hook
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
		if bytes.Contains(text, []byte("//")) || bytes.Contains(text, []byte("/*")) {
			// Gemini CLI reads settings.json with comments; this editor
			// keeps every byte it does not change, and comments between
			// the items it edits would not survive that.
			return nil, fmt.Errorf("%s%w: comments are not supported here; take them out, or add the hook by hand (see medallionctl integrate --help); nothing was changed", path, perr)
		}
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

// isMedallionHook tells a hook that runs medallionctl's hook for agent, from
// whatever path and with whatever flags.
func isMedallionHook(command, agent string) bool {
	return strings.Contains(command, "medallionctl") && strings.Contains(command+" ", " hook "+agent+" ")
}

// integration is one run of integrate or integrate --remove for one agent.
type integration struct {
	*app
	agent  *hookAgent
	path   string // the agent's hooks file
	dryRun bool
	// ctl runs this medallionctl from a shell: its path, quoted, and
	// --socket when one was given.
	ctl string
}

// install adds the hook command to the agent's hooks file, then does what
// else the agent needs (Codex: trust).
func (in *integration) install(command string) error {
	sf, err := readSettings(in.path)
	if err != nil {
		return err
	}
	text, err := addSessionStartHook(sf, command, in.agent)
	var installed alreadyInstalled
	switch {
	case errors.As(err, &installed):
		fmt.Fprintf(in.stdout, "%s already runs %q at SessionStart; nothing changed\n", in.path, string(installed))
	case err != nil:
		return err
	case in.dryRun:
		fmt.Fprintf(in.stdout, "would add the SessionStart hook %q to %s:\n", command, in.path)
		if _, err := in.stdout.Write(diff.Diff(in.path, sf.text, in.path+" (new)", text)); err != nil {
			return err
		}
	default:
		if err := in.writeFile(sf, text); err != nil {
			return err
		}
		fmt.Fprintf(in.stdout, "added the SessionStart hook %q to %s\n", command, in.path)
	}
	if in.agent.afterInstall != nil {
		if err := in.agent.afterInstall(in); err != nil {
			return err
		}
	}
	if err == nil && !in.dryRun {
		undo := "medallionctl integrate " + in.agent.name + " --remove"
		if in.customSettings {
			undo += " --settings " + shellQuote(in.path)
		}
		fmt.Fprintf(in.stdout, "(undo: %s)\n", undo)
	}
	return nil
}

// alreadyInstalled is addSessionStartHook's answer when the settings have
// the hook already: the command they run.
type alreadyInstalled string

func (e alreadyInstalled) Error() string { return "already runs " + string(e) }

// addSessionStartHook returns the settings text with the agent's group for
// command (see hookAgent.group) added to hooks.SessionStart, or
// alreadyInstalled when a hook there runs command or another medallionctl
// hook for the agent the user wrote (flags added to it). A medallionctl
// hook installed from another path (the binary moved) has its command
// replaced rather than doubled.
func addSessionStartHook(sf *settingsFile, command string, ag *hookAgent) ([]byte, error) {
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
		case strings.Contains(cmd, "medallionctl") && strings.HasSuffix(cmd, " hook "+ag.name):
			stale = r.command
		case isMedallionHook(cmd, ag.name):
			return nil, alreadyInstalled(cmd)
		}
	}
	if stale != nil {
		return replaceValue(text, stale, command)
	}
	st := styleOf(text, root)
	group := ag.group(command)
	switch {
	case hooks == nil:
		return appendItem(text, st, root, "hooks", struct {
			SessionStart []any `json:"SessionStart"`
		}{[]any{group}})
	case groups == nil:
		return appendItem(text, st, hooks, "SessionStart", []any{group})
	default:
		return appendItem(text, st, groups, "", group)
	}
}

// remove takes every medallionctl hook of the agent out of its hooks file,
// after what else the agent needs undone (Codex: trust, AGENTS.md).
func (in *integration) remove() error {
	sf, err := readSettings(in.path)
	if err != nil {
		return err
	}
	if in.agent.beforeRemove != nil {
		if err := in.agent.beforeRemove(in, sf); err != nil {
			return err
		}
	}
	if !sf.exists {
		fmt.Fprintf(in.stdout, "%s does not exist; nothing to remove\n", in.path)
		return nil
	}
	text, removed, err := removeSessionStartHooks(sf, in.agent.name)
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		fmt.Fprintf(in.stdout, "%s has no medallionctl hook; nothing changed\n", in.path)
		return nil
	}
	verb := "removed"
	if in.dryRun {
		verb = "would remove"
	}
	for _, c := range removed {
		fmt.Fprintf(in.stdout, "%s the SessionStart hook %q from %s\n", verb, c, in.path)
	}
	if in.dryRun {
		_, err := in.stdout.Write(diff.Diff(in.path, sf.text, in.path+" (new)", text))
		return err
	}
	return in.writeFile(sf, text)
}

// removeSessionStartHooks returns the settings text without any
// medallionctl hook for agent, and the commands it removed. What held only
// such a hook goes too, as integrate added it: its group, then
// "SessionStart" and "hooks" when they hold nothing else.
func removeSessionStartHooks(sf *settingsFile, agent string) ([]byte, []string, error) {
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
			if isMedallionHook(commandOf(text, r.command), agent) {
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

// writeFile backs up the file sf was read from, when there is one, and
// replaces it with text.
func (a *app) writeFile(sf *settingsFile, text []byte) error {
	return a.replaceFile(sf.path, sf.exists, sf.text, text, 0o600) // settings may hold tokens in "env"
}

// replaceFile backs up path (when exists, holding old) and replaces it with
// text, keeping its mode; a new file gets mode and its folder is created.
func (a *app) replaceFile(path string, exists bool, old, text []byte, mode fs.FileMode) error {
	if exists {
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		mode = st.Mode().Perm()
		backup, err := writeBackup(path, old, mode)
		if err != nil {
			return fmt.Errorf("back up %s: %w", path, err)
		}
		fmt.Fprintf(a.stdout, "saved the previous %s as %s\n", filepath.Base(path), backup)
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
// directory, synced, then renamed over it, so the agent never reads a
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
