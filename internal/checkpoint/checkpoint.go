// Package checkpoint decides when a session's buffered episode is handed to
// the curator, and hands it over.
//
// Triggers (see config.Checkpoint):
//
//   - every_events: the session has buffered EveryEvents events since its
//     last checkpoint (and at least MinEvents);
//   - significant: the new events complete an error followed by a success of
//     the same call (episode.FixTracker), or hold a user correction
//     (episode.IsCorrection); one buffered event is enough;
//   - idle: the session wrote nothing for Idle — it has ended; one buffered
//     event is enough, so the end of a short session is not lost;
//   - schedule: a cron schedule checkpoints every session with at least
//     MinEvents buffered;
//   - manual: Manager.Checkpoint, for one session or every session with
//     buffered events;
//   - evidence: Manager.Checkpoint with explicit evidence for a scope
//     (seed 002), converted to an episode by FromEvidence; nothing is
//     buffered for it.
//
// A session without a scope (it gave no working directory) is not curated:
// a medallion needs graph nodes. Its buffer is kept, since a later event
// with a working directory gives the session its scope, and the result
// says why (SkipNoScope).
//
// Checkpoints run one at a time on the manager's own goroutine, so they
// never block ingestion and never race each other; a request for a session
// already waiting in the queue is merged into it. A checkpoint reads the
// buffered episode (in parts of at most MaxEpisodeEvents when it is
// longer), derives its context (episode.Derive) and calls the Curator; only
// when the curator succeeds is the buffer cleared up to the last event it
// saw. Curator calls, evidence ones included, never overlap. When the curator fails, the buffer is kept and the
// next trigger tries again (every_events then waits for EveryEvents more
// events, so a failing curator is not called on every batch).
//
// After a daemon restart the manager starts idle timers for the sessions
// that still have buffered events, but it does not re-read their buffers to
// find errors: an error buffered before the restart and fixed after it does
// not fire "significant" (the pair still reaches the curator in the
// episode at the next checkpoint).
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/robfig/cron/v3"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Triggers, as they appear in Episode.Trigger and api.CheckpointResult.
const (
	TriggerEveryEvents = "every_events"
	TriggerSignificant = "significant"
	TriggerIdle        = "idle"
	TriggerSchedule    = "schedule"
	TriggerManual      = "manual"
	TriggerEvidence    = "evidence"
)

// SkipNoScope is the Skipped reason of a session without a scope.
const SkipNoScope = "no scope: session has no working directory"

// Episode is what a checkpoint hands the curator: a session's buffered
// events and what they say.
type Episode struct {
	SessionID string
	// Scope is the session's graph nodes (see package scope).
	Scope []string
	Agent string
	// Trigger names what fired the checkpoint.
	Trigger string
	// Tags are scope tags the medallion should carry besides the
	// curator's own (the evidence checkpoint's --tag).
	Tags []string
	// Note is the user's note of a manual checkpoint.
	Note    string
	Events  []episode.BufferedEvent
	Context episode.Context
}

// Result is what the curator stored.
type Result struct {
	// MedallionID and Version name the medallion version the episode was
	// curated into; empty when the curator stored none.
	MedallionID string
	Version     int
	// Items counts what was stored, by kind (see api.CheckpointResult).
	Items map[string]int
}

// Curator turns an episode into medallion content. The buffer is cleared
// only after Curate returns without error, so Curate must store its result
// before returning.
type Curator interface {
	Curate(ctx context.Context, ep Episode) (Result, error)
}

// IdleFinisher is a Curator that keeps work across episodes (Tier 1's
// digest backlog). When such a session goes idle with nothing buffered —
// its last count checkpoint took every event — or the user asks for a
// checkpoint of it, the manager still hands the curator an episode
// without events, so that work is finished while the session is at rest
// rather than when it next writes.
//
// Unfinished lists the sessions with such work: after a restart, those
// with nothing buffered get an idle timer too, and a checkpoint of all
// sessions includes them.
type IdleFinisher interface {
	Curator
	FinishesIdle() bool
	Unfinished(ctx context.Context) ([]string, error)
}

// Policy is the trigger policy (config.Checkpoint).
type Policy struct {
	EveryEvents int
	MinEvents   int
	Idle        time.Duration
	Schedule    string
}

// Options configures a Manager.
type Options struct {
	Policy Policy
	// Logger receives the manager's logs; nil discards them.
	Logger hclog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// MaxEpisodeEvents bounds the events handed to the curator at once; a longer
// buffer is checkpointed in several parts.
const MaxEpisodeEvents = 5000

// ErrStopping answers the checkpoints still queued when the manager closes.
var ErrStopping = errors.New("checkpoint manager is stopping")

// Manager runs the triggers and the checkpoints.
type Manager struct {
	st     store.EpisodeStore
	cur    Curator
	policy Policy
	log    hclog.Logger
	now    func() time.Time
	cron   *cron.Cron

	// curating serialises curator calls: the queued checkpoints run on one
	// goroutine, evidence checkpoints on their request's.
	curating sync.Mutex
	// skippedNoScope counts checkpoints skipped for want of a scope.
	skippedNoScope atomic.Int64

	mu       sync.Mutex
	sessions map[string]*session
	queue    []string
	requests map[string]*request
	started  bool
	closed   bool
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}

	runCtx    context.Context
	cancelRun context.CancelFunc
}

// session is the manager's memory of one session with buffered events.
type session struct {
	buffered int64
	// base is the buffered count when an automatic checkpoint last failed:
	// every_events waits for EveryEvents more.
	base        int64
	fixes       episode.FixTracker
	significant bool
	idle        *time.Timer
	last        time.Time // when events were last observed
}

// request is a queued checkpoint of one session.
type request struct {
	trigger string
	note    string
	min     int64 // least buffered events for the checkpoint to run
	waiters []chan api.CheckpointResult
}

// New returns a manager storing through st and curating with cur. The
// schedule, if any, must be valid (config validates it at load).
func New(st store.EpisodeStore, cur Curator, opts Options) (*Manager, error) {
	m := &Manager{
		st:       st,
		cur:      cur,
		policy:   opts.Policy,
		log:      opts.Logger,
		now:      opts.Now,
		sessions: map[string]*session{},
		requests: map[string]*request{},
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if m.log == nil {
		m.log = hclog.NewNullLogger()
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.policy.MinEvents = max(m.policy.MinEvents, 1)
	m.runCtx, m.cancelRun = context.WithCancel(context.Background())
	if m.policy.Schedule != "" {
		l := cronLogger{m.log.Named("cron")}
		m.cron = cron.New(cron.WithLogger(l), cron.WithChain(cron.Recover(l), cron.SkipIfStillRunning(l)))
		if _, err := m.cron.AddFunc(m.policy.Schedule, m.scheduled); err != nil {
			return nil, fmt.Errorf("checkpoint schedule %q: %w", m.policy.Schedule, err)
		}
	}
	return m, nil
}

// Start loads the sessions that have buffered events (their idle timers
// start from their last ingest), starts the schedule and the checkpoint
// goroutine.
func (m *Manager) Start(ctx context.Context) error {
	infos, err := m.st.Sessions(ctx)
	if err != nil {
		return fmt.Errorf("load sessions: %w", err)
	}
	unfinished := m.unfinished(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closed {
		return errors.New("checkpoint manager already started")
	}
	m.started = true
	now := m.now()
	for _, info := range infos {
		if info.Buffered <= 0 {
			continue
		}
		s := m.state(info.ID)
		s.buffered = info.Buffered
		s.last = info.LastIngestAt
		if s.last.IsZero() || s.last.After(now) {
			s.last = now
		}
		m.armIdle(info.ID, s, s.last.Add(m.policy.Idle).Sub(now))
	}
	// Sessions with nothing buffered but curator work left (a Tier 1
	// backlog when the daemon stopped) are finished once idle.
	for _, id := range unfinished {
		if _, ok := m.sessions[id]; ok {
			continue
		}
		s := m.state(id)
		s.last = now
		m.armIdle(id, s, m.policy.Idle)
	}
	go m.loop()
	if m.cron != nil {
		m.cron.Start()
	}
	m.log.Info("checkpoint triggers ready", "every_events", m.policy.EveryEvents, "min_events", m.policy.MinEvents,
		"idle", m.policy.Idle.String(), "schedule", m.policy.Schedule, "buffered_sessions", len(m.sessions))
	return nil
}

func (m *Manager) state(id string) *session {
	s := m.sessions[id]
	if s == nil {
		s = &session{}
		m.sessions[id] = s
	}
	return s
}

// Observe takes what one store.Ingest stored (the sessions' new buffered
// counts) and the events of the batch, and fires the triggers they meet.
// It is called on the ingestion goroutine and returns at once.
func (m *Manager) Observe(res store.IngestResult, events []transcript.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	for i := range events {
		e := &events[i]
		s := m.state(e.SessionID)
		if _, ok := s.fixes.Add(e); ok {
			s.significant = true
		}
		if e.Kind == transcript.KindUserPrompt && !e.Boilerplate && episode.IsCorrection(e.Text) {
			s.significant = true
		}
	}
	now := m.now()
	for _, info := range res.Sessions {
		s := m.state(info.ID)
		s.buffered = info.Buffered
		s.last = now
		m.armIdle(info.ID, s, m.policy.Idle)
		switch {
		case info.Buffered < 1:
		case s.significant:
			s.significant = false
			m.request(info.ID, TriggerSignificant, "", 1, nil)
		case m.policy.EveryEvents > 0 && info.Buffered-s.base >= int64(m.policy.EveryEvents) && info.Buffered >= int64(m.policy.MinEvents):
			m.request(info.ID, TriggerEveryEvents, "", int64(m.policy.MinEvents), nil)
		}
	}
}

// armIdle (re)starts a session's idle timer to fire after d.
func (m *Manager) armIdle(id string, s *session, d time.Duration) {
	if m.policy.Idle <= 0 {
		return
	}
	d = max(d, 0)
	if s.idle == nil {
		s.idle = time.AfterFunc(d, func() { m.idleFired(id) })
		return
	}
	s.idle.Reset(d)
}

func (m *Manager) idleFired(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[id]
	if m.closed || s == nil {
		return
	}
	if wait := s.last.Add(m.policy.Idle).Sub(m.now()); wait > 0 {
		// Events came in after the timer had already fired.
		s.idle.Reset(wait)
		return
	}
	if s.buffered >= 1 || m.finishesIdle() {
		m.request(id, TriggerIdle, "", 1, nil)
		return
	}
	m.forgetQuiet(id, s)
}

// unfinished lists the sessions the curator has work left for; errors are
// logged, since that work also finishes when the session next writes.
func (m *Manager) unfinished(ctx context.Context) []string {
	f, ok := m.cur.(IdleFinisher)
	if !ok || !f.FinishesIdle() {
		return nil
	}
	ids, err := f.Unfinished(ctx)
	if err != nil {
		m.log.Warn("cannot list the sessions with curator work left", "error", err)
	}
	return ids
}

func (m *Manager) finishesIdle() bool {
	f, ok := m.cur.(IdleFinisher)
	return ok && f.FinishesIdle()
}

// request queues a checkpoint of a session, merging it into one already
// queued. Called with m.mu held.
func (m *Manager) request(id, trigger, note string, least int64, waiter chan api.CheckpointResult) {
	if r := m.requests[id]; r != nil {
		if trigger == TriggerManual || r.trigger != TriggerManual && trigger == TriggerSignificant {
			r.trigger = trigger
		}
		if note != "" {
			r.note = note
		}
		r.min = max(1, min(r.min, least))
		if waiter != nil {
			r.waiters = append(r.waiters, waiter)
		}
		return
	}
	r := &request{trigger: trigger, note: note, min: max(1, least)}
	if waiter != nil {
		r.waiters = append(r.waiters, waiter)
	}
	m.requests[id] = r
	m.queue = append(m.queue, id)
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// loop runs the queued checkpoints one at a time until Close.
func (m *Manager) loop() {
	defer close(m.done)
	for {
		m.mu.Lock()
		for len(m.queue) > 0 {
			select {
			case <-m.stop:
				m.mu.Unlock()
				return
			default:
			}
			id := m.queue[0]
			m.queue = m.queue[1:]
			r := m.requests[id]
			delete(m.requests, id)
			m.mu.Unlock()
			res := m.run(m.runCtx, id, r)
			for _, w := range r.waiters {
				w <- res
			}
			m.mu.Lock()
		}
		m.mu.Unlock()
		select {
		case <-m.stop:
			return
		case <-m.wake:
		}
	}
}

// run performs one checkpoint.
func (m *Manager) run(ctx context.Context, id string, r *request) api.CheckpointResult {
	res := api.CheckpointResult{SessionID: id, Trigger: r.trigger, Scope: []string{}}
	fail := func(what string, err error) api.CheckpointResult {
		m.log.Error("checkpoint failed", "session", id, "trigger", r.trigger, "step", what, "error", err)
		res.Error = fmt.Sprintf("%s: %v", what, err)
		m.mu.Lock()
		if s := m.sessions[id]; s != nil && r.trigger != TriggerManual {
			s.base = s.buffered
		}
		m.mu.Unlock()
		return res
	}
	info, err := m.st.Session(ctx, id)
	if err != nil {
		return fail("read session", err)
	}
	if info == nil {
		res.Error = "unknown session"
		return res
	}
	res.Scope = nonNil(info.Scope)
	if len(res.Scope) == 0 {
		// Kept, not cleared: the session's next event with a working
		// directory gives it a scope, and this episode then goes with it.
		n := m.skippedNoScope.Add(1)
		m.log.Info("checkpoint skipped", "session", id, "trigger", r.trigger, "reason", SkipNoScope,
			"buffered", info.Buffered, "skipped_no_scope", n)
		res.Skipped = SkipNoScope
		res.Events = int(info.Buffered)
		m.mu.Lock()
		if s := m.sessions[id]; s != nil && r.trigger != TriggerManual {
			s.base = s.buffered
		}
		m.mu.Unlock()
		return res
	}
	// A long buffer (a backfill with the automatic triggers off, a curator
	// that kept failing) goes to the curator in parts of at most
	// MaxEpisodeEvents, each cleared once curated, so memory stays bounded.
	for part := 0; ; part++ {
		events, err := m.st.Episode(ctx, id, 0, MaxEpisodeEvents)
		if err != nil {
			return fail("read episode", err)
		}
		if part == 0 && len(events) == 0 && (r.trigger == TriggerIdle || r.trigger == TriggerManual) && m.finishesIdle() {
			out, err := m.curate(ctx, Episode{SessionID: id, Scope: res.Scope, Agent: info.Agent, Trigger: r.trigger})
			if err != nil {
				return fail("curate", err)
			}
			res.MedallionID, res.Version, res.Items = out.MedallionID, out.Version, out.Items
			if out.MedallionID != "" {
				m.logDone(id, r.trigger, 0, out, 0)
			}
			m.mu.Lock()
			if s := m.sessions[id]; s != nil {
				m.forgetQuiet(id, s)
			}
			m.mu.Unlock()
			return res
		}
		if part == 0 && int64(len(events)) < r.min || len(events) == 0 {
			if part == 0 {
				// Checkpointed meanwhile, or fewer events than this
				// trigger needs.
				m.log.Debug("checkpoint skipped", "session", id, "trigger", r.trigger, "events", len(events), "min", r.min)
			}
			return res
		}
		read := len(events)
		if r.trigger != TriggerIdle && r.trigger != TriggerManual {
			// The agent may be mid-turn: a call whose result is still to
			// come waits for the next episode.
			events = events[:episode.Settled(events)]
		}
		ep := Episode{
			SessionID: id, Scope: res.Scope, Agent: info.Agent, Trigger: r.trigger, Note: r.note,
			Events: events, Context: episode.Derive(events),
		}
		// Events counts what the curator was given, cleared or not.
		res.Events += len(events)
		start := m.now()
		out, err := m.curate(ctx, ep)
		if err != nil {
			return fail("curate", err)
		}
		if err := m.st.ClearEpisode(ctx, id, events[len(events)-1].Seq); err != nil {
			return fail("clear episode", err)
		}
		res.MedallionID, res.Version = out.MedallionID, out.Version
		res.Items = addCounts(res.Items, out.Items)
		m.logDone(id, r.trigger, len(events), out, m.now().Sub(start))
		m.cleared(id, len(events))
		if read < MaxEpisodeEvents {
			return res
		}
	}
}

// curate calls the curator, one call at a time.
func (m *Manager) curate(ctx context.Context, ep Episode) (Result, error) {
	m.curating.Lock()
	defer m.curating.Unlock()
	return m.cur.Curate(ctx, ep)
}

// logDone logs what a checkpoint stored: the medallion version and its
// items by kind, or that the episode held nothing worth storing.
func (m *Manager) logDone(id, trigger string, events int, out Result, took time.Duration) {
	if out.MedallionID == "" {
		m.log.Info("checkpoint done: nothing to store", "session", id, "trigger", trigger, "events", events,
			"took", took.String())
		return
	}
	kv := []any{"session", id, "trigger", trigger, "events", events, "medallion", out.MedallionID,
		"version", out.Version}
	kinds := make([]string, 0, len(out.Items))
	for k := range out.Items {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		kv = append(kv, k, out.Items[k])
	}
	m.log.Info("checkpoint stored", append(kv, "took", took.String())...)
}

// addCounts adds b's counts to a, allocating a when needed.
func addCounts(a, b map[string]int) map[string]int {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make(map[string]int, len(b))
	}
	for k, n := range b {
		a[k] += n
	}
	return a
}

// SkippedNoScope is how many checkpoints were skipped because their
// session had no scope, since the manager started.
func (m *Manager) SkippedNoScope() int64 { return m.skippedNoScope.Load() }

// cleared updates the manager's memory of a session after a checkpoint
// cleared n events.
func (m *Manager) cleared(id string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[id]
	if s == nil {
		return
	}
	s.base = 0
	s.buffered = max(0, s.buffered-int64(n))
	// The failures that were open are in the cleared part: a later
	// success is not a fix "in the buffered episode" any more.
	s.fixes = episode.FixTracker{}
	m.forgetQuiet(id, s)
}

// forgetQuiet drops the memory of a session with nothing buffered, nothing
// queued and no idle time left to wait for, until it writes again. Called
// with m.mu held.
func (m *Manager) forgetQuiet(id string, s *session) {
	if s.buffered == 0 && m.requests[id] == nil && (m.policy.Idle <= 0 || !m.now().Before(s.last.Add(m.policy.Idle))) {
		if s.idle != nil {
			s.idle.Stop()
		}
		delete(m.sessions, id)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// Checkpoint runs a manual checkpoint of one session (req.SessionID), of
// every session with buffered events, or of explicit evidence for the scope
// req.Nodes, waiting for the results. An unknown session is an error
// wrapping store.ErrNotFound, an invalid evidence request one wrapping
// ErrInvalidEvidence; a failed curation is reported in its result, not as
// an error.
func (m *Manager) Checkpoint(ctx context.Context, req api.CheckpointRequest) (api.CheckpointResponse, error) {
	if len(req.Nodes) > 0 || req.Evidence != nil || len(req.Tags) > 0 {
		res, err := m.evidence(ctx, req)
		if err != nil {
			return api.CheckpointResponse{}, err
		}
		return api.CheckpointResponse{Checkpoints: []api.CheckpointResult{res}}, nil
	}
	var ids []string
	if req.SessionID != "" {
		info, err := m.st.Session(ctx, req.SessionID)
		if err != nil {
			return api.CheckpointResponse{}, fmt.Errorf("checkpoint %s: %w", req.SessionID, err)
		}
		if info == nil {
			return api.CheckpointResponse{}, fmt.Errorf("session %q: %w", req.SessionID, store.ErrNotFound)
		}
		ids = []string{req.SessionID}
	} else {
		infos, err := m.st.Sessions(ctx)
		if err != nil {
			return api.CheckpointResponse{}, fmt.Errorf("checkpoint: %w", err)
		}
		for _, info := range infos {
			if info.Buffered > 0 {
				ids = append(ids, info.ID)
			}
		}
		for _, id := range m.unfinished(ctx) {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	results, err := m.await(ctx, ids, TriggerManual, req.Note, 1)
	return api.CheckpointResponse{Checkpoints: results}, err
}

// evidence curates explicit evidence (seed 002) into the medallion of
// exactly req.Nodes.
func (m *Manager) evidence(ctx context.Context, req api.CheckpointRequest) (api.CheckpointResult, error) {
	m.mu.Lock()
	stopped := m.closed || !m.started
	m.mu.Unlock()
	if stopped {
		return api.CheckpointResult{}, ErrStopping
	}
	ep, err := FromEvidence(req, m.now())
	if err != nil {
		return api.CheckpointResult{}, err
	}
	res := api.CheckpointResult{SessionID: ep.SessionID, Scope: nonNil(ep.Scope), Trigger: TriggerEvidence, Events: len(ep.Events)}
	start := m.now()
	out, err := m.curate(ctx, ep)
	if err != nil {
		m.log.Error("checkpoint failed", "session", ep.SessionID, "trigger", TriggerEvidence, "step", "curate", "error", err)
		res.Error = fmt.Sprintf("curate: %v", err)
		return res, nil
	}
	res.MedallionID, res.Version, res.Items = out.MedallionID, out.Version, out.Items
	m.logDone(ep.SessionID, TriggerEvidence, len(ep.Events), out, m.now().Sub(start))
	return res, nil
}

// await queues checkpoints of ids and waits for their results, in the
// order of ids.
func (m *Manager) await(ctx context.Context, ids []string, trigger, note string, least int64) ([]api.CheckpointResult, error) {
	waiters := make([]chan api.CheckpointResult, len(ids))
	m.mu.Lock()
	if m.closed || !m.started {
		m.mu.Unlock()
		return nil, ErrStopping
	}
	for i, id := range ids {
		waiters[i] = make(chan api.CheckpointResult, 1)
		m.request(id, trigger, note, least, waiters[i])
	}
	m.mu.Unlock()
	out := make([]api.CheckpointResult, 0, len(ids))
	for _, w := range waiters {
		select {
		case r := <-w:
			out = append(out, r)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return out, nil
}

// scheduled is the cron job: checkpoint every session with at least
// MinEvents buffered, and wait for them (so SkipIfStillRunning skips a run
// while the last one is still being curated).
func (m *Manager) scheduled() {
	infos, err := m.st.Sessions(m.runCtx)
	if err != nil {
		m.log.Error("scheduled checkpoint: list sessions", "error", err)
		return
	}
	var ids []string
	for _, info := range infos {
		if info.Buffered >= int64(m.policy.MinEvents) {
			ids = append(ids, info.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	m.log.Debug("scheduled checkpoint", "sessions", len(ids))
	if _, err := m.await(m.runCtx, ids, TriggerSchedule, "", int64(m.policy.MinEvents)); err != nil && !errors.Is(err, ErrStopping) {
		m.log.Warn("scheduled checkpoint interrupted", "error", err)
	}
}

// Close stops the triggers, drops queued checkpoints (their waiters get
// ErrStopping) and waits for a running checkpoint to finish; if ctx ends
// first, the running curation's context is cancelled and Close waits for it
// to return. Close is idempotent.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		<-m.done
		return nil
	}
	m.closed = true
	started := m.started
	for _, s := range m.sessions {
		if s.idle != nil {
			s.idle.Stop()
		}
	}
	for _, id := range m.queue {
		for _, w := range m.requests[id].waiters {
			w <- api.CheckpointResult{SessionID: id, Trigger: m.requests[id].trigger, Scope: []string{}, Error: ErrStopping.Error()}
		}
		delete(m.requests, id)
	}
	m.queue = nil
	close(m.stop)
	m.mu.Unlock()
	if !started {
		close(m.done)
		m.cancelRun()
		return nil
	}
	if m.cron != nil {
		// Waits for a running scheduled job, which waits on results the
		// loop delivers or the queue drop above already gave.
		cronDone := m.cron.Stop().Done()
		select {
		case <-cronDone:
		case <-ctx.Done():
			m.cancelRun()
			<-cronDone
		}
	}
	select {
	case <-m.done:
	case <-ctx.Done():
		m.cancelRun()
		<-m.done
	}
	m.cancelRun()
	return nil
}

// cronLogger routes cron's logs to hclog: its routine messages at Trace,
// errors (a recovered panic, a skipped run) at Error and Info.
type cronLogger struct{ l hclog.Logger }

func (c cronLogger) Info(msg string, kv ...any) {
	if msg == "skip" {
		c.l.Info("scheduled checkpoint skipped: the previous one is still running")
		return
	}
	c.l.Trace(msg, kv...)
}

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error(msg, append([]any{"error", err}, kv...)...)
}
