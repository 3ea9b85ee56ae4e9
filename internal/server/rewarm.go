package server

import (
	"context"
	"sync"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/render"
)

// A write drops the hook's answer files of its scope, and the next session
// in such a folder is the common case for a hook: a checkpoint stores a
// version during a session, the next session starts after it. So the
// answers a write dropped are rendered again once writing has gone quiet,
// and the next hook reads its file instead of asking (issue 12's hook).
// A burst of writes (a backfill, checkpoints of several sessions) renders
// each at most once per rewarmQuiet of quiet, or once per rewarmMax while
// the writes go on.
var (
	rewarmQuiet = 2 * time.Second
	rewarmMax   = 30 * time.Second
)

// rewarmTimeout bounds one answer's rendering.
const rewarmTimeout = 10 * time.Second

// rewarmer renders the dropped answers again, on its own goroutine.
type rewarmer struct {
	render func(ctx context.Context, l hookLoad)

	mu      sync.Mutex
	pending map[hookLoad]struct{}
	kick    chan struct{} // one waiting signal: something is pending
	// ctx ends when the server stops (stop), and with it a rendering.
	ctx  context.Context
	stop context.CancelFunc
	done chan struct{}
}

func newRewarmer(render func(ctx context.Context, l hookLoad)) *rewarmer {
	r := &rewarmer{
		render: render, pending: make(map[hookLoad]struct{}),
		kick: make(chan struct{}, 1), done: make(chan struct{}),
	}
	r.ctx, r.stop = context.WithCancel(context.Background())
	go r.run()
	return r
}

// add queues loads to be rendered again. It never blocks: the load
// cache calls it under its lock, from a store write.
func (r *rewarmer) add(loads []hookLoad) {
	r.mu.Lock()
	for _, l := range loads {
		r.pending[l] = struct{}{}
	}
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *rewarmer) run() {
	defer close(r.done)
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.kick:
		}
		if !r.waitQuiet() {
			return
		}
		r.mu.Lock()
		todo := r.pending
		r.pending = make(map[hookLoad]struct{})
		r.mu.Unlock()
		for l := range todo {
			if !r.renderOne(l) {
				return
			}
		}
	}
}

// renderOne renders l, cut short when the server stops; false once it
// has stopped.
func (r *rewarmer) renderOne(l hookLoad) bool {
	if r.ctx.Err() != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(r.ctx, rewarmTimeout)
	defer cancel()
	r.render(ctx, l)
	return true
}

// waitQuiet waits until rewarmQuiet passes without an add, or rewarmMax
// since the first; false when the server stops first.
func (r *rewarmer) waitQuiet() bool {
	deadline := time.Now().Add(rewarmMax)
	t := time.NewTimer(rewarmQuiet)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return false
		case <-r.kick:
			if left := time.Until(deadline); left > 0 {
				t.Reset(min(rewarmQuiet, left))
			}
		case <-t.C:
			return true
		}
	}
}

// close stops the rewarmer, cutting a rendering in progress short, and
// waits for it.
func (r *rewarmer) close() {
	r.stop()
	<-r.done
}

// rewarm renders the hook's load l again, which keeps its answer and file
// (loadAnswer); the cwd is resolved anew, as the hook's load would be.
func (s *Server) rewarm(ctx context.Context, l hookLoad) {
	p := loadParams{cwd: l.cwd, limit: api.DefaultLoadLimit, budget: l.budget, format: render.FormatMarkdown}
	p.scope.GraphNodes = s.cfg.ScopeForCWD(l.cwd)
	if _, _, err := s.loadAnswer(ctx, p); err != nil {
		s.log.Warn("hook answer not rendered again after a write; the next hook asks", "cwd", l.cwd, "error", err)
	}
}

// KeepHookAnswers has the answers the SessionStart hook would ask for in
// cwds (clean, absolute; at its default budget, render.DefaultBudget)
// rendered and kept as files once writing is quiet, as after a write. A
// daemon starts with no answer kept, so the daemon asks for the folders
// agents worked in last: the first session in each after a start reads
// its file too. It does nothing without Config.HookAnswers.
func (s *Server) KeepHookAnswers(cwds []string) {
	if s.rewarms == nil || len(cwds) == 0 {
		return
	}
	loads := make([]hookLoad, len(cwds))
	for i, cwd := range cwds {
		loads[i] = hookLoad{cwd, render.DefaultBudget}
	}
	s.rewarms.add(loads)
}
