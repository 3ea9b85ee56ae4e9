// Package daemon runs medalliond: it takes the data dir's lock, opens the
// store, starts ingestion (the watcher of the transcript folders, the ingest
// pipeline and the checkpoint manager), serves the local API on the Unix
// socket until its context ends, and then shuts everything down in reverse
// order: watcher, pipeline (which finishes the batch it is storing),
// checkpoint manager (which finishes a running checkpoint), server, store.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/hookcache"
	"github.com/medallionhq/medallion/internal/resident"
	"github.com/medallionhq/medallion/internal/search"
	"github.com/medallionhq/medallion/internal/server"
	"github.com/medallionhq/medallion/internal/socket"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/version"
)

// ErrAlreadyRunning is wrapped by Run's error when another medalliond holds
// the data dir or the socket.
var ErrAlreadyRunning = errors.New("medalliond is already running")

// LockFileName is the file in the data dir that the running daemon flocks
// and writes its pid into.
const LockFileName = "medalliond.lock"

// ShutdownTimeout bounds how long Run waits for in-flight requests once its
// context ends; local API calls are short, so anything longer is stuck.
const ShutdownTimeout = 10 * time.Second

// Option changes how Run runs.
type Option func(*options)

type options struct{ pidFile string }

// WithPIDFile makes Run write its pid to path once it holds the data dir's
// lock, before it listens, and remove the file when it returns: a client
// that gets an answer on the socket finds the file in place. "medalliond
// start" marks the daemons it started this way.
func WithPIDFile(path string) Option { return func(o *options) { o.pidFile = path } }

// Run runs the daemon with cfg until ctx ends or the server fails. A
// shutdown because ctx ended is clean and returns nil.
func Run(ctx context.Context, cfg *config.Config, logger hclog.Logger, opts ...Option) (err error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if cfg.MemoryLimit > 0 {
		// Restore the previous limit on return so Run leaves the process as
		// it found it (it matters to tests that run several daemons).
		prev := debug.SetMemoryLimit(cfg.MemoryLimit)
		defer debug.SetMemoryLimit(prev)
	}

	// Restored on return, like the memory limit, for tests that run
	// several daemons in one process.
	defer privateFiles()()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := lock.release(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if o.pidFile != "" {
		if err := writePIDFile(o.pidFile); err != nil {
			return err
		}
		// Removed before the lock is released: whoever sees the lock free
		// also sees the file gone.
		defer removePIDFile(o.pidFile)
	}

	ln, err := socket.Listen(cfg.Socket, socket.WithLogger(logger.Named("socket")))
	if err != nil {
		if errors.Is(err, socket.ErrAlreadyRunning) {
			return &runningError{
				msg:   fmt.Sprintf("%s on socket %s (with another data dir than %s)", ErrAlreadyRunning, cfg.Socket, cfg.DataDir),
				cause: err,
			}
		}
		return fmt.Errorf("listen: %w", err)
	}
	// Close removes the socket file; the server's Shutdown has normally
	// closed the listener already, which makes this a no-op.
	defer func() {
		if cerr := ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) && err == nil {
			err = fmt.Errorf("close socket: %w", cerr)
		}
	}()

	dk := newDisk(cfg.DataDir, logger.Named("disk"))
	st, err := store.Open(filepath.Join(cfg.DataDir, "store"), store.Options{
		Logger:         logger.Named("store"),
		OnSpace:        dk.onSpace,
		FreeSpace:      freeSpace,
		SpaceInterval:  spaceInterval,
		VerifyInterval: verifyInterval,
		// Once writing stops, what a backfill or a burst of checkpoints
		// allocated goes back to the OS at once instead of over minutes
		// of background scavenging: an idle daemon's resident memory is
		// what it holds, not what it once needed (issue 12).
		OnQuiet: debug.FreeOSMemory,
		// Once nothing has called the store for half a minute or more, the
		// same, and the pages of the daemon's own code go too (about 18 MB
		// of an idle daemon's 40; they stay in the page cache, so the next
		// request faults them back without reading the disk). Work that
		// only reads (an export, a burst of loads, a restart's catching
		// up) ends in no quiet and was otherwise never handed back.
		OnIdle: releaseMemory,
	})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	dk.attach(st)
	if cfg.Export.Every > 0 {
		exp := newExporter(st, cfg.DataDir, logger.Named("export"))
		if cfg.Export.Every != config.DefaultExport.Every {
			exp.interval = cfg.Export.Every
		}
		if cfg.Export.Keep > 0 {
			exp.keep = cfg.Export.Keep
		}
		exp.start()
		// Stopped before the store closes (deferred calls run last first).
		defer exp.close()
	} else {
		logger.Info("automatic export off (export { every = \"off\" })")
	}

	// The search index joins every version write from here on; a store
	// written before it existed is indexed now, once.
	ix, err := search.Open(ctx, st, logger.Named("search"))
	if err != nil {
		logger.Error("search is off until the next start", "error", err)
	} else {
		defer ix.Close() // before the store closes
	}

	// Every medallion write (API, curation, import) is redacted first.
	rs := newRedactingStore(st, logger.Named("redact"))
	ing, err := startIngestion(ctx, cfg, st, rs, logger)
	if err != nil {
		return err
	}
	// On every return from here: stop ingestion before the server and the
	// store (deferred calls run last first).
	defer ing.stop(ctx)

	// The hook's answers beside the socket (internal/hookcache), opened
	// now that this daemon holds the socket: no other daemon uses them.
	// Without scope rules every folder resolves to the nodes the file
	// system gives it, so one file serves a whole repository.
	answers, err := hookcache.Open(hookcache.Dir(cfg.Socket), len(cfg.ScopeRules) == 0)
	if err != nil {
		logger.Warn("hook answers are not kept as files; every hook asks the daemon", "error", err)
	} else {
		defer func() {
			if err := answers.Close(); err != nil {
				logger.Warn("hook answers left behind (the next daemon clears them)", "error", err)
			}
		}()
	}

	srv := server.New(server.Config{
		Store:      rs,
		Logger:     logger.Named("server"),
		DataDir:    cfg.DataDir,
		Socket:     cfg.Socket,
		StartedAt:  time.Now(),
		DiskUsage:  st.DiskUsage,
		Episodes:   st,
		Checkpoint: ing.manager.Checkpoint,
		Ingest:     ing.status,
		Disk:       dk.status,
		Damage:     st.Damage,
		Export: func(ctx context.Context, fn func([]byte) error) error {
			_, err := st.ExportJSON(ctx, fn)
			return err
		},
		Import: rs.Import,
		// The ingester's resolver: a load for a folder finds the medallion
		// its sessions were checkpointed into.
		ScopeForCWD: func(cwd string) []string { return slices.Clone(ing.scope.Resolve(cwd)) },
		ReviewMode:  reviewMode(cfg.LLM),
		LLM:         ing.llmStatus(),
		LLMCheck:    ing.llmCheck(),
		Search:      ix,
		WatchWrites: st.WatchWrites,
		HookAnswers: answers,
	})
	// Logged before serving so that anyone who got an answer from the
	// socket can find this line in the log.
	configFile := cfg.File
	if configFile == "" {
		configFile = "none (defaults)"
	}
	logger.Info("medalliond started", "version", version.String(), "pid", os.Getpid(),
		"socket", cfg.Socket, "data_dir", cfg.DataDir, "config", configFile)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if answers != nil {
		// The hook's own socket, in the answers' folder: a hook that
		// finds no answer file asks there (server.ServeHook).
		if err := srv.ServeHook(hookcache.Socket(cfg.Socket)); errors.Is(err, errors.ErrUnsupported) {
			logger.Debug("the hook asks on the API's socket on this OS")
		} else if err != nil {
			logger.Warn("the hook's socket is not served; hooks ask on the API's socket", "error", err)
		}
		go keepRecentHookAnswers(ctx, st, srv, logger.Named("server"))
	}

	select {
	case <-ctx.Done():
		logger.Info("medalliond stopping", "reason", context.Cause(ctx))
	case err := <-serveErr:
		// Serve returns only after Shutdown unless it failed.
		if err == nil {
			err = errors.New("server stopped unexpectedly")
		}
		logger.Error("server failed", "error", err)
		// What the server still runs (answer files being written, the
		// rewarmer) ends before the deferred closes of the answers
		// folder and the store.
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		return fmt.Errorf("serve: %w", err)
	}

	ing.stop(ctx)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("server shutdown incomplete", "error", err)
	}
	if err := <-serveErr; err != nil {
		logger.Warn("server stopped with an error", "error", err)
	}
	logger.Info("medalliond stopped")
	return nil
}

func writePIDFile(path string) error {
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	return nil
}

// removePIDFile removes the pid file if it still holds our pid.
func removePIDFile(path string) {
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(os.Getpid()) {
		_ = os.Remove(path)
	}
}

// runningError reports the other daemon in one sentence of ours while still
// matching both ErrAlreadyRunning and the cause's sentinel.
type runningError struct {
	msg   string
	cause error
}

func (e *runningError) Error() string   { return e.msg }
func (e *runningError) Unwrap() []error { return []error{ErrAlreadyRunning, e.cause} }

// releaseMemory hands freed heap back to the OS and drops the resident
// pages of the daemon's own code: what an idle daemon need not hold.
func releaseMemory() {
	debug.FreeOSMemory()
	resident.DropExecutable()
}
