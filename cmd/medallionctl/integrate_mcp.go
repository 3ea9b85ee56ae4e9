package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/spf13/cobra"
)

// mcpServerName is the key of our server in every client's config.
const mcpServerName = "medallion"

// mcpClient is an MCP client whose config integrate mcp writes.
type mcpClient struct {
	name string
	// config finds the default config file.
	config func() (string, error)
	// toml: Codex's config.toml ([mcp_servers.NAME] tables); else a JSON
	// file with an "mcpServers" object.
	toml bool
}

var mcpClients = []mcpClient{
	{name: "claude-desktop", config: claudeDesktopConfig},
	{name: "cursor", config: homeFile(".cursor", "mcp.json")},
	{name: "codex", toml: true, config: func() (string, error) {
		home, err := codexHome()
		return filepath.Join(home, "config.toml"), err
	}},
	{name: "gemini", config: homeFile(".gemini", "settings.json")},
}

// claudeDesktopConfig is where Claude Desktop reads its MCP servers.
func claudeDesktopConfig() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"), nil
	case "windows":
		if d := os.Getenv("APPDATA"); d != "" {
			return filepath.Join(d, "Claude", "claude_desktop_config.json"), nil
		}
	}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "Claude", "claude_desktop_config.json"), nil
}

func mcpClientNames() []string {
	var out []string
	for _, c := range mcpClients {
		out = append(out, c.name)
	}
	return out
}

// mcpEntry is what a client's config says to start our server.
type mcpEntry struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

func (a *app) integrateMCPCommand() *cobra.Command {
	var (
		clientName, config  string
		write, dryRun, undo bool
	)
	cmd := &cobra.Command{
		Use:   "mcp --client " + strings.Join(mcpClientNames(), "|"),
		Short: "Print (or --write) the MCP server config of an MCP client",
		Long: `integrate mcp prints the config that makes an MCP client start
"medallionctl mcp" (the save-file tools load, search, get, record and
checkpoint), and the file it belongs in:

  claude-desktop  claude_desktop_config.json   "mcpServers"
  cursor          ~/.cursor/mcp.json           "mcpServers"
  codex           $CODEX_HOME/config.toml      [mcp_servers.medallion]
  gemini          ~/.gemini/settings.json      "mcpServers"

--write adds it to that file (or --config FILE) instead: it changes only the
"medallion" entry, keeps every other byte (key order, layout, other servers),
saves the previous file as FILE.bak-<time> and writes atomically. Running it
again changes nothing. --dry-run shows the change as a diff; --remove takes
the entry out again. Restart the client afterwards.

The command is this medallionctl's absolute path: clients started from a
desktop do not see your shell's PATH.`,
		Example: `  medallionctl integrate mcp --client cursor
  medallionctl integrate mcp --client codex --write --dry-run
  medallionctl integrate mcp --client claude-desktop --write
  medallionctl integrate mcp --client gemini --remove`,
		Args: exactArgs(),
	}
	cmd.Flags().StringVar(&clientName, "client", "", "the MCP `client`: "+strings.Join(mcpClientNames(), ", "))
	cmd.Flags().BoolVar(&write, "write", false, "add the entry to the client's config file instead of printing it")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "with --write or --remove: print the change as a diff, write nothing")
	cmd.Flags().BoolVar(&undo, "remove", false, "remove the entry from the client's config file")
	cmd.Flags().StringVar(&config, "config", "", "the client's config `file` (default: where the client reads it)")
	cmd.RegisterFlagCompletionFunc("client", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return mcpClientNames(), cobra.ShellCompDirectiveNoFileComp
	})
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		i := slices.IndexFunc(mcpClients, func(c mcpClient) bool { return c.name == clientName })
		if i < 0 {
			return usageErrorf("--client must be one of %s (got %q)", strings.Join(mcpClientNames(), ", "), clientName)
		}
		if dryRun && !write && !undo {
			return usageErrorf("--dry-run goes with --write or --remove")
		}
		if write && undo {
			return usageErrorf("give --write or --remove, not both")
		}
		client := mcpClients[i]
		if config == "" {
			var err error
			if config, err = client.config(); err != nil {
				return fmt.Errorf("find %s's config: %w (give --config FILE)", client.name, err)
			}
		}
		entry, err := a.mcpEntry()
		if err != nil {
			return err
		}
		undoHint := "medallionctl integrate mcp --client " + client.name + " --remove"
		if cmd.Flags().Changed("config") {
			undoHint += " --config " + shellQuote(config)
		}
		switch {
		case undo:
			return a.editMCPConfig(client, config, nil, dryRun, "")
		case write:
			return a.editMCPConfig(client, config, entry, dryRun, undoHint)
		}
		snippet, err := mcpSnippet(client, entry)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "# add to %s (or run this command again with --write):\n%s", config, snippet)
		return err
	}
	return cmd
}

// mcpEntry starts this medallionctl's mcp command on this command's socket,
// always named: MCP clients start servers with a bare environment (HOME,
// PATH, USER…, no XDG_RUNTIME_DIR), in which the default socket would
// resolve elsewhere, to no daemon or to another one.
func (a *app) mcpEntry() (*mcpEntry, error) {
	self, err := executable()
	if err != nil {
		return nil, fmt.Errorf("find medallionctl's own path: %w", err)
	}
	if p, err := filepath.EvalSymlinks(self); err == nil {
		self = p
	}
	sock, err := filepath.Abs(a.socket)
	if err != nil {
		return nil, fmt.Errorf("socket path %s: %w", a.socket, err)
	}
	return &mcpEntry{Command: self, Args: []string{"--socket", sock, "mcp"}}, nil
}

// mcpSnippet is the config a user adds by hand.
func mcpSnippet(c mcpClient, e *mcpEntry) (string, error) {
	if c.toml {
		return tomlTable(e), nil
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{mcpServerName: e}}, "", "  ")
	if err != nil {
		return "", err
	}
	return string(b) + "\n", nil
}

// tomlTable renders Codex's table for the server. JSON strings are valid
// TOML basic strings (their escapes are TOML's).
func tomlTable(e *mcpEntry) string {
	quote := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		return strings.TrimSpace(b.String())
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = quote(a)
	}
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n", mcpServerName, quote(e.Command), strings.Join(args, ", "))
}

// editMCPConfig sets (entry != nil) or removes our entry in the config
// file at path, with a backup, or shows the diff.
func (a *app) editMCPConfig(c mcpClient, path string, entry *mcpEntry, dryRun bool, undoHint string) error {
	sf, err := readConfigFile(c, path)
	if err != nil {
		return err
	}
	var text []byte
	if c.toml {
		text = editTOML(sf.text, entry)
	} else if text, err = editMCPServers(sf, entry); err != nil {
		return err
	}
	verb := "add the medallion MCP server to"
	if entry == nil {
		verb = "remove the medallion MCP server from"
	}
	if bytes.Equal(text, sf.text) {
		state := "has the medallion MCP server already"
		if entry == nil {
			state = "has no medallion MCP server"
		}
		_, err := fmt.Fprintf(a.stdout, "%s %s; nothing changed\n", path, state)
		return err
	}
	if dryRun {
		fmt.Fprintf(a.stdout, "would %s %s:\n", verb, path)
		_, err := a.stdout.Write(diff.Diff(path, sf.text, path+" (new)", text))
		return err
	}
	if err := a.writeFile(sf, text); err != nil {
		return err
	}
	if entry == nil {
		_, err = fmt.Fprintf(a.stdout, "removed the medallion MCP server from %s; restart %s\n", path, c.name)
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "added the medallion MCP server to %s; restart %s\n(undo: %s)\n", path, c.name, undoHint)
	return err
}

// readConfigFile reads a JSON config as settings files are read, or a
// TOML one as text.
func readConfigFile(c mcpClient, path string) (*settingsFile, error) {
	if !c.toml {
		return readSettings(path)
	}
	text, exists, err := readOptional(path)
	if err != nil {
		return nil, err
	}
	return &settingsFile{path: path, exists: exists, text: text}, nil
}

// editMCPServers returns the JSON config with mcpServers.medallion set to
// entry (added, or its value replaced when it differs), or removed for a
// nil entry (with "mcpServers" when nothing else is left in it), every
// other byte kept.
func editMCPServers(sf *settingsFile, entry *mcpEntry) ([]byte, error) {
	text := sf.text
	if sf.root == nil {
		if entry == nil {
			return text, nil
		}
		text = []byte("{}\n")
		root, err := parseJSONText(text)
		if err != nil {
			return nil, err
		}
		sf = &settingsFile{path: sf.path, exists: sf.exists, text: sf.text, root: root}
	}
	root := sf.root
	st := styleOf(text, root)
	servers := root.member("mcpServers")
	switch {
	case servers == nil && entry == nil:
		return text, nil
	case servers == nil:
		return appendItem(text, st, root, "mcpServers", map[string]any{mcpServerName: entry})
	case servers.kind != '{':
		return nil, fmt.Errorf("%s: \"mcpServers\" is not an object (nothing was changed)", sf.path)
	}
	k := servers.memberIndex(mcpServerName)
	switch {
	case k < 0 && entry == nil:
		return text, nil
	case k < 0:
		return appendItem(text, st, servers, mcpServerName, entry)
	case entry == nil && len(servers.members) == 1:
		// Ours was the only server: "mcpServers" goes too, as
		// integrate --remove takes out a "hooks" it emptied.
		return removeItem(text, root, root.memberIndex("mcpServers")), nil
	case entry == nil:
		return removeItem(text, servers, k), nil
	}
	cur := servers.members[k].value
	var have mcpEntry
	if json.Unmarshal(text[cur.start:cur.end], &have) == nil && have.Command == entry.Command && slices.Equal(have.Args, entry.Args) {
		return text, nil
	}
	return replaceValue(text, cur, entry)
}

// isOurTOMLTable reports whether line is the header of our table in
// config.toml: [mcp_servers.medallion], spaced or quoted in any way TOML
// allows, maybe with a comment. (Not a regexp: a package-level one is
// compiled at the start of every medallionctl process, the hook's too.)
func isOurTOMLTable(line string) bool {
	line, _, _ = strings.Cut(line, "#")
	line = strings.TrimSpace(line)
	inner, ok := strings.CutPrefix(line, "[")
	if !ok || strings.HasPrefix(inner, "[") {
		return false
	}
	if inner, ok = strings.CutSuffix(inner, "]"); !ok {
		return false
	}
	table, name, ok := strings.Cut(inner, ".")
	name = strings.TrimSpace(name)
	return ok && strings.TrimSpace(table) == "mcp_servers" && (name == mcpServerName || name == `"`+mcpServerName+`"`)
}

// editTOML returns config.toml with our [mcp_servers.medallion] table set
// to entry (replaced in place when present, appended otherwise), or taken
// out for a nil entry; the rest of the text is kept as it is.
func editTOML(text []byte, entry *mcpEntry) []byte {
	lines := strings.SplitAfter(string(text), "\n")
	start, end := -1, len(lines)
	for i, l := range lines {
		switch {
		case start < 0 && isOurTOMLTable(l):
			start = i
		case start >= 0 && strings.HasPrefix(strings.TrimSpace(l), "["):
			end = i
		}
		if start >= 0 && end < len(lines) {
			break
		}
	}
	table := ""
	if entry != nil {
		table = tomlTable(entry)
	}
	if start < 0 {
		if entry == nil {
			return text
		}
		s := string(text)
		switch {
		case s == "":
		case strings.HasSuffix(s, "\n\n"):
		case strings.HasSuffix(s, "\n"):
			s += "\n"
		default:
			s += "\n\n"
		}
		return []byte(s + table)
	}
	// The table runs to the next header; blank lines before that header
	// stay between the tables.
	for end > start+1 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	old := strings.Join(lines[start:end], "")
	if entry != nil && strings.TrimSpace(old) == strings.TrimSpace(table) {
		return text
	}
	if entry == nil && start > 0 && strings.TrimSpace(lines[start-1]) == "" {
		start-- // the blank line appending put before it
	}
	return []byte(strings.Join(lines[:start], "") + table + strings.Join(lines[end:], ""))
}
