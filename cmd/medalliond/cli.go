package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/daemon"
	"github.com/medallionhq/medallion/internal/version"
)

// env abstracts the process environment so tests can run the CLI in-process.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// notify registers c for SIGINT and SIGTERM and returns the function
	// that unregisters it.
	notify func(c chan<- os.Signal) (stop func())
	// exit ends the process after a second signal.
	exit func(code int)
}

func osEnv(stdout, stderr io.Writer) *env {
	return &env{
		stdout: stdout,
		stderr: stderr,
		getenv: os.Getenv,
		notify: func(c chan<- os.Signal) func() {
			signal.Notify(c, os.Interrupt, syscall.SIGTERM)
			return func() { signal.Stop(c) }
		},
		exit: os.Exit,
	}
}

// run is main without the process: it returns the exit code, 0 on success,
// 1 on any error and 2 on a command line that cannot be run as written
// (as medallionctl).
func run(args []string, stdout, stderr io.Writer) int {
	return osEnv(stdout, stderr).run(args)
}

func (e *env) run(args []string) int {
	root := e.rootCommand()
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	var code exitStatus
	if errors.As(err, &code) {
		return int(code)
	}
	fmt.Fprintf(e.stderr, "medalliond: %s\n", errorText(err))
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return 2
	}
	return 1
}

// usageError marks a command line that cannot be run as written: an
// unknown command or flag, a missing or extra argument.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErrors makes every argument error of cmd and its subcommands a
// usageError; flag errors are made so by the root's flag error function.
func usageErrors(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		usageErrors(sub)
	}
}

// errorText formats err for the terminal: config diagnostics go one per
// line under a heading, as HCL formats them.
func errorText(err error) string {
	var de *config.DiagnosticsError
	if errors.As(err, &de) {
		return "invalid config:\n" + de.Error()
	}
	return err.Error()
}

func (e *env) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "medalliond",
		Short: "Medallion daemon: versioned save files for coding agents",
		Long: `medalliond keeps medallions — structured, versioned save files for coding
agents — in a local store and serves them to medallionctl over a Unix socket.

Three ways to run it:
  medalliond run                      in the foreground, logging to stderr
  medalliond start / stop / status    in the background, without a service
                                      manager (containers, WSL, remote shells)
  medalliond service install --user   as a systemd user unit / launchd agent`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// cobra applies its default distance only on its own error path.
		SuggestionsMinimumDistance: 2,
		// An unknown command is a usage error, not a help page.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return errors.New(msg)
		},
		// Without a subcommand there is nothing to do but explain.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetVersionTemplate("medalliond {{.Version}}\n")
	// --version has no -v: -v is --verbose, as in "medallionctl hook".
	root.Flags().Bool("version", false, "print the version")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(e.runCommand(), e.versionCommand(), e.configCommand(), e.serviceCommand(), e.repairCommand(), e.mcpCommand())
	root.AddCommand(e.backgroundCommands()...)
	usageErrors(root)
	return root
}

// configFlags are the flags that select and override the configuration,
// shared by run and config show.
type configFlags struct {
	file, dataDir, socket, logLevel string
	verbose                         bool
}

const precedenceHelp = `Configuration precedence, lowest to highest:
  1. built-in defaults (XDG paths: ~/.local/share/medallion,
     $XDG_RUNTIME_DIR/medallion/medallion.sock, log level info)
  2. the config file: --config FILE, else ~/.config/medallion/config.hcl
     ($XDG_CONFIG_HOME/medallion/config.hcl) when it exists
  3. environment: MEDALLION_DATA_DIR, MEDALLION_SOCKET, MEDALLION_LOG_LEVEL
  4. flags: --data-dir, --socket, --log-level (-v is --log-level debug;
     what you type wins)`

func (f *configFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "config", "c", "", "config file (default $XDG_CONFIG_HOME/medallion/config.hcl, if it exists)")
	fl.StringVar(&f.dataDir, "data-dir", "", "data directory (store and lock file)")
	fl.StringVar(&f.socket, "socket", "", "Unix socket path of the local API")
	fl.StringVar(&f.logLevel, "log-level", "", "log level: trace, debug, info, warn or error")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "debug logs: --log-level debug (unless --log-level is given)")
}

// load builds the effective config: defaults, file, environment, flags.
// Flags come last because they are the most specific intent: a
// MEDALLION_SOCKET exported for medallionctl must not silently override a
// --socket typed on this command line.
func (f *configFlags) load(cmd *cobra.Command, getenv func(string) string) (*config.Config, error) {
	cfg, err := config.Load(f.file)
	if err != nil {
		return nil, err
	}
	var flags []config.Override
	for _, o := range []struct{ flag, key, value string }{
		{"data-dir", "data_dir", f.dataDir},
		{"socket", "socket", f.socket},
		{"log-level", "log_level", f.logLevel},
	} {
		if cmd.Flags().Changed(o.flag) {
			flags = append(flags, config.Override{Key: o.key, Value: o.value, Origin: "--" + o.flag})
		}
	}
	if f.verbose && !cmd.Flags().Changed("log-level") {
		flags = append(flags, config.Override{Key: "log_level", Value: "debug", Origin: "--verbose"})
	}
	if err := cfg.Apply(config.EnvOverrides(getenv)...); err != nil {
		return nil, err
	}
	if err := cfg.Apply(flags...); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (e *env) runCommand() *cobra.Command {
	var cf configFlags
	var pidFile, cpuProfile, heapProfile, tracePath, logPath string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon in the foreground",
		Long: `Run the daemon in the foreground until SIGINT or SIGTERM. This is what the
systemd unit, the launchd job and "medalliond start" run. Logs go to stderr,
or with --log-file to a file, which the daemon moves to FILE.1 (replacing
the one before) each time it has written 10 MB to it: a daemon left running
keeps at most two files of about 10 MB.

A first signal shuts down cleanly (in-flight requests finish, the store is
closed, the socket removed); a second one exits at once with status 1.

` + precedenceHelp,
		Example: `  # Defaults, or ~/.config/medallion/config.hcl if it exists
  medalliond run

  # Another config file, with debug logs
  medalliond run --config ./medallion.hcl --log-level debug

  # A throwaway instance
  medalliond run --data-dir /tmp/med/data --socket /tmp/med/med.sock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load(cmd, e.getenv)
			if err != nil {
				return err
			}
			if cpuProfile != "" {
				stop, err := record("cpu profile", cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			if tracePath != "" {
				stop, err := record("execution trace", tracePath, trace.Start, trace.Stop)
				if err != nil {
					return err
				}
				defer stop()
			}
			if heapProfile != "" {
				stop, err := watchHeapProfile(heapProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			return e.runDaemon(cmd.Context(), cfg, pidFile, logPath)
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&logPath, "log-file", "", "append the log (and stdout, stderr) to `file`, moved to FILE.1 every 10 MB")
	// For profiling the daemon under a real workload (a backfill, say):
	// the whole run's CPU profile, written when it stops. Hidden: it is an
	// engineer's tool, not a setting.
	cmd.Flags().StringVar(&cpuProfile, "cpu-profile", "", "write the daemon's CPU profile to `file` when it stops")
	_ = cmd.Flags().MarkHidden("cpu-profile")
	// The heap's counterpart: what the Go heap holds at a moment of the
	// run, written at each SIGUSR1 (Unix).
	cmd.Flags().StringVar(&heapProfile, "heap-profile", "", "write the daemon's in-use heap profile to `file` at each SIGUSR1")
	_ = cmd.Flags().MarkHidden("heap-profile")
	// The whole run's execution trace (go tool trace): what a profile
	// cannot show, such as a stretch in which nothing runs because every
	// goroutine waits on one blocked in a system call.
	cmd.Flags().StringVar(&tracePath, "trace", "", "write the daemon's execution trace to `file` while it runs")
	_ = cmd.Flags().MarkHidden("trace")
	// For "medalliond start", which marks the daemons it starts.
	cmd.Flags().StringVar(&pidFile, "pid-file", "", "write the daemon's pid to `file` while it runs")
	_ = cmd.Flags().MarkHidden("pid-file")
	return cmd
}

// record starts a recording of the run (what: its name in errors) into
// the file at path and returns what ends it and closes the file.
func record(what, path string, start func(io.Writer) error, end func()) (stop func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return func() {
		end()
		_ = f.Close()
	}, nil
}

// newLogger is the one root logger; components get Named children.
func newLogger(cfg *config.Config, w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       "medalliond",
		Level:      hclog.LevelFromString(cfg.LogLevel),
		JSONFormat: cfg.LogFormat == "json",
		Output:     w,
	})
}

// maxLogBytes is the size past which a log file is moved to FILE.1 (one
// old log is kept): by start before it starts a daemon, by the daemon as
// it writes (run --log-file).
const maxLogBytes = 10 << 20

func (e *env) runDaemon(parent context.Context, cfg *config.Config, pidFile, logPath string) error {
	if parent == nil {
		parent = context.Background()
	}
	out := e.stderr
	if logPath != "" {
		lf, err := openLogFile(logPath, maxLogBytes)
		if err != nil {
			return err
		}
		out = lf
	}
	logger := newLogger(cfg, out)
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)

	sigs := make(chan os.Signal, 2)
	stop := e.notify(sigs)
	defer stop()
	done := make(chan struct{})
	defer close(done)
	go handleSignals(sigs, done, cancel, logger, e.exit)

	if err := makeDataDir(cfg.DataDir); err != nil {
		return err
	}
	var opts []daemon.Option
	if pidFile != "" {
		opts = append(opts, daemon.WithPIDFile(pidFile))
	}
	if err := daemon.Run(ctx, cfg, logger, opts...); err != nil {
		return err
	}
	return nil
}

// makeDataDir creates the data dir (the daemon would too), naming the
// settings that choose it when it cannot be created.
func makeDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir %s (set data_dir in the config or --data-dir): %w", dir, err)
	}
	return nil
}

// errSignal is the cause of a shutdown by signal.
var errSignal = errors.New("signal received")

// handleSignals cancels the daemon on the first signal and exits with
// status 1 on the second, for a shutdown that hangs. It returns when done
// is closed.
func handleSignals(sigs <-chan os.Signal, done <-chan struct{}, cancel context.CancelCauseFunc, logger hclog.Logger, exit func(int)) {
	select {
	case sig := <-sigs:
		logger.Info("shutting down; send the signal again to exit at once", "signal", sig.String())
		cancel(fmt.Errorf("%w: %s", errSignal, sig))
	case <-done:
		return
	}
	select {
	case sig := <-sigs:
		logger.Error("second signal: exiting without a clean shutdown", "signal", sig.String())
		exit(1)
	case <-done:
	}
}

func (e *env) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "medalliond %s (%s, %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}

func (e *env) configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect the configuration",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var cf configFlags
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration",
		Long: `Print the configuration "medalliond run" would use with the same flags and
environment, as a config file. Handy to check which file is read and what
a setting resolves to.

` + precedenceHelp,
		Example: `  medalliond config show
  medalliond config show --config ./medallion.hcl
  MEDALLION_LOG_LEVEL=debug medalliond config show`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load(cmd, e.getenv)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if cfg.File != "" {
				fmt.Fprintf(w, "# config file: %s\n", cfg.File)
			} else {
				fmt.Fprintln(w, "# config file: none (defaults)")
			}
			_, err = w.Write(cfg.HCL())
			return err
		},
	}
	cf.register(show)
	cmd.AddCommand(show)
	return cmd
}
