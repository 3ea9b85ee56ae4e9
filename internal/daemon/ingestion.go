package daemon

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/curate"
	"github.com/medallionhq/medallion/internal/ingest"
	"github.com/medallionhq/medallion/internal/llm"
	"github.com/medallionhq/medallion/internal/scope"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/watch"
)

// maxStatusErrors bounds IngestStatus.Errors.
const maxStatusErrors = 10

// ingestion is the running watcher → pipeline → checkpoint chain.
type ingestion struct {
	log      hclog.Logger
	root     hclog.Logger
	roots    []watch.Root
	watcher  atomic.Pointer[watch.Watcher]
	pipeline *ingest.Pipeline
	manager  *checkpoint.Manager
	formats  map[string]string // watch name → format, for status
	// scope is the resolver the pipeline gives sessions their scope with.
	scope *scope.Resolver
	// tier1 and llm are the model curator and its client; nil without an
	// llm block.
	tier1 *curate.Tier1
	llm   *llm.Client

	stopWatch, stopIngest context.CancelFunc
	watchDone, ingestDone chan struct{}
	stopOnce              sync.Once
}

// startIngestion builds and starts the chain from cfg. Checkpoints are
// curated by Tier 0 (package curate) into medallions, the store that
// redacts them before writing.
func startIngestion(ctx context.Context, cfg *config.Config, st *store.Badger, medallions store.Store, logger hclog.Logger) (*ingestion, error) {
	watches := cfg.EffectiveWatches()
	in := &ingestion{log: logger.Named("ingest"), root: logger, formats: map[string]string{}}

	var rules []scope.Rule
	for _, r := range cfg.ScopeRules {
		rules = append(rules, scope.Rule{Path: r.Path, Nodes: r.Nodes})
	}
	resolver := scope.New(rules, scope.Options{})
	in.scope = resolver

	tier1, client, err := newTier1(cfg.LLM, st, logger)
	if err != nil {
		return nil, err
	}
	in.tier1, in.llm = tier1, client
	if client != nil {
		logger.Info("tier 1 curator on", "endpoint", client.Stats().Endpoint, "model", cfg.LLM.Model)
	}
	mgr, err := checkpoint.New(st, &curate.Curator{Store: medallions, Tier1: tier1}, checkpoint.Options{
		Policy: checkpoint.Policy{
			EveryEvents: cfg.Checkpoint.EveryEvents, MinEvents: cfg.Checkpoint.MinEvents,
			Idle: cfg.Checkpoint.Idle, Schedule: cfg.Checkpoint.Schedule,
		},
		Logger: logger.Named("checkpoint"),
	})
	if err != nil {
		return nil, err
	}
	in.manager = mgr

	var roots []watch.Root
	var pw []ingest.Watch
	for _, w := range watches {
		roots = append(roots, watch.Root{Name: w.Name, Path: w.Path, Include: w.Include, Exclude: w.Exclude})
		pw = append(pw, ingest.Watch{Name: w.Name, Format: w.Format})
		in.formats[w.Name] = w.Format
	}
	in.pipeline, err = ingest.New(st, ingest.Options{
		Watches:        pw,
		Scope:          resolver,
		MaxLine:        int(cfg.Ingest.MaxLine),
		MaxText:        int(cfg.Ingest.MaxText),
		MaxMessageText: int(cfg.Ingest.MaxMessageText),
		OnIngest:       mgr.Observe,
		// A full disk pauses reading; the store reports it (see disk.go)
		// and says when there is room again.
		Paused: func() bool { return !st.Space().Writable() },
		Logger: logger.Named("ingest"),
	})
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if err := in.pipeline.Load(ctx); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	w, err := watch.New(roots, watch.Options{Logger: logger, Reconcile: cfg.Ingest.Reconcile})
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	in.roots = roots
	in.watcher.Store(w)
	if err := mgr.Start(ctx); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	in.logWatches(cfg, watches)

	ictx, cancelIngest := context.WithCancel(context.WithoutCancel(ctx))
	wctx, cancelWatch := context.WithCancel(context.WithoutCancel(ctx))
	in.stopIngest, in.stopWatch = cancelIngest, cancelWatch
	in.ingestDone, in.watchDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(in.ingestDone)
		if err := in.pipeline.Run(ictx); err != nil {
			in.log.Error("ingest pipeline stopped", "error", err)
		}
	}()
	go func() {
		defer close(in.watchDone)
		in.runWatcher(wctx, cfg.Ingest.Reconcile)
	}()
	return in, nil
}

// runWatcher runs the watcher until ctx ends. A watcher that cannot start
// (no inotify instance left) is retried at the reconcile interval, so the
// daemon keeps serving and picks up once the user raised the limit.
func (in *ingestion) runWatcher(ctx context.Context, retry time.Duration) {
	onFile := func(r watch.Root, path string) { in.pipeline.Notify(r.Name, path) }
	onGone := func(r watch.Root, path string) { in.pipeline.Gone(r.Name, path) }
	for {
		err := in.watcher.Load().Run(ctx, onFile, onGone)
		if ctx.Err() != nil {
			return
		}
		in.log.Error("file watcher stopped; retrying", "error", err, "retry_in", retry.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
		// A Watcher runs once: make a new one with the same roots.
		w, nerr := watch.New(in.roots, watch.Options{Logger: in.root, Reconcile: retry})
		if nerr != nil {
			in.log.Error("file watcher", "error", nerr)
			return
		}
		in.watcher.Store(w)
	}
}

// logWatches says at Info which folders are watched, and what it means
// when none exists yet.
func (in *ingestion) logWatches(cfg *config.Config, watches []config.Watch) {
	source := "config"
	if len(cfg.Watches) == 0 {
		source = "default"
	}
	existing := 0
	for _, w := range watches {
		exists := false
		if fi, err := os.Stat(w.Path); err == nil && fi.IsDir() {
			exists, existing = true, existing+1
		}
		in.log.Info("watch", "name", w.Name, "path", w.Path, "format", w.Format, "source", source, "exists", exists)
	}
	if existing == 0 {
		in.log.Info("no watched folder exists yet: nothing is ingested until one appears (it is picked up without a restart)",
			"watches", len(watches))
	}
}

// status is the server's Ingest figure: the pipeline's counts with the
// watcher's view of the roots.
func (in *ingestion) status() *api.IngestStatus {
	s := in.pipeline.Status()
	ws := in.watcher.Load().Stats()
	s.WatchedDirs = ws.Dirs
	for _, r := range ws.Roots {
		s.Watches = append(s.Watches, api.WatchStatus{Name: r.Name, Path: r.Path, Format: in.formats[r.Name], Exists: r.Exists, Files: r.Files})
	}
	errs := append(append([]string{}, ws.Errors...), s.Errors...)
	if len(errs) > maxStatusErrors {
		errs = errs[:maxStatusErrors]
	}
	s.Errors = errs
	return s
}

// stop shuts the chain down in order: no new notices, the pipeline stores
// the batch it is on, then the checkpoint manager finishes a running
// checkpoint (bounded by ShutdownTimeout, then its curation is cancelled).
// It is idempotent.
func (in *ingestion) stop(ctx context.Context) {
	in.stopOnce.Do(func() {
		in.stopWatch()
		<-in.watchDone
		in.stopIngest()
		<-in.ingestDone
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
		defer cancel()
		if err := in.manager.Close(cctx); err != nil {
			in.log.Warn("checkpoint manager stopped with an error", "error", err)
		}
		in.log.Info("ingestion stopped")
	})
}
