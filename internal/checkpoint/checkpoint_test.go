package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

// funcCurator is a Curator made of a function.
type funcCurator struct {
	curate func(ctx context.Context, ep Episode) (Result, error)
}

func (f funcCurator) Curate(ctx context.Context, ep Episode) (Result, error) {
	return f.curate(ctx, ep)
}

var _ Curator = funcCurator{}

// recording is a curator that keeps every episode and answers with fail(n)
// for the n-th call (nil: success).
type recording struct {
	mu   sync.Mutex
	eps  []Episode
	fail func(n int) error
}

func (r *recording) curator() Curator {
	return funcCurator{curate: func(_ context.Context, ep Episode) (Result, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.eps = append(r.eps, ep)
		if r.fail != nil {
			if err := r.fail(len(r.eps)); err != nil {
				return Result{}, err
			}
		}
		return Result{MedallionID: "m-" + ep.SessionID, Version: len(r.eps)}, nil
	}}
}

func (r *recording) episodes() []Episode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Episode(nil), r.eps...)
}

// bySession returns the recorded episodes of one session.
func (r *recording) bySession(id string) []Episode {
	var out []Episode
	for _, ep := range r.episodes() {
		if ep.SessionID == id {
			out = append(out, ep)
		}
	}
	return out
}

type env struct {
	t      *testing.T
	st     *store.Badger
	m      *Manager
	offset int64
	n      int
	// unscoped names the sessions ingested without a scope.
	unscoped map[string]bool
}

func newEnv(t *testing.T, cur Curator, p Policy) *env {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := &env{t: t, st: st}
	e.m = e.manager(cur, p)
	return e
}

func (e *env) manager(cur Curator, p Policy) *Manager {
	e.t.Helper()
	m, err := New(e.st, cur, Options{Policy: p})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// ingest stores events as the pipeline would (one batch, one file) and
// hands the result to the manager.
func (e *env) ingest(events ...transcript.Event) {
	e.t.Helper()
	for i := range events {
		e.n++
		if events[i].ID == "" {
			events[i].ID = fmt.Sprintf("ev-%d", e.n)
		}
		if events[i].Agent == "" {
			events[i].Agent = "claude-code"
		}
	}
	e.offset += 100
	scopes := map[string][]string{}
	for _, ev := range events {
		if !e.unscoped[ev.SessionID] {
			scopes[ev.SessionID] = []string{"repo:muse"}
		}
	}
	res, err := e.st.Ingest(context.Background(), store.IngestBatch{
		File:   store.FileState{Key: "1:1", Path: "/t/s.jsonl", Offset: e.offset},
		Events: events,
		Scopes: scopes,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.m.Observe(res, events)
}

func (e *env) buffered(id string) int64 {
	e.t.Helper()
	s, err := e.st.Session(context.Background(), id)
	if err != nil || s == nil {
		e.t.Fatalf("session %s: %v, %v", id, s, err)
	}
	return s.Buffered
}

func prompt(session, text string) transcript.Event {
	return transcript.Event{SessionID: session, Kind: transcript.KindUserPrompt, Text: text}
}

func boolp(b bool) *bool { return &b }

func call(session, id, cmd string) transcript.Event {
	return transcript.Event{SessionID: session, Kind: transcript.KindToolCall, Tool: "Bash", ToolCallID: id, Command: cmd}
}

func result(session, id string, ok bool) transcript.Event {
	return transcript.Event{SessionID: session, Kind: transcript.KindToolResult, Tool: "Bash", ToolCallID: id, OK: boolp(ok)}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestEveryEvents(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{EveryEvents: 5, MinEvents: 3})
	for i := range 4 {
		e.ingest(prompt("s1", fmt.Sprintf("step %d", i)))
	}
	e.ingest(prompt("s1", "step 4"))
	waitFor(t, "a checkpoint", func() bool { return len(rec.episodes()) == 1 })
	ep := rec.episodes()[0]
	if ep.Trigger != TriggerEveryEvents || len(ep.Events) != 5 || ep.SessionID != "s1" || ep.Agent != "claude-code" || len(ep.Scope) != 1 || ep.Scope[0] != "repo:muse" {
		t.Errorf("episode = trigger %s, %d events, session %s, agent %s, scope %v", ep.Trigger, len(ep.Events), ep.SessionID, ep.Agent, ep.Scope)
	}
	waitFor(t, "the buffer cleared", func() bool { return e.buffered("s1") == 0 })
	s, _ := e.st.Session(context.Background(), "s1")
	if s.Checkpoints != 1 {
		t.Errorf("checkpoints = %d", s.Checkpoints)
	}
	// Five more: a second checkpoint of just those.
	for i := range 5 {
		e.ingest(prompt("s1", fmt.Sprintf("more %d", i)))
	}
	waitFor(t, "a second checkpoint", func() bool { return len(rec.episodes()) == 2 })
	if ep := rec.episodes()[1]; len(ep.Events) != 5 || ep.Events[0].Event.Text != "more 0" {
		t.Errorf("second episode: %d events from %q", len(ep.Events), ep.Events[0].Event.Text)
	}
}

// TestEveryEventsKeepsPendingCall: a count checkpoint that falls between
// a tool call and its result leaves the call buffered, so the next episode
// holds the pair whole.
func TestEveryEventsKeepsPendingCall(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{EveryEvents: 5, MinEvents: 3})
	e.ingest(prompt("s1", "commit it"), call("s1", "c1", "git status"), result("s1", "c1", true), prompt("s1", "go"))
	e.ingest(call("s1", "c2", "git commit -m x"))
	waitFor(t, "a checkpoint", func() bool { return len(rec.episodes()) == 1 })
	if ep := rec.episodes()[0]; len(ep.Events) != 4 {
		t.Fatalf("first episode: %d events, want 4 (the pending call held back)", len(ep.Events))
	}
	waitFor(t, "one event left buffered", func() bool { return e.buffered("s1") == 1 })
	e.ingest(result("s1", "c2", true), prompt("s1", "a"), prompt("s1", "b"), prompt("s1", "c"))
	waitFor(t, "a second checkpoint", func() bool { return len(rec.episodes()) == 2 })
	ep := rec.episodes()[1]
	if len(ep.Events) != 5 || ep.Events[0].Event.ToolCallID != "c2" || ep.Events[1].Event.ToolCallID != "c2" {
		t.Errorf("second episode: %d events starting %+v, want the call and its result first", len(ep.Events), ep.Events[0].Event)
	}
}

func TestSignificantFix(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{EveryEvents: 100, MinEvents: 50})
	e.ingest(prompt("s1", "make it build"), call("s1", "c1", "make build"), result("s1", "c1", false))
	e.ingest(call("s1", "c2", "make test"), result("s1", "c2", true)) // another command: no fix
	e.ingest(call("s1", "c3", "make  build"), result("s1", "c3", true))
	waitFor(t, "a checkpoint", func() bool { return len(rec.episodes()) == 1 })
	ep := rec.episodes()[0]
	if ep.Trigger != TriggerSignificant || len(ep.Events) != 7 {
		t.Fatalf("episode = %s with %d events, want significant with 7", ep.Trigger, len(ep.Events))
	}
	if len(ep.Context.Fixes) != 1 || len(ep.Context.Errors) != 1 || ep.Context.Tools["Bash"] != 3 {
		t.Errorf("context = %+v", ep.Context)
	}
}

func TestSignificantCorrection(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{EveryEvents: 100, MinEvents: 50})
	hook := prompt("s1", "Never stop hooks")
	hook.Boilerplate, hook.Subtype = true, "hook"
	e.ingest(hook)
	e.ingest(prompt("s1", "I don't know why it fails"))
	e.ingest(prompt("s1", "No, don't touch the public API"))
	waitFor(t, "a checkpoint", func() bool { return len(rec.episodes()) == 1 })
	ep := rec.episodes()[0]
	if ep.Trigger != TriggerSignificant || len(ep.Events) != 3 || len(ep.Context.Corrections) != 1 {
		t.Errorf("episode = %s with %d events and %d corrections, want significant, 3, 1", ep.Trigger, len(ep.Events), len(ep.Context.Corrections))
	}
}

func TestIdle(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{EveryEvents: 10, MinEvents: 5, Idle: 50 * time.Millisecond})
	e.ingest(prompt("s1", "one"))
	e.ingest(prompt("s1", "two"))
	waitFor(t, "the idle checkpoint", func() bool { return len(rec.episodes()) == 1 })
	if ep := rec.episodes()[0]; ep.Trigger != TriggerIdle || len(ep.Events) != 2 {
		t.Errorf("episode = %s with %d events, want idle with 2 (fewer than min_events)", ep.Trigger, len(ep.Events))
	}
	waitFor(t, "the buffer cleared", func() bool { return e.buffered("s1") == 0 })
}

// finisher is a recording curator that keeps work across episodes, left
// for the sessions in pending.
type finisher struct {
	Curator
	pending []string
}

func (finisher) FinishesIdle() bool { return true }

func (f finisher) Unfinished(context.Context) ([]string, error) { return f.pending, nil }

// TestIdleFinisher: when a count checkpoint took every event, a curator
// that keeps work across episodes (Tier 1's backlog) still gets the idle
// episode, without events; a plain curator does not.
func TestIdleFinisher(t *testing.T) {
	for _, finishes := range []bool{true, false} {
		rec := &recording{}
		cur := rec.curator()
		if finishes {
			cur = finisher{Curator: cur}
		}
		e := newEnv(t, cur, Policy{EveryEvents: 3, MinEvents: 3, Idle: 50 * time.Millisecond})
		e.ingest(prompt("s1", "one"), prompt("s1", "two"), prompt("s1", "three"))
		waitFor(t, "the count checkpoint", func() bool { return len(rec.episodes()) >= 1 })
		if finishes {
			waitFor(t, "the idle episode", func() bool { return len(rec.episodes()) == 2 })
			if ep := rec.episodes()[1]; ep.Trigger != TriggerIdle || len(ep.Events) != 0 || len(ep.Scope) != 1 {
				t.Errorf("idle episode: %s with %d events, scope %v", ep.Trigger, len(ep.Events), ep.Scope)
			}
			continue
		}
		time.Sleep(150 * time.Millisecond) // three idle periods: nothing may come
		if n := len(rec.episodes()); n != 1 {
			t.Errorf("a plain curator got %d episodes, want only the count checkpoint", n)
		}
	}
}

// TestUnfinishedAfterRestart: a session with nothing buffered but curator
// work left when the daemon stopped gets its idle episode after a restart,
// and a checkpoint of all sessions includes it.
func TestUnfinishedAfterRestart(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{EveryEvents: 3, MinEvents: 3})
	e.ingest(prompt("s1", "one"), prompt("s1", "two"), prompt("s1", "three"))
	waitFor(t, "the count checkpoint", func() bool { return len(rec.episodes()) == 1 })
	waitFor(t, "the buffer cleared", func() bool { return e.buffered("s1") == 0 })

	// Restarted with the curator's work for s1 left over.
	idle := &recording{}
	e.manager(finisher{Curator: idle.curator(), pending: []string{"s1"}}, Policy{EveryEvents: 3, MinEvents: 3, Idle: 30 * time.Millisecond})
	waitFor(t, "the idle episode of s1", func() bool { return len(idle.bySession("s1")) == 1 })
	if ep := idle.bySession("s1")[0]; ep.Trigger != TriggerIdle || len(ep.Events) != 0 {
		t.Errorf("episode %s with %d events", ep.Trigger, len(ep.Events))
	}

	manual := &recording{}
	m := e.manager(finisher{Curator: manual.curator(), pending: []string{"s1"}}, Policy{EveryEvents: 3, MinEvents: 3})
	resp, err := m.Checkpoint(context.Background(), api.CheckpointRequest{})
	if err != nil || len(resp.Checkpoints) != 1 || resp.Checkpoints[0].SessionID != "s1" {
		t.Fatalf("checkpoint of all: %+v, %v; want s1's unfinished work", resp, err)
	}
}

// TestIdleAfterRestart: a session that still had buffered events when the
// daemon stopped is checkpointed when its idle time is up.
func TestIdleAfterRestart(t *testing.T) {
	e := newEnv(t, (&recording{}).curator(), Policy{EveryEvents: 10, MinEvents: 5})
	e.ingest(prompt("s1", "one"), prompt("s1", "two"))
	if err := e.m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := &recording{}
	e.m = e.manager(rec.curator(), Policy{EveryEvents: 10, MinEvents: 5, Idle: 30 * time.Millisecond})
	waitFor(t, "the idle checkpoint", func() bool { return len(rec.episodes()) == 1 })
	if ep := rec.episodes()[0]; ep.Trigger != TriggerIdle || len(ep.Events) != 2 {
		t.Errorf("episode = %s with %d events", ep.Trigger, len(ep.Events))
	}
}

func TestSchedule(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{MinEvents: 3, Schedule: "@every 100ms"})
	e.ingest(prompt("a", "one"), prompt("a", "two"))
	e.ingest(prompt("b", "one"), prompt("b", "two"), prompt("b", "three"), prompt("b", "four"))
	waitFor(t, "b's scheduled checkpoint", func() bool { return len(rec.bySession("b")) == 1 })
	if ep := rec.bySession("b")[0]; ep.Trigger != TriggerSchedule || len(ep.Events) != 4 {
		t.Errorf("b: %s with %d events", ep.Trigger, len(ep.Events))
	}
	// a had fewer than min_events; with a third it is checkpointed too.
	e.ingest(prompt("a", "three"))
	waitFor(t, "a's scheduled checkpoint", func() bool { return len(rec.bySession("a")) == 1 })
	if ep := rec.bySession("a")[0]; ep.Trigger != TriggerSchedule || len(ep.Events) != 3 {
		t.Errorf("a: %s with %d events, want schedule with 3 (never with 2)", ep.Trigger, len(ep.Events))
	}
}

func TestBadSchedule(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := New(st, (&recording{}).curator(), Options{Policy: Policy{Schedule: "every hour"}}); err == nil {
		t.Error("New accepted a bad schedule")
	}
}

func TestManual(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{EveryEvents: 100, MinEvents: 5})
	ctx := context.Background()
	e.ingest(prompt("a", "one"))
	e.ingest(prompt("b", "one"), prompt("b", "two"))

	resp, err := e.m.Checkpoint(ctx, api.CheckpointRequest{SessionID: "a", Note: "after the refactor"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Checkpoints) != 1 || resp.Checkpoints[0].Events != 1 || resp.Checkpoints[0].MedallionID != "m-a" ||
		resp.Checkpoints[0].Trigger != TriggerManual || resp.Checkpoints[0].Error != "" || resp.Checkpoints[0].Scope[0] != "repo:muse" {
		t.Errorf("manual a = %+v", resp.Checkpoints)
	}
	if ep := rec.bySession("a"); len(ep) != 1 || ep[0].Note != "after the refactor" {
		t.Errorf("episodes of a = %+v", ep)
	}

	e.ingest(prompt("a", "two"))
	resp, err = e.m.Checkpoint(ctx, api.CheckpointRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range resp.Checkpoints {
		got[r.SessionID] = r.Events
	}
	if len(got) != 2 || got["a"] != 1 || got["b"] != 2 {
		t.Errorf("manual all = %+v", resp.Checkpoints)
	}
	// Nothing buffered: nothing to do.
	resp, err = e.m.Checkpoint(ctx, api.CheckpointRequest{})
	if err != nil || len(resp.Checkpoints) != 0 {
		t.Errorf("manual all with nothing buffered = %+v, %v", resp, err)
	}
	// A known session with an empty buffer: a result with no events, no curation.
	n := len(rec.episodes())
	resp, err = e.m.Checkpoint(ctx, api.CheckpointRequest{SessionID: "a"})
	if err != nil || len(resp.Checkpoints) != 1 || resp.Checkpoints[0].Events != 0 || len(rec.episodes()) != n {
		t.Errorf("manual of an empty buffer = %+v, %v", resp, err)
	}
	_, err = e.m.Checkpoint(ctx, api.CheckpointRequest{SessionID: "nope"})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown session: %v, want ErrNotFound", err)
	}
}

// TestFailedCurationKeepsBuffer: the buffer is cleared only after the
// curator succeeded; a failed one is retried at the next trigger.
func TestFailedCurationKeepsBuffer(t *testing.T) {
	rec := &recording{fail: func(n int) error {
		if n <= 2 {
			return errors.New("model unavailable")
		}
		return nil
	}}
	e := newEnv(t, rec.curator(), Policy{EveryEvents: 3, MinEvents: 1})
	e.ingest(prompt("s1", "1"), prompt("s1", "2"), prompt("s1", "3"))
	waitFor(t, "the first attempt", func() bool { return len(rec.episodes()) == 1 })
	resp, err := e.m.Checkpoint(context.Background(), api.CheckpointRequest{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Checkpoints[0]; !strings.Contains(r.Error, "model unavailable") || r.Events != 3 {
		t.Errorf("failed manual = %+v", r)
	}
	if b := e.buffered("s1"); b != 3 {
		t.Errorf("buffered after failures = %d, want 3", b)
	}
	// every_events now waits for 3 more events before trying again.
	e.ingest(prompt("s1", "4"))
	e.ingest(prompt("s1", "5"))
	e.ingest(prompt("s1", "6"))
	waitFor(t, "the retry", func() bool { return len(rec.episodes()) == 3 })
	if ep := rec.episodes()[2]; len(ep.Events) != 6 || ep.Trigger != TriggerEveryEvents {
		t.Errorf("retry = %s with %d events, want every_events with all 6", ep.Trigger, len(ep.Events))
	}
	waitFor(t, "the buffer cleared", func() bool { return e.buffered("s1") == 0 })
}

// TestCoalesce: requests for a session already queued merge into one.
func TestCoalesce(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan string, 10)
	var mu sync.Mutex
	calls := map[string]int{}
	cur := funcCurator{curate: func(_ context.Context, ep Episode) (Result, error) {
		mu.Lock()
		calls[ep.SessionID]++
		mu.Unlock()
		entered <- ep.SessionID
		<-release
		return Result{}, nil
	}}
	e := newEnv(t, cur, Policy{EveryEvents: 100, MinEvents: 1})
	e.ingest(prompt("busy", "1"))
	e.ingest(prompt("s1", "1"))
	var wg sync.WaitGroup
	results := make([][]api.CheckpointResult, 4)
	wg.Go(func() {
		r, _ := e.m.Checkpoint(context.Background(), api.CheckpointRequest{SessionID: "busy"})
		results[0] = r.Checkpoints
	})
	<-entered // the checkpoint goroutine is busy
	for i := 1; i <= 3; i++ {
		wg.Go(func() {
			r, _ := e.m.Checkpoint(context.Background(), api.CheckpointRequest{SessionID: "s1", Note: fmt.Sprint(i)})
			results[i] = r.Checkpoints
		})
	}
	waitFor(t, "three queued waiters", func() bool {
		e.m.mu.Lock()
		defer e.m.mu.Unlock()
		r := e.m.requests["s1"]
		return r != nil && len(r.waiters) == 3 && len(e.m.queue) == 1
	})
	close(release)
	wg.Wait()
	if calls["s1"] != 1 || calls["busy"] != 1 {
		t.Errorf("curator calls = %v, want one per session", calls)
	}
	for i, r := range results {
		if len(r) != 1 || r[0].Events != 1 {
			t.Errorf("result %d = %+v", i, r)
		}
	}
}

// TestCloseWaitsForRunning: Close returns only after the running
// checkpoint finished; with a deadline it cancels the curation instead.
func TestCloseWaitsForRunning(t *testing.T) {
	t.Run("waits", func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		var finished bool
		cur := funcCurator{curate: func(_ context.Context, ep Episode) (Result, error) {
			close(entered)
			<-release
			finished = true
			return Result{}, nil
		}}
		e := newEnv(t, cur, Policy{EveryEvents: 1, MinEvents: 1})
		e.ingest(prompt("s1", "1"))
		<-entered
		closed := make(chan error)
		go func() { closed <- e.m.Close(context.Background()) }()
		close(release)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if !finished {
			t.Error("Close returned before the running checkpoint finished")
		}
		if b := e.buffered("s1"); b != 0 {
			t.Errorf("the running checkpoint did not complete: %d buffered", b)
		}
		// After Close: no new checkpoints.
		if _, err := e.m.Checkpoint(context.Background(), api.CheckpointRequest{}); !errors.Is(err, ErrStopping) {
			t.Errorf("Checkpoint after Close = %v", err)
		}
	})
	t.Run("deadline cancels", func(t *testing.T) {
		entered := make(chan struct{})
		var sawCancel bool
		cur := funcCurator{curate: func(ctx context.Context, ep Episode) (Result, error) {
			close(entered)
			<-ctx.Done()
			sawCancel = true
			return Result{}, ctx.Err()
		}}
		e := newEnv(t, cur, Policy{EveryEvents: 1, MinEvents: 1})
		e.ingest(prompt("s1", "1"))
		<-entered
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if err := e.m.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if !sawCancel {
			t.Error("the curation was not cancelled")
		}
		if b := e.buffered("s1"); b != 1 {
			t.Errorf("a cancelled curation cleared the buffer: %d buffered", b)
		}
	})
}

// TestNoScope: a session without a scope is not curated; its buffer is
// kept, the result says why, and the skip is counted. Once an event gives
// the session a scope, the whole episode is curated.
func TestNoScope(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{MinEvents: 1})
	e.unscoped = map[string]bool{"bare": true}
	e.ingest(prompt("bare", "one"), prompt("bare", "two"))
	for range 2 {
		resp, err := e.m.Checkpoint(context.Background(), api.CheckpointRequest{SessionID: "bare"})
		if err != nil {
			t.Fatal(err)
		}
		want := api.CheckpointResult{SessionID: "bare", Scope: []string{}, Trigger: TriggerManual, Events: 2, Skipped: SkipNoScope}
		if r := resp.Checkpoints[0]; !reflect.DeepEqual(r, want) {
			t.Errorf("result = %+v, want %+v", r, want)
		}
	}
	if n := len(rec.episodes()); n != 0 {
		t.Errorf("the curator got %d episodes of a session without scope", n)
	}
	if b := e.buffered("bare"); b != 2 {
		t.Errorf("buffered = %d, want the 2 kept", b)
	}
	if n := e.m.SkippedNoScope(); n != 2 {
		t.Errorf("SkippedNoScope = %d, want 2", n)
	}
	e.unscoped = nil
	e.ingest(prompt("bare", "three"))
	resp, err := e.m.Checkpoint(context.Background(), api.CheckpointRequest{SessionID: "bare"})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Checkpoints[0]; r.Skipped != "" || r.Events != 3 || r.MedallionID == "" {
		t.Errorf("result with a scope = %+v, want 3 events curated", r)
	}
}

// TestEvidenceCheckpoint: evidence for a scope goes to the curator as an
// episode of that scope, with its tags and note; a bad request is refused
// with ErrInvalidEvidence and reaches no curator.
func TestEvidenceCheckpoint(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{MinEvents: 1})
	req := api.CheckpointRequest{
		Nodes: []string{"repo:demo"}, Tags: []string{"seed"}, Note: "from a framework",
		Evidence: &api.Evidence{SessionSummary: "Parser rewritten.", Transcripts: []string{"user: never use regexes here\nassistant: ok"}},
	}
	resp, err := e.m.Checkpoint(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	eps := rec.episodes()
	if len(eps) != 1 || len(resp.Checkpoints) != 1 {
		t.Fatalf("curated %d episodes, answered %d results", len(eps), len(resp.Checkpoints))
	}
	ep, r := eps[0], resp.Checkpoints[0]
	if !reflect.DeepEqual(ep.Scope, []string{"repo:demo"}) || !reflect.DeepEqual(ep.Tags, []string{"seed"}) || ep.Note != req.Note ||
		ep.Trigger != TriggerEvidence || len(ep.Events) != 3 {
		t.Errorf("episode = %+v", ep)
	}
	if r.SessionID != ep.SessionID || r.Trigger != TriggerEvidence || r.Events != 3 || r.MedallionID != "m-"+ep.SessionID || r.Version != 1 {
		t.Errorf("result = %+v", r)
	}
	for _, bad := range []api.CheckpointRequest{
		{Evidence: req.Evidence},
		{Nodes: []string{"repo:demo"}},
		{Nodes: []string{"repo:demo"}, SessionID: "s1", Evidence: req.Evidence},
		{Nodes: []string{"repo:demo"}, Evidence: &api.Evidence{Transcripts: []string{" \n"}}},
	} {
		if _, err := e.m.Checkpoint(context.Background(), bad); !errors.Is(err, ErrInvalidEvidence) {
			t.Errorf("Checkpoint(%+v) = %v, want ErrInvalidEvidence", bad, err)
		}
	}
	if n := len(rec.episodes()); n != 1 {
		t.Errorf("bad requests reached the curator: %d episodes", n)
	}
}

// TestLongEpisodeInParts: a buffer longer than MaxEpisodeEvents reaches the
// curator in parts, each cleared after it was curated.
func TestLongEpisodeInParts(t *testing.T) {
	rec := &recording{}
	e := newEnv(t, rec.curator(), Policy{MinEvents: 1})
	n := MaxEpisodeEvents + 123
	events := make([]transcript.Event, n)
	for i := range events {
		events[i] = prompt("long", fmt.Sprint(i))
	}
	e.ingest(events...)
	resp, err := e.m.Checkpoint(context.Background(), api.CheckpointRequest{SessionID: "long"})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Checkpoints[0]; r.Events != n || r.Error != "" {
		t.Errorf("result = %+v, want %d events", r, n)
	}
	eps := rec.episodes()
	if len(eps) != 2 || len(eps[0].Events) != MaxEpisodeEvents || len(eps[1].Events) != 123 || eps[1].Events[0].Event.Text != fmt.Sprint(MaxEpisodeEvents) {
		t.Errorf("curated %d parts", len(eps))
	}
	if b := e.buffered("long"); b != 0 {
		t.Errorf("buffered = %d", b)
	}
}
