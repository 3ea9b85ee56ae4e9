// Command medallionctl asks a running medalliond, over its Unix socket, about
// its status, the agent sessions it has ingested and the medallions it
// stores; it stores medallions and asks for checkpoints.
//
// It imports only the client, the API types and the medallion schema, never
// the store, watcher or LLM code (deps_test.go guards that), so it stays a
// small, fast binary that cannot open the daemon's database by mistake.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/paths"
)

// socketEnv names the environment variable that overrides the default
// socket path, for scripts and for running several daemons side by side.
const socketEnv = "MEDALLION_SOCKET"

func main() {
	args := os.Args[1:]
	ctx, stop := context.Background(), func() {}
	// Ctrl-C or SIGTERM cancel the command's context, so that it stops
	// cleanly. Not in the SessionStart hook: os/signal keeps a thread
	// waiting for signals (a tenth of the hook's process besides the Go
	// runtime), and the hook is bounded by its own 700 ms timeout; an agent
	// that signals it gets what it asked for, a hook that printed nothing.
	if commandName(args) != "hook" {
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	}
	code := run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one medallionctl command line and returns the process exit
// code: 0 on success, 1 when the command failed, 2 on a usage error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	if commandName(args) == "hook" && a.fastHook(ctx, args) {
		return 0
	}
	return a.runCobra(ctx, args)
}

// runCobra is run through the cobra command tree.
func (a *app) runCobra(ctx context.Context, args []string) int {
	stderr := a.stderr
	root := a.rootCommand(commandName(args))
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	var code exitCode
	if errors.As(err, &code) {
		return int(code)
	}
	fmt.Fprintf(stderr, "medallionctl: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return 2
	}
	return 1
}

// app holds what every command shares: the standard streams and the global
// flags.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	socket         string
	// customSettings: integrate was given --settings, so its hints repeat it.
	customSettings bool
}

// usageError marks a command line that cannot be run as written, so run
// exits 2 and points at --help.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exactArgs is cobra.ExactArgs with a usage error that names the missing
// argument.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return usageErrorf("%s needs %s", cmd.Name(), strings.Join(names[len(args):], " "))
		case len(args) > len(names):
			return usageErrorf("%s takes %d argument(s), got %d: %q", cmd.Name(), len(names), len(args), args)
		}
		return nil
	}
}

// rootCommand builds the command tree. When name is one of the commands,
// only that one is built: a process runs one command, and building the
// other fifteen (flags, help texts) was 7 % of the SessionStart hook's CPU
// samples, more than its request to the daemon. Any other name (empty, "help", a typo to
// suggest a correction for, cobra's completion commands) gets the whole tree.
func (a *app) rootCommand(name string) *cobra.Command {
	root := &cobra.Command{
		Use:   "medallionctl",
		Short: "Ask medalliond about the medallions it keeps",
		Long: `medallionctl talks to medalliond, the background service that keeps
medallions: structured, versioned save files that let a coding agent continue
where the last session stopped (what is understood, decided and left open for
one scope, such as a repo or a module).

The daemon reads the transcripts coding agents write (Claude Code, Codex
CLI) and buffers each session's events until a checkpoint hands them to the
curator of the session's scope: "sessions" and "session show" show what it
has read, "checkpoint" checkpoints now.

Every command except "schema" needs a running daemon. medallionctl reaches it
over a Unix socket: --socket, else $` + socketEnv + `, else the default path
under $XDG_RUNTIME_DIR (or the temp dir).

Read commands print a table by default; -o json prints the API response.
Errors go to stderr; the exit code is 0 on success, 1 on failure and 2 for a
command line that cannot be run as written.`,
		Example: `  medallionctl status --wait 10s
  medallionctl sessions
  medallionctl list --node repo:muse
  medallionctl show muse-project-state
  medallionctl put -f medallion.json
  medallionctl review`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// cobra applies its default distance only on its own error path.
		SuggestionsMinimumDistance: 2,
		// Runnable so that an unknown command is a usage error rather than
		// a help page with exit code 0.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return usageError{errors.New(msg)}
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringVar(&a.socket, "socket", defaultSocket(),
		"`path` of medalliond's Unix socket ($"+socketEnv+" overrides the default)")
	root.MarkPersistentFlagFilename("socket", "sock")

	cmds := a.commands()
	for _, c := range cmds {
		if c.name == name {
			cmds = []namedCommand{c}
			// Nor cobra's completion command (1.3 % of the hook's CPU
			// samples): a completion request names it, and gets the whole tree.
			root.CompletionOptions.DisableDefaultCmd = true
			break
		}
	}
	for _, c := range cmds {
		root.AddCommand(c.build())
	}
	return root
}

// defaultSocket is the socket when --socket is not given.
func defaultSocket() string {
	if s := os.Getenv(socketEnv); s != "" {
		return s
	}
	return paths.Socket()
}

// namedCommand is a subcommand's name and its constructor.
type namedCommand struct {
	name  string
	build func() *cobra.Command
}

// commands lists the subcommands in the order help shows them; each name
// is the first word of its command's Use (TestCommandNames checks).
func (a *app) commands() []namedCommand {
	return []namedCommand{
		{"status", a.statusCommand},
		{"list", a.listCommand},
		{"show", a.showCommand},
		{"history", a.historyCommand},
		{"diff", a.diffCommand},
		{"put", a.putCommand},
		{"export", a.exportCommand},
		{"import", a.importCommand},
		{"sessions", a.sessionsCommand},
		{"session", a.sessionCommand},
		{"checkpoint", a.checkpointCommand},
		{"load", a.loadCommand},
		{"search", a.searchCommand},
		{"mcp", a.mcpCommand},
		{"review", a.reviewCommand},
		{"forget", func() *cobra.Command { return a.itemCommand(api.ItemForget) }},
		{"edit", func() *cobra.Command { return a.itemCommand(api.ItemEdit) }},
		{"pin", func() *cobra.Command { return a.itemCommand(api.ItemPin) }},
		{"unpin", func() *cobra.Command { return a.itemCommand(api.ItemUnpin) }},
		{"llm", a.llmCommand},
		{"doctor", a.doctorCommand},
		{"hook", a.hookCommand},
		{"integrate", a.integrateCommand},
		{"schema", a.schemaCommand},
		{"version", a.versionCommand},
	}
}

// commandName is the subcommand args name: the first word that is neither
// a flag nor the value of --socket, the root's only flag with a value.
func commandName(args []string) string {
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case arg == "--socket":
			i++
		case strings.HasPrefix(arg, "-"):
		default:
			return arg
		}
	}
	return ""
}

// client returns a client for the selected socket that warns once on stderr
// when the daemon is a different build, which usually means it was not
// restarted after an upgrade.
func (a *app) client() *client.Client {
	c := client.New(a.socket)
	c.OnVersionMismatch = func(server, mine string) {
		fmt.Fprintf(a.stderr, "medallionctl: warning: medalliond is version %s but medallionctl is %s; restart medalliond after upgrading\n", server, mine)
	}
	return c
}

// addOutputFlag registers -o/--output on cmd and returns where its value lands.
func addOutputFlag(cmd *cobra.Command) *outputFormat {
	o := outputTable
	cmd.Flags().VarP(&o, "output", "o", "output `format`: table or json (the API response, indented)")
	cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{string(outputTable), string(outputJSON)}, cobra.ShellCompDirectiveNoFileComp
	})
	return &o
}

// outputFormat is the value of -o/--output.
type outputFormat string

const (
	outputTable outputFormat = "table"
	outputJSON  outputFormat = "json"
)

var _ pflag.Value = (*outputFormat)(nil)

func (o *outputFormat) String() string { return string(*o) }
func (o *outputFormat) Type() string   { return "format" }

// Set accepts the known formats only, so a typo fails before any request.
func (o *outputFormat) Set(s string) error {
	switch f := outputFormat(strings.ToLower(s)); f {
	case outputTable, outputJSON:
		*o = f
		return nil
	}
	return fmt.Errorf("must be table or json, not %q", s)
}
