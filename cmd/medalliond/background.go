//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/daemon"
)

// Files `medalliond start` keeps in the data dir.
const (
	// PIDFileName holds the pid of the daemon `start` started, written by
	// that daemon once it holds the data dir's lock and removed when it
	// exits. The lock file (daemon.LockFileName) is what tells whether a
	// daemon runs; the pid file only says that `start` started it.
	PIDFileName = "medalliond.pid"
	// LogFileName receives the background daemon's stderr and stdout.
	LogFileName = "medalliond.log"
)

// logTailLines is how much of the log start prints when the daemon fails.
const logTailLines = 15

// exitStatus is an error that only sets the exit code: the command has
// already said what it had to say.
type exitStatus int

func (e exitStatus) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// notRunningExit is the exit code of `status` when no daemon runs, as the
// LSB asks of init scripts (and `systemctl status` does).
const notRunningExit = 3

const backgroundHelp = `"medalliond start" and "medalliond stop" need no service manager: they work in
containers, WSL, remote shells and anywhere systemd or launchd is missing.
The daemon started this way runs until "medalliond stop" or a reboot; start
it again at login from your shell profile if you want it always there:

  medalliond status >/dev/null || medalliond start

The Claude Code hook ("medallionctl integrate claude-code") also runs
"medalliond start" in the background when it finds the daemon down.

Files, all in the data dir:
  medalliond.log   the daemon's log (moved to medalliond.log.1 past 10 MB,
                   as it starts and as it runs)
  medalliond.pid   the pid of the daemon "start" started
  medalliond.lock  held by whichever daemon runs (start, run or a service)`

func (e *env) backgroundCommands() []*cobra.Command {
	return []*cobra.Command{e.startCommand(), e.stopCommand(), e.statusCommand()}
}

func (e *env) startCommand() *cobra.Command {
	var cf configFlags
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start the daemon in the background (no systemd or launchd needed)",
		Long: `Start runs "medalliond run" detached from the terminal (a new session, its
output appended to medalliond.log in the data dir) and returns once the
daemon answers on its socket. If the daemon exits instead, start prints the
end of its log and fails. A daemon already running on the data dir or the
socket is left alone: start says so and fails.

` + backgroundHelp + `

` + precedenceHelp,
		Example: `  medalliond start
  medalliond start --config ~/medallion/config.hcl --log-level debug
  medalliond status
  medalliond stop`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load(cmd, e.getenv)
			if err != nil {
				return err
			}
			return e.start(cmd.Context(), cfg, wait)
		},
	}
	cf.register(cmd)
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the daemon to answer")
	return cmd
}

func (e *env) start(ctx context.Context, cfg *config.Config, wait time.Duration) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := makeDataDir(cfg.DataDir); err != nil {
		return err
	}
	if pid, err := daemon.LockHolder(cfg.DataDir); err != nil {
		return err
	} else if pid > 0 {
		return fmt.Errorf("%w with data dir %s (pid %d); \"medalliond status\" tells more, \"medalliond stop\" stops it", daemon.ErrAlreadyRunning, cfg.DataDir, pid)
	}
	if st, err := statusOf(ctx, cfg.Socket); err == nil {
		return fmt.Errorf("%w on socket %s (pid %d, data dir %s)", daemon.ErrAlreadyRunning, cfg.Socket, st.PID, st.DataDir)
	}

	logPath := filepath.Join(cfg.DataDir, LogFileName)
	logFile, offset, err := openLog(logPath)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		logFile.Close()
		return fmt.Errorf("find medalliond's own path: %w", err)
	}
	// The child gets the resolved settings, so it runs with what this
	// command loaded whatever its working directory ("/", so that it keeps
	// no directory busy) and environment.
	pidPath := filepath.Join(cfg.DataDir, PIDFileName)
	args := []string{"run", "--data-dir", cfg.DataDir, "--socket", cfg.Socket, "--log-level", cfg.LogLevel, "--pid-file", pidPath, "--log-file", logPath}
	if cfg.File != "" {
		args = append(args, "--config", cfg.File)
	}
	child := exec.Command(self, args...)
	child.Dir = "/"
	// The child reopens the log itself (--log-file), to move it aside as
	// it runs; until then, and if it cannot, it writes here.
	child.Stdout, child.Stderr = logFile, logFile // Stdin nil: /dev/null
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = child.Start()
	logFile.Close()
	if err != nil {
		return fmt.Errorf("start %s: %w", self, err)
	}
	pid := child.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()

	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(wait)
	for {
		select {
		case err := <-exited:
			if holder, _ := daemon.LockHolder(cfg.DataDir); holder > 0 {
				// Another start won the race (hooks of sessions that
				// start together): one daemon runs, as it should.
				return fmt.Errorf("%w with data dir %s (pid %d), started at the same moment", daemon.ErrAlreadyRunning, cfg.DataDir, holder)
			}
			return fmt.Errorf("medalliond exited as it started (%v); the end of its log %s:\n%s", err, logPath, logTail(logPath, offset))
		case <-deadline:
			// Still running but silent: leave it, stop can end it.
			return fmt.Errorf("medalliond (pid %d) has not answered on %s after %s; it is still starting or stuck: read %s, or stop it with \"medalliond stop\"", pid, cfg.Socket, wait, logPath)
		case <-ctx.Done():
			return fmt.Errorf("gave up waiting for medalliond (pid %d), which keeps running: %w", pid, ctx.Err())
		case <-tick.C:
		}
		st, err := statusOf(ctx, cfg.Socket)
		if err != nil || st.PID != pid {
			// Not answering yet, or another daemon's answer on this
			// socket: ours will exit, the next round reports it.
			continue
		}
		fmt.Fprintf(e.stdout, "started medalliond in the background (pid %d)\n  socket   %s\n  data dir %s\n  log      %s\nstop it with: medalliond stop\n", pid, cfg.Socket, cfg.DataDir, logPath)
		return nil
	}
}

// statusOf asks the daemon on socket for its status, briefly.
func statusOf(ctx context.Context, socket string) (*apiStatus, error) {
	c := client.New(socket)
	c.Timeout = time.Second
	st, err := c.Status(ctx)
	if err != nil {
		return nil, err
	}
	return &apiStatus{PID: st.PID, DataDir: st.DataDir, Version: st.Version, StartedAt: st.StartedAt}, nil
}

// apiStatus is the part of the daemon's status these commands show.
type apiStatus struct {
	PID                         int
	DataDir, Version, StartedAt string
}

// openLog opens the log for appending, moving a log past maxLogBytes aside
// first, and returns where this run's lines start.
func openLog(path string) (*os.File, int64, error) {
	if st, err := os.Stat(path); err == nil && st.Size() > maxLogBytes {
		if err := moveAside(path); err != nil {
			return nil, 0, fmt.Errorf("rotate log: %w", err)
		}
	}
	return appendLog(path)
}

// logTail returns the last lines of the log written from offset on,
// indented.
func logTail(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<20))
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "  (empty)"
	}
	return "  " + strings.Join(lines, "\n  ")
}

// readPIDFile returns the pid in the pid file, 0 when there is none.
func readPIDFile(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

func (e *env) stopCommand() *cobra.Command {
	var cf configFlags
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon that runs on this data dir",
		Long: `Stop sends SIGTERM to the daemon that holds the data dir's lock, waits for it
to shut down cleanly (it finishes what it is storing and removes its socket)
and removes the pid file. It stops the daemon however it was started, and
says so when "medalliond start" did not start it; a daemon under systemd or
launchd is better stopped with "medalliond service stop". With no daemon
running there is nothing to do, and stop says so and succeeds.

` + backgroundHelp,
		Example: `  medalliond stop
  medalliond stop --data-dir /tmp/med/data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load(cmd, e.getenv)
			if err != nil {
				return err
			}
			return e.stop(cfg, wait)
		},
	}
	cf.register(cmd)
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the daemon to exit")
	return cmd
}

func (e *env) stop(cfg *config.Config, wait time.Duration) error {
	pidPath := filepath.Join(cfg.DataDir, PIDFileName)
	started := readPIDFile(pidPath)
	pid, err := daemon.LockHolder(cfg.DataDir)
	if err != nil {
		return err
	}
	if pid == 0 {
		if started != 0 {
			if err := os.Remove(pidPath); err != nil {
				return fmt.Errorf("remove stale pid file: %w", err)
			}
			fmt.Fprintf(e.stdout, "medalliond is not running (data dir %s); removed the stale pid file %s\n", cfg.DataDir, pidPath)
			return nil
		}
		fmt.Fprintf(e.stdout, "medalliond is not running (data dir %s); nothing to stop\n", cfg.DataDir)
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("stop medalliond (pid %d): %w (it runs as another user: a system service? sudo medalliond service stop)", pid, err)
		}
		return fmt.Errorf("stop medalliond (pid %d): %w", pid, err)
	}
	deadline := time.Now().Add(wait)
	for {
		holder, err := daemon.LockHolder(cfg.DataDir)
		if err != nil {
			return err
		}
		if holder != pid {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("medalliond (pid %d) has not stopped %s after SIGTERM: read %s; \"kill -9 %d\" forces it (the store recovers at the next start)", pid, wait, filepath.Join(cfg.DataDir, LogFileName), pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The daemon removes its pid file as it exits; one that did not get
	// there leaves it behind.
	if err := os.Remove(pidPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("medalliond (pid %d) stopped, but its pid file: %w", pid, err)
	}
	if started == pid {
		fmt.Fprintf(e.stdout, "stopped medalliond (pid %d, data dir %s)\n", pid, cfg.DataDir)
	} else {
		fmt.Fprintf(e.stdout, "stopped medalliond (pid %d, data dir %s), which \"medalliond start\" had not started (a terminal or a service manager had); start it again the same way\n", pid, cfg.DataDir)
	}
	return nil
}

func (e *env) statusCommand() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether a daemon runs on this data dir, and how to reach it",
		Long: `Status says whether a medalliond runs on the data dir (started by "medalliond
start", "medalliond run" or a service manager), its pid, whether it answers
on the socket, and where its log is. It exits 0 when a daemon runs and 3
when none does, so scripts can test it:

  medalliond status >/dev/null || medalliond start

"medallionctl status" asks the daemon itself for the details of its work.`,
		Example: `  medalliond status
  medalliond status --data-dir /tmp/med/data --socket /tmp/med/med.sock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load(cmd, e.getenv)
			if err != nil {
				return err
			}
			return e.status(cmd.Context(), cfg)
		},
	}
	cf.register(cmd)
	return cmd
}

func (e *env) status(ctx context.Context, cfg *config.Config) error {
	if ctx == nil {
		ctx = context.Background()
	}
	pid, err := daemon.LockHolder(cfg.DataDir)
	if err != nil {
		return err
	}
	w := e.stdout
	if pid == 0 {
		fmt.Fprintf(w, "medalliond is not running (data dir %s)\nstart it with: medalliond start   (or \"medalliond service start --user\" where it is installed as a service)\n", cfg.DataDir)
		return exitStatus(notRunningExit)
	}
	how := "started another way than \"medalliond start\" (medalliond run, or a service manager)"
	logLine := ""
	if readPIDFile(filepath.Join(cfg.DataDir, PIDFileName)) == pid {
		how = "started by \"medalliond start\"; stop it with: medalliond stop"
		logLine = fmt.Sprintf("  log      %s\n", filepath.Join(cfg.DataDir, LogFileName))
	}
	fmt.Fprintf(w, "medalliond is running (pid %d), %s\n", pid, how)
	st, err := statusOf(ctx, cfg.Socket)
	switch {
	case err != nil:
		fmt.Fprintf(w, "  socket   %s: not answering (still starting, or stuck: see its log)\n", cfg.Socket)
	case st.PID != pid:
		fmt.Fprintf(w, "  socket   %s: answered by another medalliond (pid %d, data dir %s)\n", cfg.Socket, st.PID, st.DataDir)
	default:
		fmt.Fprintf(w, "  socket   %s: answering (version %s, since %s)\n", cfg.Socket, st.Version, st.StartedAt)
	}
	fmt.Fprintf(w, "  data dir %s\n%s", cfg.DataDir, logLine)
	return nil
}
