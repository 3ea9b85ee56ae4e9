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
		dryRun   bool
		settings string
	)
	cmd := &cobra.Command{
		Use:   "integrate claude-code",
		Short: "Install the session-start hook that gives an agent its save file",
		Long: `Integrate installs "medallionctl hook claude-code" as a SessionStart hook in
Claude Code's user settings (~/.claude/settings.json, or --settings PATH), so
every new Claude Code session starts with the save file of its directory.

It keeps every other setting and hook, saves a copy of the file as
settings.json.bak-<time> before changing it, and writes the new file
atomically. Running it again changes nothing. --dry-run prints the settings
it would write and writes nothing.`,
		Example: `  medallionctl integrate claude-code --dry-run
  medallionctl integrate claude-code`,
		Args: exactArgs("AGENT"),
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the new settings instead of writing them")
	cmd.Flags().StringVar(&settings, "settings", "", "Claude Code settings `file` (default ~/.claude/settings.json)")
	cmd.MarkFlagFilename("settings", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if args[0] != "claude-code" {
			return usageErrorf("unknown agent %q: the supported one is claude-code", args[0])
		}
		if settings == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return fmt.Errorf("find the settings file: %w (give --settings PATH)", err)
			}
			settings = filepath.Join(home, ".claude", "settings.json")
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

// integrate adds the hook command to the settings file at path.
func (a *app) integrate(path, command string, dryRun bool) error {
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	doc := map[string]any{}
	if len(bytes.TrimSpace(old)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(old))
		// Numbers stay as written (no float64 round trip).
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return fmt.Errorf("parse %s: %w (fix it or move it away; nothing was changed)", path, err)
		}
	}
	changed, err := addSessionStartHook(doc, command)
	if err != nil {
		return fmt.Errorf("%s: %w (nothing was changed)", path, err)
	}
	if !changed {
		fmt.Fprintf(a.stdout, "%s already runs %q at SessionStart; nothing changed\n", path, command)
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode settings: %w", err)
	}
	if dryRun {
		fmt.Fprintf(a.stdout, "would write %s:\n%s", path, buf.Bytes())
		return nil
	}

	mode := fs.FileMode(0o600) // settings may hold tokens in "env"
	if exists {
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		mode = st.Mode().Perm()
		backup := path + ".bak-" + now().UTC().Format("20060102T150405Z")
		if err := os.WriteFile(backup, old, mode); err != nil {
			return fmt.Errorf("back up %s: %w", path, err)
		}
		fmt.Fprintf(a.stdout, "saved the previous settings as %s\n", backup)
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := writeAtomic(path, buf.Bytes(), mode); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "added the SessionStart hook %q to %s\n", command, path)
	return nil
}

// addSessionStartHook adds {"matcher": "", "hooks": [{"type": "command",
// "command": command, "timeout": 5}]} to doc.hooks.SessionStart, unless a
// hook there already runs command. A medallionctl hook installed from
// another path (the binary moved) is updated in place rather than doubled.
// It reports whether doc changed.
func addSessionStartHook(doc map[string]any, command string) (bool, error) {
	hooks, ok := doc["hooks"].(map[string]any)
	if !ok {
		if doc["hooks"] != nil {
			return false, errors.New(`"hooks" is not an object`)
		}
		hooks = map[string]any{}
		doc["hooks"] = hooks
	}
	groups, ok := hooks["SessionStart"].([]any)
	if !ok && hooks["SessionStart"] != nil {
		return false, errors.New(`"hooks.SessionStart" is not a list`)
	}
	var stale map[string]any
	for _, g := range groups {
		group, _ := g.(map[string]any)
		list, _ := group["hooks"].([]any)
		for _, h := range list {
			hook, _ := h.(map[string]any)
			cmd, _ := hook["command"].(string)
			switch {
			case cmd == command:
				return false, nil
			case strings.Contains(cmd, "medallionctl") && strings.HasSuffix(cmd, " hook claude-code"):
				stale = hook
			}
		}
	}
	if stale != nil {
		stale["command"] = command
		return true, nil
	}
	hooks["SessionStart"] = append(groups, map[string]any{
		"matcher": "",
		"hooks": []any{map[string]any{
			"type":    "command",
			"command": command,
			"timeout": hookCommandTimeout,
		}},
	})
	return true, nil
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
