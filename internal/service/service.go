// Package service installs and controls medalliond as a systemd unit
// (Linux) or a launchd job (macOS), through kardianos/service.
//
// The unit files are ours, rendered here and handed to kardianos as its
// SystemdScript / LaunchdConfig templates: its built-in systemd template
// says WantedBy=multi-user.target, which a user manager never reaches (the
// unit would not start at login), and RestartSec=120. The service manager
// runs `medalliond run`, which logs to stderr for journald or launchd to
// keep; kardianos's Run loop and syslog logger are not used.
package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	kservice "github.com/kardianos/service"
)

// Names of the service on each platform: the systemd unit is
// medalliond.service, the launchd job has a reverse-DNS label.
const (
	SystemdName = "medalliond"
	LaunchdName = "dev.medallion.medalliond"
)

// RestartSec is how long the service manager waits before restarting a
// daemon that failed: long enough not to spin on a persistent error (a bad
// config), short enough that agents barely notice a crash.
const RestartSec = 5

// ErrNoServiceManager is wrapped by New's error when this machine has no
// service manager medalliond can install itself under: no systemd running
// as PID 1 (most containers, WSL without systemd) and no launchd.
var ErrNoServiceManager = errors.New("no systemd or launchd to install medalliond under")

// Description is the service's one-line description.
const Description = "Medallion daemon: versioned save files for coding agents"

// Options describe the service to install or control.
type Options struct {
	// User selects a per-user service (systemd --user unit, launchd agent
	// in ~/Library/LaunchAgents) instead of a system one.
	User bool
	// Executable is the absolute path of the medalliond binary.
	Executable string
	// ConfigFile, when not empty, is passed as `run --config FILE`; it
	// must be absolute because the service manager's working directory
	// is not the user's.
	ConfigFile string
	// Home is the user's home directory, for the launchd agent's log file.
	Home string
}

// Arguments are the command line the service manager runs after the
// executable.
func (o Options) Arguments() []string {
	args := []string{"run"}
	if o.ConfigFile != "" {
		args = append(args, "--config", o.ConfigFile)
	}
	return args
}

func (o Options) check() error {
	if !filepath.IsAbs(o.Executable) {
		return fmt.Errorf("executable %q is not an absolute path", o.Executable)
	}
	if o.ConfigFile != "" && !filepath.IsAbs(o.ConfigFile) {
		return fmt.Errorf("config file %q is not an absolute path", o.ConfigFile)
	}
	// kardianos parses the rendered unit as a template: a literal "{{"
	// would be read as an action.
	for _, s := range []string{o.Executable, o.ConfigFile, o.Home} {
		if strings.Contains(s, "{{") {
			return fmt.Errorf("path %q contains \"{{\", which the service installer cannot write", s)
		}
	}
	return nil
}

// Manager installs and controls the service on this machine.
type Manager struct {
	opts Options
	svc  kservice.Service
}

// New returns a Manager for opts on the detected service manager. Only
// systemd and launchd are supported; elsewhere the error points to the
// unit files in packaging/.
func New(opts Options) (*Manager, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	sys := kservice.ChosenSystem()
	if sys == nil {
		return nil, noManager("")
	}
	platform := sys.String()
	cfg := &kservice.Config{
		Description: Description,
		Executable:  opts.Executable,
		Arguments:   opts.Arguments(),
		Option:      kservice.KeyValue{"UserService": opts.User},
	}
	switch platform {
	case "linux-systemd":
		cfg.Name = SystemdName
		cfg.Option["SystemdScript"] = SystemdUnit(opts)
	case "darwin-launchd":
		cfg.Name = LaunchdName
		cfg.Option["LaunchdConfig"] = LaunchdPlist(opts)
	default:
		return nil, noManager(platform)
	}
	svc, err := kservice.New(program{}, cfg)
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", cfg.Name, err)
	}
	return &Manager{opts: opts, svc: svc}, nil
}

// noManager explains, in words a user knows, that the detected platform is
// not one medalliond installs itself under.
func noManager(platform string) error {
	found := "found none"
	switch platform {
	case "", "unix-systemv":
		// kardianos falls back to System V init when it detects nothing
		// else: that means no systemd running, not that SysV init is.
		found = "systemd is not running here (it is not PID 1, as in most containers and WSL)"
	case "linux-upstart":
		found = "this system runs Upstart"
	case "linux-openrc":
		found = "this system runs OpenRC"
	case "linux-rcs", "freebsd", "openbsd", "netbsd", "dragonfly":
		found = "this system uses rc scripts (" + platform + ")"
	case "linux-procd":
		found = "this system runs procd (OpenWrt)"
	case "windows-service":
		found = "this is Windows"
	default:
		found = "this system's service manager is " + platform
	}
	return fmt.Errorf("%w: %s", ErrNoServiceManager, found)
}

// program satisfies kservice.Interface, which New requires. Its methods are
// never called: kardianos's Run loop is not used, the unit runs
// `medalliond run` directly.
type program struct{}

func (program) Start(kservice.Service) error { return nil }
func (program) Stop(kservice.Service) error  { return nil }

// Platform names the service manager, e.g. "linux-systemd".
func (m *Manager) Platform() string { return m.svc.Platform() }

// Install writes the unit (or plist) and enables it to start at boot or
// login; it does not start it.
func (m *Manager) Install() error {
	if err := m.svc.Install(); err != nil {
		return fmt.Errorf("install %s: %w", m.svc, err)
	}
	return nil
}

// Uninstall disables and removes the unit (or plist).
func (m *Manager) Uninstall() error {
	if err := m.svc.Uninstall(); err != nil {
		return fmt.Errorf("uninstall %s: %w", m.svc, notInstalled(err))
	}
	return nil
}

// Start starts the installed service.
func (m *Manager) Start() error {
	if err := m.svc.Start(); err != nil {
		return fmt.Errorf("start %s: %w", m.svc, err)
	}
	return nil
}

// Stop stops the running service.
func (m *Manager) Stop() error {
	if err := m.svc.Stop(); err != nil {
		return fmt.Errorf("stop %s: %w", m.svc, err)
	}
	return nil
}

// State is what Status reports.
type State string

// States reported by Status.
const (
	Running      State = "running"
	Stopped      State = "stopped"
	Failed       State = "failed"
	NotInstalled State = "not installed"
)

// Status reports whether the service is installed and running.
func (m *Manager) Status() (State, error) {
	st, err := m.svc.Status()
	switch {
	case errors.Is(err, kservice.ErrNotInstalled):
		return NotInstalled, nil
	case err != nil && strings.Contains(err.Error(), "failed state"):
		// kardianos reports systemd's "failed" only as error text.
		return Failed, nil
	case err != nil:
		return "", fmt.Errorf("status of %s: %w", m.svc, err)
	case st == kservice.StatusRunning:
		return Running, nil
	case st == kservice.StatusStopped:
		return Stopped, nil
	}
	return NotInstalled, nil
}

// LogHint tells the user where the service's logs are.
func (m *Manager) LogHint() string {
	return LogHint(m.opts, runtime.GOOS)
}

// LogHint tells where the logs of the service described by o go on goos.
func LogHint(o Options, goos string) string {
	if goos == "darwin" {
		return "logs: " + launchdLogPath(o)
	}
	if o.User {
		return "logs: journalctl --user -u " + SystemdName
	}
	return "logs: journalctl -u " + SystemdName
}

// notInstalled turns the OS error of removing a unit that is not there
// into kardianos's ErrNotInstalled, which reads better.
func notInstalled(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return kservice.ErrNotInstalled
	}
	return err
}
