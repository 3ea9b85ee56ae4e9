package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
)

func (a *app) loadCommand() *cobra.Command {
	var req api.LoadRequest
	cmd := &cobra.Command{
		Use:   "load (--node N | --tag T)... | --cwd DIR",
		Short: "Print the save file a new agent session should start with",
		Long: `Load prints the current canonical state of a scope, for a coding agent to
read at the start of a session: a short preamble telling it to treat the
content as true unless the user says otherwise, then the latest active
medallions of the scope, most important items first (rules, known fixes,
high-priority open questions, decisions, the rest of the open questions,
summary, subsystems, entry points), cut to fit --budget tokens. What was left
out is named with the command that shows it.

Name the scope with --node/--tag, or with --cwd, a directory the daemon
resolves to its scope (the repo it belongs to). -o json renders the same
selection as a JSON object (the medallions' sections and what was cut), for
tools; -o markdown, the default, is what an agent reads.`,
		Example: `  medallionctl load --node repo:muse
  medallionctl load --cwd . --budget 800
  medallionctl load --tag project_state --limit 5 -o json`,
		Args: exactArgs(),
	}
	// One output flag, -o, as every command has; its formats are the save
	// file's own. --format, its first name, is kept hidden for scripts.
	format := loadFormat("markdown")
	cmd.Flags().VarP(&format, "output", "o", "output `format`: markdown (for an agent) or json (for tools)")
	cmd.Flags().Var(&format, "format", "the same as -o")
	// Hidden rather than cobra's deprecated, which writes its note to
	// stdout, into the save file a script reads.
	cmd.Flags().MarkHidden("format")
	cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"markdown", "json"}, cobra.ShellCompDirectiveNoFileComp
	})
	cmd.Flags().StringArrayVar(&req.Nodes, "node", nil, "graph `node` of the scope (repeatable), e.g. repo:muse")
	cmd.Flags().StringArrayVar(&req.Tags, "tag", nil, "scope `tag` (repeatable)")
	cmd.Flags().StringVar(&req.CWD, "cwd", "", "`directory` whose scope to load, instead of --node/--tag")
	cmd.Flags().IntVar(&req.Limit, "limit", api.DefaultLoadLimit, "render at most `N` medallions")
	cmd.Flags().IntVar(&req.Budget, "budget", 1500, "token `budget` of the rendered text")
	cmd.MarkFlagDirname("cwd")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		switch {
		case req.CWD != "" && len(req.Nodes)+len(req.Tags) > 0:
			return usageErrorf("give either --cwd or --node/--tag, not both")
		case req.CWD == "" && len(req.Nodes)+len(req.Tags) == 0:
			return usageErrorf("load needs a scope: --node N, --tag T or --cwd DIR")
		case req.Limit < 1:
			return usageErrorf("--limit must be at least 1 (got %d)", req.Limit)
		case req.Budget < 1:
			return usageErrorf("--budget must be at least 1 token (got %d)", req.Budget)
		}
		req.Format = string(format)
		if cmd.Flags().Changed("format") {
			fmt.Fprintln(a.stderr, "medallionctl: --format is deprecated: use -o/--output instead")
		}
		if req.CWD != "" {
			// The daemon runs elsewhere: "." must mean this shell's directory.
			abs, err := filepath.Abs(req.CWD)
			if err != nil {
				return fmt.Errorf("resolve --cwd %s: %w", req.CWD, err)
			}
			req.CWD = abs
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return fmt.Errorf("--cwd %s: no such directory", abs)
			}
		}
		resp, err := a.client().Load(cmd.Context(), req)
		if err != nil {
			return err
		}
		if req.CWD != "" && len(resp.Medallions) == 0 {
			// Say which scope was looked up: a directory outside the
			// repository meant, or a scope_rule, shows here.
			fmt.Fprintf(a.stderr, "%s is in scope %s, which has no medallion yet\n", req.CWD, strings.Join(resp.Scope, ", "))
		}
		// Medallion text comes from agents' transcripts: a stray escape
		// sequence must not drive the terminal.
		text := sanitize(resp.Text, true)
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		_, err = fmt.Fprint(a.stdout, text)
		return err
	}
	return cmd
}

// loadFormat is the value of load's -o: the save file's formats.
type loadFormat string

func (f *loadFormat) String() string { return string(*f) }
func (f *loadFormat) Type() string   { return "format" }

// Set accepts the known formats only, so a typo fails before any request.
func (f *loadFormat) Set(s string) error {
	switch v := strings.ToLower(s); v {
	case "markdown", "json":
		*f = loadFormat(v)
		return nil
	}
	return fmt.Errorf("must be markdown or json, not %q", s)
}
