package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/paths"
	"github.com/medallionhq/medallion/internal/service"
)

func (e *env) serviceCommand() *cobra.Command {
	var user bool
	var configFile string
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Install and control medalliond as a systemd or launchd service",
		Long: `Install and control medalliond under the system's service manager: a systemd
unit on Linux, a launchd job on macOS. Without either (a container, WSL, a
remote shell), use "medalliond start" and "medalliond stop" instead. With --user it is a per-user service
(systemd user unit, launchd agent) that starts at login and runs as you;
without, a system service that starts at boot (needs root).

The service runs "medalliond run" from the absolute path of this binary,
restarts it 5 seconds after a failure, and keeps its stderr log
(journalctl [--user] -u medalliond; ~/Library/Logs/medalliond.log on macOS).`,
		Example: `  medalliond service install --user
  medalliond service start --user
  medalliond service status --user
  medalliond service install --user --config ~/medallion/config.hcl
  sudo medalliond service install`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().BoolVar(&user, "user", false, "a per-user service instead of a system one")
	cmd.PersistentFlags().StringVarP(&configFile, "config", "c", "", "config file the service runs with (install only; default: the default file, if it exists)")

	manager := func() (*service.Manager, error) {
		opts, err := serviceOptions(user, configFile)
		if err != nil {
			return nil, err
		}
		m, err := service.New(opts)
		return m, withoutManagerHint(err)
	}
	// action makes a subcommand that runs f and prints done.
	action := func(use, short, done string, f func(*service.Manager) error) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				m, err := manager()
				if err != nil {
					return err
				}
				if err := f(m); err != nil {
					return withoutManagerHint(withSudoHint(err, user))
				}
				fmt.Fprintln(cmd.OutOrStdout(), done)
				return nil
			},
		}
	}
	install := &cobra.Command{
		Use:   "install",
		Short: "Install the service and enable it at boot or login (does not start it)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A config that does not load would only make the service
			// crash-loop: refuse it now, with the diagnostics.
			if _, err := config.Load(configFile); err != nil {
				return err
			}
			m, err := manager()
			if err != nil {
				return err
			}
			if err := m.Install(); err != nil {
				return withoutManagerHint(withSudoHint(err, user))
			}
			hint := "medalliond service start"
			if user {
				hint += " --user"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed (%s); start it with: %s\n", m.Platform(), hint)
			return nil
		},
	}
	cmd.AddCommand(
		install,
		action("uninstall", "Disable and remove the service", "uninstalled", (*service.Manager).Uninstall),
		action("start", "Start the installed service", "started", (*service.Manager).Start),
		action("stop", "Stop the service", "stopped", (*service.Manager).Stop),
		&cobra.Command{
			Use:   "status",
			Short: "Print whether the service is running, stopped, failed or not installed",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				m, err := manager()
				if err != nil {
					return err
				}
				st, err := m.Status()
				if err != nil {
					return withoutManagerHint(err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), st)
				if st == service.Failed {
					fmt.Fprintln(cmd.OutOrStdout(), m.LogHint())
				}
				return nil
			},
		},
	)
	return cmd
}

// serviceOptions describes the service for this binary.
func serviceOptions(user bool, configFile string) (service.Options, error) {
	exe, err := os.Executable()
	if err != nil {
		return service.Options{}, fmt.Errorf("find medalliond's own path: %w", err)
	}
	opts := service.Options{User: user, Executable: exe}
	if configFile != "" {
		p, err := paths.ExpandHome(configFile)
		if err == nil {
			p, err = filepath.Abs(p)
		}
		if err != nil {
			return service.Options{}, fmt.Errorf("config file %s: %w", configFile, err)
		}
		opts.ConfigFile = p
	}
	if home, err := os.UserHomeDir(); err == nil {
		opts.Home = home
	}
	return opts, nil
}

// withoutManagerHint points at "medalliond start" when there is no service
// manager to use: none at all, or a systemd without a user manager for this
// login (systemctl --user cannot reach its bus, as over a plain ssh or su).
func withoutManagerHint(err error) error {
	if err == nil {
		return nil
	}
	const hint = "run medalliond without a service manager: \"medalliond start\" (and \"medalliond stop\"); medalliond start --help says more"
	if errors.Is(err, service.ErrNoServiceManager) {
		return fmt.Errorf("%w\n%s", err, hint)
	}
	if msg := err.Error(); strings.Contains(msg, "connect to bus") || strings.Contains(msg, "DBUS_SESSION_BUS_ADDRESS") {
		return fmt.Errorf("%w\nsystemd has no user manager for this login (no session bus: a container, su, or ssh without lingering; \"loginctl enable-linger\" may fix that)\nor %s", err, hint)
	}
	return err
}

// withSudoHint adds what to do when a system service needs root.
func withSudoHint(err error, user bool) error {
	if !user && errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w (a system service needs root: use sudo, or --user for a per-user service)", err)
	}
	return err
}
