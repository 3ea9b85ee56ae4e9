// Package ingest turns the new lines of watched transcript files into
// stored events, exactly once.
//
// One goroutine (Run) does all the work, so that the store has a single
// writer and a file's batches are committed in order. The watcher tells it
// which files may have new data (Notify) or are gone (Gone); both only queue
// the path and return at once, and a path already queued is not queued
// twice. For each queued path the pipeline:
//
//  1. identifies the file by (device, inode), so a renamed file keeps its
//     state and a file replaced at the same path starts over;
//  2. reads the complete lines after the stored offset (package tail), in
//     batches bounded by the store's batch limits;
//  3. parses each line with the file's parser (package transcript; one per
//     file, kept in memory, the format detected from the first line for
//     watches with format "auto" and remembered in the file state);
//  4. redacts every text-bearing field (package redact);
//  5. resolves each session's scope from its cwd (package scope);
//  6. stores the events, the new offset and the parser's state in ONE
//     store.Ingest call, so a crash can lose or repeat nothing: events
//     whose ids were stored before are dropped by the store, the offset
//     never moves past lines whose events were not stored, and a parser
//     resumed at the offset remembers what the one that stopped there did.
//
// A batch of several lines the store refuses as too large is read again
// with half as many lines, so that each commit carries the parser state of
// its own end (see below); a single line with many events is stored in
// parts committed with the offset left before the line: a crash between the
// parts replays the line and the store drops the part it already holds.
// Any other store failure (a full disk) leaves the offset where it was; the
// file is retried with growing back-off and nothing is lost. Per-file
// problems are logged and counted, never fatal.
//
// A last line without a newline is normally a line still being written and
// waits for its '\n'. Some files simply end that way (exports, an agent that
// died between writing a record and its newline), so once such a tail has
// not changed for Options.QuietTail and holds valid JSON, it is ingested as
// the file's last line: the offset then stands at the end of the file
// rather than past a '\n'. If the file grows later, the newline that
// finally ends the tail reads as an empty line, and records glued to it as
// a new line, so nothing is lost or repeated either way.
//
// Parsers remember things that decide what later lines mean (a Claude Code
// prompt queued while the agent was busy, whose later delivery is not a new
// prompt; a Codex file's session id and cwd; a tool call its result is
// named after). One rule keeps that exactly once across a crash, for every
// adapter: the parser's state (transcript.Stateful) is stored in the same
// store.Ingest call as the offset it belongs to, and a parser is only ever
// created to read from the stored offset with the state stored with it (or
// from offset 0, fresh). A parser whose batch fails to commit has read lines
// that will be read again, so it is dropped and recreated the same way. A
// state that cannot be read or saved is logged, counted
// (SkipParserStateUnreadable, SkipParserStateUnsaved) and treated as
// absent: the file goes on with a fresh parser, never stops.
package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/redact"
	"github.com/medallionhq/medallion/internal/scope"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/tail"
	"github.com/medallionhq/medallion/internal/transcript"
)

// FormatAuto is the watch format that detects each file's format from its
// first line.
const FormatAuto = "auto"

// Skip reasons the pipeline adds to those of package tail and the parsers.
const (
	// SkipUndetected: a line of an "auto" file before any line whose format
	// could be recognised.
	SkipUndetected = "undetected_format"
	// SkipNoSession: an event whose session id is unknown, or unusable as
	// a key.
	SkipNoSession = "no_session"
	// SkipEventTooLarge: an event too large for the store on its own.
	SkipEventTooLarge = "event_too_large"
	// SkipParserStateUnreadable: a stored parser state its parser refused
	// (another version or format, damaged); the parser started fresh.
	SkipParserStateUnreadable = "parser_state_unreadable"
	// SkipParserStateUnsaved: a parser state that could not be encoded or
	// was over store.MaxParserState; none was stored with the offset.
	SkipParserStateUnsaved = "parser_state_unsaved"
)

// Defaults for Options.
const (
	DefaultMaxBatchBytes = 2 << 20
	// DefaultGoneGrace is how long a file that vanished keeps its state,
	// waiting for the watcher to report it under a new name.
	DefaultGoneGrace = 2 * time.Second
	// DefaultQuietTail is how long an unterminated last line must stay
	// unchanged before it is taken as complete.
	DefaultQuietTail = 5 * time.Second
	minRetry         = time.Second
	maxRetry         = time.Minute
	maxErrors        = 10

	// pausePoll is how often a paused pipeline asks whether it may go on.
	pausePoll = time.Second
)

// batchEvents is the event count at which a batch stops taking lines: half
// the store's limit, because a single line may still add several events.
const batchEvents = store.MaxIngestEvents / 2

// Watch is a watch root as the pipeline needs it.
type Watch struct {
	// Name identifies the root in Notify and in file states.
	Name string
	// Format is a transcript format or FormatAuto.
	Format string
}

// Options configures a Pipeline.
type Options struct {
	// Watches lists the roots whose files Notify may report.
	Watches []Watch
	// Scope resolves session cwds to graph nodes; nil gives no scopes.
	Scope *scope.Resolver
	// Redactor removes secrets; nil means redact.Default.
	Redactor *redact.Redactor
	// MaxLine is the longest line read (tail.DefaultMaxLine when 0).
	MaxLine int
	// MaxText and MaxMessageText bound event texts (transcript defaults
	// when 0).
	MaxText, MaxMessageText int
	// MaxBatchBytes bounds the bytes of lines read per batch
	// (DefaultMaxBatchBytes when 0; at most a quarter of
	// store.MaxIngestBytes).
	MaxBatchBytes int
	// GoneGrace is how long a vanished file keeps its state
	// (DefaultGoneGrace when 0).
	GoneGrace time.Duration
	// QuietTail is how long an unterminated last line must stay unchanged
	// to be ingested as complete (DefaultQuietTail when 0).
	QuietTail time.Duration
	// OnIngest, when set, is called after each committed batch with what
	// the store reported and the batch's events, by one goroutine at a
	// time and in commit order (not always Run's: see dispatch); it must
	// return quickly (the checkpoint manager's Observe does).
	OnIngest func(store.IngestResult, []transcript.Event)
	// Paused, when set, is asked before each notice and each round of
	// retries: while it reports true (the store's disk is full) the
	// pipeline reads nothing, keeps its notices queued and asks again
	// every second. Whoever pauses it logs why; a batch the store refuses
	// with store.ErrDiskFull is retried once the pause ends, without a
	// log line per file.
	Paused func() bool
	// Logger receives the pipeline's logs; nil discards them.
	Logger hclog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// totaler is implemented by stores that can sum their episode buffers
// cheaply (store.Badger); Status uses it when available.
type totaler interface {
	EpisodeTotals(ctx context.Context) (sessions int, buffered, checkpoints int64, err error)
}

// Pipeline ingests transcript files. Notify, Gone and Status are safe for
// concurrent use; Run must be called once.
type Pipeline struct {
	st      store.EpisodeStore
	opts    Options
	log     hclog.Logger
	redact  *redact.Redactor
	watches map[string]Watch
	now     func() time.Time

	// The queue of notices, filled by Notify and Gone.
	qmu     sync.Mutex
	queue   []notice
	queued  map[notice]bool
	wake    chan struct{}
	started atomic.Bool
	loaded  bool // set by Load, before Run starts

	// State owned by the Run goroutine.
	files   map[string]*file  // by key "<dev>:<ino>"
	paths   map[string]string // path → key
	checks  map[string]time.Time
	retries map[string]time.Time
	tails   map[string]time.Time // files with an unterminated tail to look at
	backoff map[string]time.Duration
	// inflight is the batch being committed by its own goroutine while
	// this one reads the next file (see dispatch); nil when none is.
	inflight *job

	// Figures for Status.
	bytes, lines, events, duplicates, redactions atomic.Int64
	backlog, tracked                             atomic.Int64
	lastIngest                                   atomic.Int64 // unix nanos
	sweptAt                                      time.Time    // see idle.go; Run's goroutine
	smu                                          sync.Mutex
	skipped                                      map[string]int64
	errs                                         []string
}

type notice struct {
	watch, path string
	gone        bool
}

// file is what the pipeline keeps in memory about one file.
type file struct {
	state  store.FileState
	size   int64 // size seen by the last Identify
	parser transcript.Parser
	fileID string // Position.File for the parser: see fileIdentity
	// resume is the parser state stored with state.Offset, read before a
	// batch that has to create the parser; the parser created for the
	// line at state.Offset starts from it.
	resume []byte
	// stateSum is the hash of the parser state stored with state.Offset
	// ("" while unknown), so a batch that leaves the state as it was does
	// not write it again.
	stateSum string
	skips    map[string]int64
	// contrib is this file's share of the backlog figure.
	contrib int64
	// read is when the file was last read to its end (see idle.go).
	read time.Time
	// split, when positive, is how many lines the next read may take: an
	// asynchronous commit found its batch too large (see finish).
	split int
}

// New returns a pipeline storing into st.
func New(st store.EpisodeStore, opts Options) (*Pipeline, error) {
	p := &Pipeline{
		st:      st,
		opts:    opts,
		log:     opts.Logger,
		redact:  opts.Redactor,
		watches: map[string]Watch{},
		now:     opts.Now,
		queued:  map[notice]bool{},
		wake:    make(chan struct{}, 1),
		files:   map[string]*file{},
		paths:   map[string]string{},
		checks:  map[string]time.Time{},
		retries: map[string]time.Time{},
		tails:   map[string]time.Time{},
		backoff: map[string]time.Duration{},
		skipped: map[string]int64{},
	}
	if p.log == nil {
		p.log = hclog.NewNullLogger()
	}
	if p.redact == nil {
		p.redact = redact.Default
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.opts.MaxLine <= 0 {
		p.opts.MaxLine = tail.DefaultMaxLine
	}
	if p.opts.MaxBatchBytes <= 0 {
		p.opts.MaxBatchBytes = DefaultMaxBatchBytes
	}
	p.opts.MaxBatchBytes = min(p.opts.MaxBatchBytes, store.MaxIngestBytes/4)
	if p.opts.GoneGrace <= 0 {
		p.opts.GoneGrace = DefaultGoneGrace
	}
	if p.opts.QuietTail <= 0 {
		p.opts.QuietTail = DefaultQuietTail
	}
	for _, w := range opts.Watches {
		if w.Format != FormatAuto {
			if _, err := transcript.New(transcript.Format(w.Format), transcript.Options{}); err != nil {
				return nil, fmt.Errorf("watch %s: %w", w.Name, err)
			}
		}
		p.watches[w.Name] = w
	}
	return p, nil
}

// Notify queues path, found under the watch root named watch, for reading.
// It never blocks.
func (p *Pipeline) Notify(watch, path string) { p.enqueue(notice{watch: watch, path: path}) }

// Gone tells the pipeline that path no longer exists (deleted or renamed
// away). Its state is dropped after a grace period unless the file shows up
// under another path meanwhile. It never blocks.
func (p *Pipeline) Gone(watch, path string) { p.enqueue(notice{watch: watch, path: path, gone: true}) }

func (p *Pipeline) enqueue(n notice) {
	p.qmu.Lock()
	if !p.queued[n] {
		p.queued[n] = true
		p.queue = append(p.queue, n)
	}
	p.qmu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *Pipeline) dequeue() (notice, bool) {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	if len(p.queue) == 0 {
		return notice{}, false
	}
	n := p.queue[0]
	p.queue[0] = notice{}
	p.queue = p.queue[1:]
	if len(p.queue) == 0 {
		p.queue = nil // let the backing array go after a burst
	}
	delete(p.queued, n)
	return n, true
}

// Pending reports how many notices wait in the queue.
func (p *Pipeline) Pending() int {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	return len(p.queue)
}

// Load reads every stored file state into memory. Run calls it when it was
// not called before; calling it first lets a caller fail at start-up.
func (p *Pipeline) Load(ctx context.Context) error {
	if p.loaded {
		return nil
	}
	if err := p.load(ctx); err != nil {
		return err
	}
	p.loaded = true
	return nil
}

// Run processes notices until ctx ends, after loading the stored file
// states if Load was not called. A batch being stored when ctx ends is
// finished first, so shutting down never wastes a read. Run returns nil
// after ctx ended, or the error that kept it from starting.
func (p *Pipeline) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("ingest pipeline already running")
	}
	if err := p.Load(ctx); err != nil {
		return err
	}
	// Store calls finish even when ctx ends mid-batch.
	work := context.WithoutCancel(ctx)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	defer p.settle() // the batch being stored when ctx ends is finished
	for {
		if p.paused() {
			p.settle()
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(pausePoll):
			}
			continue
		}
		p.drain(ctx, work)
		if ctx.Err() != nil {
			return nil
		}
		p.due(work)
		next := p.nextDue()
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if !next.IsZero() {
			timer.Reset(max(next.Sub(p.now()), time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// drain processes the queued notices until none is left and no commit is
// in flight, ctx ends or the pipeline is paused.
func (p *Pipeline) drain(ctx, work context.Context) {
	for ctx.Err() == nil && !p.paused() {
		n, ok := p.dequeue()
		switch {
		case !ok && p.inflight == nil:
			return
		case !ok:
			p.settle() // its file may have more to read
		case n.gone:
			p.goneNotice(n)
		default:
			p.process(ctx, work, n.watch, n.path)
		}
	}
}

func (p *Pipeline) paused() bool { return p.opts.Paused != nil && p.opts.Paused() }

// load reads every stored file state, so that a file's state is in memory
// before its first notice, and refreshes their sizes for the backlog.
func (p *Pipeline) load(ctx context.Context) error {
	states, err := p.st.FileStates(ctx)
	if err != nil {
		return fmt.Errorf("load file states: %w", err)
	}
	skipped := 0
	for _, s := range states {
		if _, ok := p.watches[s.Watch]; !ok {
			// Found through a watch that is no longer configured: left
			// in the store, and read from there if a configured watch
			// reports the file.
			skipped++
			continue
		}
		f := &file{state: s, size: s.Size}
		p.files[s.Key] = f
		p.paths[s.Path] = s.Key
		p.tracked.Add(1)
		if dev, ino, size, err := tail.Identify(s.Path); err == nil && tail.Key(dev, ino) == s.Key {
			f.size = size
		} else {
			// Deleted or replaced while the daemon was down, or renamed:
			// the watcher's first scan reports it under its new name
			// before the check runs, if it still exists.
			p.checks[s.Key] = p.now().Add(p.opts.GoneGrace)
		}
		p.updateBacklog(f)
	}
	if len(states) > 0 {
		p.log.Info("loaded file states", "files", len(states)-skipped, "of_other_watches", skipped)
	}
	p.scrubStates(ctx, states)
	return nil
}

// scrubStates rewrites the stored parser states saved before states were
// redacted. A parser keeps a pending tool call's command and paths, and
// older builds stored them as they were; such a state was rewritten only
// when its file was read again, which for a finished session never comes.
// Each state not marked scrubbed (transcript.StateScrubbed, which reads
// only its header: this runs at every start) is restored into a parser and
// saved again through the redactor, marked, with the file's state
// unchanged. A state that cannot be read or stored stays as it is: its
// file's next read replaces it.
func (p *Pipeline) scrubStates(ctx context.Context, states []store.FileState) {
	scrubbed := 0
	// One parser per format: UnmarshalState replaces all it remembers.
	parsers := map[string]transcript.Stateful{}
	for _, s := range states {
		if s.Offset == 0 || s.Format == "" {
			continue
		}
		sp, ok := parsers[s.Format]
		if !ok {
			if parser, err := transcript.New(transcript.Format(s.Format), transcript.Options{Redact: p.redact.Scrub}); err == nil {
				sp, _ = parser.(transcript.Stateful)
			}
			parsers[s.Format] = sp
		}
		if sp == nil {
			continue
		}
		old, err := p.st.ParserState(ctx, s.Key)
		if err != nil || len(old) == 0 || transcript.StateScrubbed(old) || sp.UnmarshalState(old) != nil {
			continue
		}
		state, err := sp.MarshalState()
		if err != nil {
			continue
		}
		if _, err := p.st.Ingest(ctx, store.IngestBatch{File: s, ParserState: state}); err != nil {
			p.log.Warn("parser state not scrubbed; its file's next read replaces it", "path", s.Path, "error", err)
			continue
		}
		scrubbed++
	}
	if scrubbed > 0 {
		p.log.Info("scrubbed stored parser states written by an older build", "files", scrubbed)
	}
}

// due runs the checks and retries whose time has come.
func (p *Pipeline) due(ctx context.Context) {
	p.settle() // the checks below look at file states
	now := p.now()
	p.sweepParsers(now)
	for key, at := range p.checks {
		if !now.Before(at) {
			delete(p.checks, key)
			p.check(ctx, key)
		}
	}
	for key, at := range p.retries {
		if !now.Before(at) {
			delete(p.retries, key)
			if f := p.files[key]; f != nil {
				p.enqueue(notice{watch: f.state.Watch, path: f.state.Path})
			}
		}
	}
	for key, at := range p.tails {
		if !now.Before(at) {
			delete(p.tails, key)
			if f := p.files[key]; f != nil {
				p.quietTail(ctx, key, f)
			}
		}
	}
}

func (p *Pipeline) nextDue() time.Time {
	var next time.Time
	for _, m := range []map[string]time.Time{p.checks, p.retries, p.tails} {
		for _, at := range m {
			if next.IsZero() || at.Before(next) {
				next = at
			}
		}
	}
	return next
}

// goneNotice schedules a check of the file last seen at n.path.
func (p *Pipeline) goneNotice(n notice) {
	if key, ok := p.paths[n.path]; ok {
		p.checks[key] = p.now().Add(p.opts.GoneGrace)
	}
}

// check drops the state of a file that is no longer at its last known path
// (and was not seen at another one since it was scheduled).
func (p *Pipeline) check(ctx context.Context, key string) {
	f := p.files[key]
	if f == nil {
		return
	}
	dev, ino, _, err := tail.Identify(f.state.Path)
	if err == nil && tail.Key(dev, ino) == key {
		return // still there (a Gone for a path that came back)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.fail("identify file", f.state.Path, err)
		return
	}
	if !p.finishRenamed(ctx, key, f) {
		return
	}
	p.forget(ctx, key, f, "file gone")
}

// forget drops a file's state in memory and in the store.
func (p *Pipeline) forget(ctx context.Context, key string, f *file, why string) {
	if err := p.st.DeleteFileState(ctx, key); err != nil {
		p.fail("delete file state", f.state.Path, err)
		p.checks[key] = p.now().Add(p.opts.GoneGrace)
		return
	}
	p.log.Info("stopped tracking file", "path", f.state.Path, "reason", why, "offset", f.state.Offset)
	delete(p.files, key)
	if p.paths[f.state.Path] == key {
		delete(p.paths, f.state.Path)
	}
	delete(p.retries, key)
	delete(p.backoff, key)
	delete(p.tails, key)
	f.size, f.state.Offset = 0, 0
	p.updateBacklog(f)
	p.tracked.Add(-1)
}

// process reads what is new in one file and stores it, batch by batch,
// with work as the store calls' context. When stop ends between two
// batches, the path goes back in the queue for the next run. A batch
// whose commit is dispatched ends the call: the file goes back in the
// queue when it has more to read (see finish), after the files waiting
// there, so that reading one file overlaps storing another.
func (p *Pipeline) process(stop, work context.Context, watch, path string) {
	w, ok := p.watches[watch]
	if !ok {
		p.log.Warn("notice for an unknown watch", "watch", watch, "path", path)
		return
	}
	dev, ino, size, err := tail.Identify(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			p.goneNotice(notice{watch: watch, path: path})
			return
		}
		p.fail("identify file", path, err)
		return
	}
	key := tail.Key(dev, ino)
	if _, waiting := p.retries[key]; waiting {
		return // backing off after a store failure; the retry reads it
	}
	f := p.files[key]
	if f == nil {
		stored, err := p.st.FileState(work, key)
		if err != nil {
			p.fail("read file state", path, err)
			return
		}
		if stored != nil {
			f = &file{state: *stored, size: stored.Size}
		} else {
			f = &file{state: store.FileState{Key: key, Path: path, Dev: dev, Ino: ino, Watch: watch}}
		}
		p.files[key] = f
		p.tracked.Add(1)
	}
	if p.inflight != nil && p.inflight.b.f == f {
		// Its last batch is being committed: what follows starts from
		// the state that commit leaves, and waits out its back-off if
		// the commit failed.
		p.settle()
		if _, waiting := p.retries[key]; waiting {
			return
		}
	}
	if old, ok := p.paths[path]; ok && old != key {
		// Another file now has this path: the old one was replaced or
		// renamed away. Check it once the watcher had time to report
		// its new name.
		p.checks[old] = p.now().Add(p.opts.GoneGrace)
	}
	if f.state.Path != path {
		if f.state.Path != "" && p.paths[f.state.Path] == key {
			delete(p.paths, f.state.Path)
			p.log.Info("file renamed", "from", f.state.Path, "to", path, "offset", f.state.Offset)
		}
		f.state.Path = path
	}
	p.paths[path] = key
	delete(p.checks, key)
	f.state.Watch = watch
	f.size = size
	p.updateBacklog(f)
	if size == f.state.Offset && f.state.Size == size && f.state.Fingerprint != "" {
		return // nothing new; a rewrite to the very same size shows at the next append
	}
	for {
		more, async, err := p.batch(work, w, f, true)
		switch {
		case async:
			return // finish does the rest once the commit is done
		case err != nil:
			p.retryLater(key, f, err)
			return
		case !more:
			p.readAll(key, f)
			return
		case stop.Err() != nil:
			p.enqueue(notice{watch: watch, path: f.state.Path})
			return
		}
	}
}

// readAll notes that f was read as far as it can be for now.
func (p *Pipeline) readAll(key string, f *file) {
	delete(p.backoff, key)
	if f.state.Offset < f.state.Size {
		// An unterminated last line: look again once it had time to be
		// finished.
		p.tails[key] = p.now().Add(p.opts.QuietTail)
	} else {
		delete(p.tails, key)
		p.readToEnd(f)
	}
}

// job is a batch committed on its own goroutine (see dispatch).
type job struct {
	key   string
	b     *pending
	bytes int64 // what the batch consumed of the file
	more  bool  // the file has more to read after it
	done  chan error
}

// dispatch commits a batch of f on a goroutine of its own, so that reading
// and parsing the next file overlaps redacting and storing this one (issue
// 12: a backfill uses both cores). One commit is in flight at a time, so
// the store still has one ingesting writer and OnIngest sees batches in
// commit order; a file is never read again before its commit is settled,
// so its batches are committed in order, each from the state the last one
// left, and exactly-once holds as for a commit made in place.
func (p *Pipeline) dispatch(ctx context.Context, j *job, lines []line, end int64, nLines int, skips map[string]int64) {
	p.settle()
	j.done = make(chan error, 1)
	p.inflight = j
	go func() { j.done <- j.b.run(ctx, lines, end, nLines, skips) }()
}

// settle waits for the commit in flight, if any, and applies its outcome.
func (p *Pipeline) settle() {
	if j := p.inflight; j != nil {
		p.inflight = nil
		p.finish(j, <-j.done)
	}
}

// finish applies a dispatched commit's outcome to its file, as read and
// process do after a commit made in place. A file with more to read goes
// back in the queue, after the files waiting there.
func (p *Pipeline) finish(j *job, err error) {
	f := j.b.f
	// What was committed, all of it or the parts before a failure.
	f.state, f.stateSum = j.b.state, j.b.sum
	if err != nil {
		f.parser = nil // the lines it read will be read again
		var split *errSplit
		if errors.As(err, &split) {
			f.split = split.lines
			p.enqueue(notice{watch: f.state.Watch, path: f.state.Path})
			return
		}
		p.retryLater(j.key, f, err)
		return
	}
	p.account(f, j.bytes, j.b.redactions)
	f.size = max(f.size, f.state.Size)
	p.updateBacklog(f)
	if j.more {
		p.enqueue(notice{watch: f.state.Watch, path: f.state.Path})
		return
	}
	p.readAll(j.key, f)
}

// retryLater records a failed batch and schedules the file again.
func (p *Pipeline) retryLater(key string, f *file, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		p.checks[key] = p.now().Add(p.opts.GoneGrace)
		return
	}
	if errors.Is(err, store.ErrDiskFull) {
		// Nothing was stored and the offset stayed: read the file again
		// once Paused lets the pipeline go on, with no back-off to wait
		// out after the disk had room again.
		p.retries[key] = p.now().Add(minRetry)
		return
	}
	d := p.backoff[key] * 2
	d = min(max(d, minRetry), maxRetry)
	p.backoff[key] = d
	p.retries[key] = p.now().Add(d)
	p.fail("ingest file", f.state.Path, err, "retry_in", d.String())
}

// fail logs a per-file problem at Error and keeps it for Status.
func (p *Pipeline) fail(what, path string, err error, kv ...any) {
	p.log.Error(what+" failed", append([]any{"path", path, "error", err}, kv...)...)
	msg := fmt.Sprintf("%s %s: %v", what, path, err)
	p.smu.Lock()
	p.errs = append([]string{p.now().UTC().Format(time.RFC3339) + " " + msg}, p.errs...)
	if len(p.errs) > maxErrors {
		p.errs = p.errs[:maxErrors]
	}
	p.smu.Unlock()
}

// line is one delivered line's events; start is the line's offset.
type line struct {
	start  int64
	events []transcript.Event
}

// errBatchFull makes tail.Read stop before a line: the batch is full.
var errBatchFull = errors.New("batch full")

// errSplit says a batch of several lines was too large for the store: it
// is read again with at most lines lines.
type errSplit struct{ lines int }

func (e *errSplit) Error() string {
	return fmt.Sprintf("batch too large: read again with %d lines", e.lines)
}

// batch reads and stores one batch of f; more says that more may follow.
// A batch the store refuses as too large is read again with half as many
// lines, rather than committed in parts: the parser state to store with
// the offset of a part's end is the one after that part's last line, and
// the parser has already read past it. Reading again from the stored
// offset with the stored state recreates it exactly.
//
// With mayDispatch, a batch read whole is committed on a goroutine of its
// own (async, see dispatch); one read again in smaller parts is committed
// in place.
func (p *Pipeline) batch(ctx context.Context, w Watch, f *file, mayDispatch bool) (more, async bool, err error) {
	maxLines := f.split
	f.split = 0
	for {
		more, async, err := p.read(ctx, w, f, maxLines, mayDispatch)
		var split *errSplit
		if !errors.As(err, &split) {
			return more, async, err
		}
		maxLines = split.lines
	}
}

// read reads and stores one batch of at most maxLines parsed lines (0: no
// limit) of f; async says its commit was dispatched.
func (p *Pipeline) read(ctx context.Context, w Watch, f *file, maxLines int, mayDispatch bool) (more, async bool, err error) {
	if p.isWhole(w, f) {
		more, err := p.readWhole(ctx, w, f) // see whole.go
		return more, false, err
	}
	if err := p.loadResume(ctx, f); err != nil {
		return false, false, err
	}
	prev := &tail.Position{
		Dev: f.state.Dev, Ino: f.state.Ino, Fingerprint: f.state.Fingerprint,
		FingerprintLen: f.state.FingerprintLen, Offset: f.state.Offset, Size: f.state.Size,
	}
	if f.state.Fingerprint == "" && f.state.Offset == 0 {
		prev = nil // never read
	}
	var (
		lines     []line
		nEvents   int
		restarted bool
		seen      bool
	)
	f.skips = map[string]int64{}
	res, err := tail.Read(f.state.Path, prev, tail.Options{MaxLine: p.opts.MaxLine, MaxBatchBytes: p.opts.MaxBatchBytes}, func(l tail.Line) error {
		if nEvents >= batchEvents || maxLines > 0 && len(lines) >= maxLines {
			return errBatchFull
		}
		if !seen {
			seen = true
			if prev != nil && l.Offset < prev.Offset {
				// Reading started over (truncated, rewritten): the
				// parser's memory of the old content must not judge the
				// new one.
				restarted = true
				f.parser, f.fileID, f.state.Format, f.state.SessionID = nil, "", "", ""
			}
		}
		kept, ok := p.parseLine(w, f, l.Data, l.Offset)
		if !ok {
			return nil
		}
		lines = append(lines, line{start: l.Offset, events: kept})
		nEvents += len(kept)
		return nil
	})
	if err != nil && !errors.Is(err, errBatchFull) {
		f.parser = nil // the lines parsed so far will be parsed again
		return false, false, fmt.Errorf("read: %w", err)
	}
	if res.Restart == tail.RestartReplaced {
		// Another file took the path between Identify and Read: it has
		// its own key, so identify it again.
		f.parser = nil
		p.enqueue(notice{watch: w.Name, path: f.state.Path})
		return false, false, nil
	}
	if res.Restart != "" {
		p.log.Info("file starts over", "path", f.state.Path, "reason", res.Restart, "old_offset", f.state.Offset, "generation", f.state.Generation+1)
		if !restarted {
			f.parser, f.fileID, f.state.Format, f.state.SessionID = nil, "", "", ""
		}
	}
	for reason, n := range res.Skipped {
		f.skips[reason] += int64(n)
	}
	next := f.state
	if res.Restart != "" {
		next.Generation++
		next.Lines, next.Events, next.Skipped = 0, 0, nil
	}
	next.Dev, next.Ino = res.Pos.Dev, res.Pos.Ino
	next.Fingerprint, next.FingerprintLen, next.Size = res.Pos.Fingerprint, res.Pos.FingerprintLen, res.Pos.Size
	start := f.state.Offset
	if res.Restart != "" {
		start = 0
	}
	if res.Restart != "" || restarted {
		// The stored state belongs to the old content.
		f.resume = nil
	}
	if res.Pos.Offset == start && len(lines) == 0 && res.Restart == "" && len(f.skips) == 0 &&
		f.state.Fingerprint == next.Fingerprint && f.state.FingerprintLen == next.FingerprintLen {
		// Nothing consumed and nothing learned: no write needed.
		f.state.Size = next.Size
		return false, false, nil
	}
	more = res.More || errors.Is(err, errBatchFull)
	b := p.newPending(f, next, start, res.Pos.Offset)
	if maxLines == 0 && mayDispatch {
		p.dispatch(ctx, &job{key: f.state.Key, b: b, bytes: res.Bytes, more: more}, lines, res.Pos.Offset, res.Lines, f.skips)
		return more, true, nil
	}
	if err := p.commitNow(ctx, b, lines, res.Pos.Offset, res.Lines, f.skips); err != nil {
		return false, false, err
	}
	p.account(f, res.Bytes, b.redactions)
	f.size = max(f.size, f.state.Size)
	p.updateBacklog(f)
	return more, false, nil
}

// parseLine parses and checks the events of one line (pending.run redacts
// them); ok is false when the file's format is not known yet (the line is
// counted as skipped).
func (p *Pipeline) parseLine(w Watch, f *file, data []byte, offset int64) (events []transcript.Event, ok bool) {
	parser, ok := p.parser(w, f, data, offset)
	if !ok {
		f.skips[SkipUndetected]++
		return nil, false
	}
	events = parser.ParseLine(data, transcript.Position{File: f.fileID, Path: f.state.Path, Offset: offset})
	kept := events[:0]
	for i := range events {
		e := &events[i]
		if e.SessionID == "" {
			e.SessionID = transcript.SessionFromPath(f.state.Path).SessionID
		}
		e.SessionID = fileSession(f, e.SessionID)
		if e.ID == "" || e.SessionID == "" || len(e.SessionID) > store.MaxSessionIDLen || hasNUL(e.SessionID) {
			f.skips[SkipNoSession]++
			continue
		}
		kept = append(kept, *e)
	}
	return kept, true
}

// quietTail ingests f's unterminated last line once it has stayed the same
// for QuietTail and holds valid JSON (see the package comment). A tail over
// MaxLine is skipped and counted, as a terminated one would be.
func (p *Pipeline) quietTail(ctx context.Context, key string, f *file) {
	w, ok := p.watches[f.state.Watch]
	if !ok {
		return
	}
	dev, ino, size, err := tail.Identify(f.state.Path)
	if err != nil || tail.Key(dev, ino) != key || size != f.state.Size {
		// Gone, replaced or changed since the last read: the normal path
		// deals with it.
		p.enqueue(notice{watch: f.state.Watch, path: f.state.Path})
		return
	}
	fi, err := os.Stat(f.state.Path)
	if err != nil {
		return
	}
	if wait := fi.ModTime().Add(p.opts.QuietTail).Sub(p.now()); wait > 0 {
		p.tails[key] = p.now().Add(wait)
		return
	}
	start, n := f.state.Offset, size-f.state.Offset
	if n <= 0 {
		return
	}
	if err := p.loadResume(ctx, f); err != nil {
		p.retryLater(key, f, err)
		return
	}
	f.skips = map[string]int64{}
	var lines []line
	if n > int64(p.opts.MaxLine) {
		f.skips[tail.SkipLineTooLong]++
	} else {
		buf := make([]byte, n)
		fh, err := os.Open(f.state.Path)
		if err != nil {
			return
		}
		_, err = fh.ReadAt(buf, start)
		fh.Close()
		if err != nil || bytes.IndexByte(buf, '\n') >= 0 {
			p.enqueue(notice{watch: f.state.Watch, path: f.state.Path})
			return
		}
		data := bytes.TrimRight(buf, "\r")
		switch {
		case len(bytes.TrimSpace(data)) == 0:
		case bytes.IndexByte(data, 0) >= 0:
			f.skips[tail.SkipBinary]++
		case !jsonValues(data):
			// Most likely a record whose writer died half-way: leave it;
			// status keeps showing it as backlog.
			p.log.Debug("unterminated last line is not complete JSON; leaving it", "path", f.state.Path, "bytes", n)
			return
		default:
			if events, ok := p.parseLine(w, f, data, start); ok {
				lines = []line{{start: start, events: events}}
			}
		}
	}
	b := p.newPending(f, f.state, start, size)
	nLines := 0
	if len(lines) > 0 {
		nLines = 1
	}
	if err := p.commitNow(ctx, b, lines, size, nLines, f.skips); err != nil {
		p.retryLater(key, f, err)
		return
	}
	if len(lines) == 0 && len(f.skips) > 0 {
		// Over max_line or binary: consumed, not ingested, and the log
		// must not say otherwise.
		p.log.Warn("skipped an unterminated last line", "path", f.state.Path, "bytes", n, "reasons", slices.Sorted(maps.Keys(f.skips)))
	} else {
		p.log.Info("took an unterminated last line as complete", "path", f.state.Path, "bytes", n)
	}
	p.account(f, n, b.redactions)
	p.updateBacklog(f)
}

// account adds a committed read of f to the pipeline's figures: the bytes
// it consumed, the secrets it redacted, what it skipped and why.
func (p *Pipeline) account(f *file, n, redactions int64) {
	p.bytes.Add(n)
	p.redactions.Add(redactions)
	p.smu.Lock()
	for reason, c := range f.skips {
		p.skipped[reason] += c
	}
	p.smu.Unlock()
}

// jsonValues reports whether b holds one or more complete JSON values and
// nothing else (glued records included).
func jsonValues(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	n := 0
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return n > 0
		}
		if err != nil {
			return false
		}
		n++
	}
}

// pending is one batch being committed, possibly in parts.
//
// A pending batch may be committed on another goroutine than the one that
// read it (see dispatch): it carries what the commit needs of its file and
// what it changes, which finish applies. Only the file's skips map is
// shared, and nothing reads it until the commit is settled.
type pending struct {
	p     *Pipeline
	f     *file
	next  store.FileState // the state after the whole batch, before totals and offset
	start int64           // the offset the batch starts from
	end   int64           // the offset the whole batch ends at
	at    time.Time       // when the batch was read: its UpdatedAt

	// state and sum are the file's stored state and parser state hash,
	// moved by each part committed.
	state store.FileState
	sum   string
	// endState is the parser's state at end, taken when the batch was
	// read (the parser may read on before the commit), and endSum its
	// hash.
	endState []byte
	endSum   string
	// redactions counts the secrets run replaced.
	redactions int64
}

// newPending starts a batch of f read from start to end; next is the
// file's state after it, before totals and offset.
func (p *Pipeline) newPending(f *file, next store.FileState, start, end int64) *pending {
	b := &pending{p: p, f: f, next: next, start: start, end: end, at: p.now(), state: f.state, sum: f.stateSum}
	b.endState = b.parserState()
	b.endSum = stateSum(b.endState)
	return b
}

// commitNow commits a batch on the calling goroutine, once the commit in
// flight, if any, is settled, and moves f's state to what it stored.
func (p *Pipeline) commitNow(ctx context.Context, b *pending, lines []line, end int64, nLines int, skips map[string]int64) error {
	p.settle()
	err := b.run(ctx, lines, end, nLines, skips)
	b.f.state, b.f.stateSum = b.state, b.sum
	if err != nil {
		b.f.parser = nil // the lines it read will be read again
	}
	return err
}

// run redacts the batch's events in place (see redactEvent), then commits
// them.
func (b *pending) run(ctx context.Context, lines []line, end int64, nLines int, skips map[string]int64) error {
	for i := range lines {
		for j := range lines[i].events {
			b.redactions += b.p.redactEvent(&lines[i].events[j])
		}
	}
	return b.commit(ctx, lines, end, nLines, skips)
}

// commit stores lines as one batch ending at end (the offset past the last
// line and any skipped lines after it), or in parts when the store refuses
// it as too large. skips and nLines are added to the file's totals with the
// part that ends at end.
func (b *pending) commit(ctx context.Context, lines []line, end int64, nLines int, skips map[string]int64) error {
	var events []transcript.Event
	for _, l := range lines {
		events = append(events, l.events...)
	}
	err := b.store(ctx, events, end, nLines, skips)
	if !errors.Is(err, store.ErrBatchTooLarge) {
		return err
	}
	switch {
	case len(lines) > 1:
		return &errSplit{lines: len(lines) / 2}
	case len(events) > 1:
		// One line with many events: the first part keeps the offset
		// before the line (and the parser state stored with it), so a
		// crash in between replays the whole line and the store drops the
		// events it already has.
		h := len(events) / 2
		first := []line{{start: lines[0].start, events: events[:h]}}
		if err := b.commit(ctx, first, lines[0].start, 0, nil); err != nil {
			return err
		}
		return b.commit(ctx, []line{{start: lines[0].start, events: events[h:]}}, end, nLines, skips)
	case len(events) == 1:
		b.p.log.Warn("event too large to store; skipped", "path", b.f.state.Path, "offset", events[0].Source.Offset, "kind", events[0].Kind)
		s := maps.Clone(skips)
		if s == nil {
			s = map[string]int64{}
		}
		s[SkipEventTooLarge]++
		b.f.skips[SkipEventTooLarge]++
		return b.store(ctx, nil, end, nLines, s)
	}
	return err
}

// store makes one store.Ingest call and, when it succeeds, moves the
// batch's state to it.
func (b *pending) store(ctx context.Context, events []transcript.Event, end int64, nLines int, skips map[string]int64) error {
	p := b.p
	batch := store.IngestBatch{KeepParserState: true}
	sum := b.sum
	if end == b.end {
		// The parser has read up to end: its state goes with that offset.
		// Parts that end before it keep the offset, and the state, from
		// before the line (see commit).
		batch.ParserState = b.endState
		sum = b.endSum
		batch.KeepParserState = sum == b.sum
	}
	next := b.next
	next.Offset = end
	base := b.state
	if next.Generation != base.Generation {
		// The first part of a restarted file starts the totals over.
		base.Lines, base.Events, base.Skipped = 0, 0, nil
	}
	next.Lines = base.Lines + int64(nLines)
	next.Events = base.Events + int64(len(events))
	next.Skipped = maps.Clone(base.Skipped)
	for reason, n := range skips {
		if next.Skipped == nil {
			next.Skipped = map[string]int64{}
		}
		next.Skipped[reason] += n
	}
	next.UpdatedAt = b.at.UTC()
	batch.File, batch.Events, batch.Scopes = next, events, p.scopes(events)
	res, err := p.st.Ingest(ctx, batch)
	if err != nil {
		return err
	}
	b.state, b.sum = next, sum
	p.lines.Add(int64(nLines))
	p.events.Add(int64(res.Added))
	p.duplicates.Add(int64(res.Duplicates))
	if res.Added > 0 {
		p.lastIngest.Store(b.at.UnixNano())
	}
	if p.opts.OnIngest != nil && len(events) > 0 {
		p.opts.OnIngest(res, events)
	}
	return nil
}

// parserState is the state of f's parser to store with the batch's end, or
// nil when there is none to store (no parser yet, a parser without
// cross-line state, or a state that could not be saved: counted in this
// batch's skips, and the file then resumes with a fresh parser after a
// crash, as before states were stored).
func (b *pending) parserState() []byte {
	sp, ok := b.f.parser.(transcript.Stateful)
	if !ok {
		return nil
	}
	state, err := sp.MarshalState()
	if err == nil && len(state) > store.MaxParserState {
		err = fmt.Errorf("%d bytes (limit %d)", len(state), store.MaxParserState)
	}
	if err != nil {
		b.p.log.Warn("parser state not saved", "path", b.f.state.Path, "offset", b.end, "error", err)
		b.f.skips[SkipParserStateUnsaved]++
		return nil
	}
	return state
}

// stateSum hashes a parser state; no state hashes as an empty one.
func stateSum(state []byte) string {
	sum := sha256.Sum256(state)
	return string(sum[:])
}

// loadResume reads the parser state stored with f's offset when f has no
// parser, for the parser the next line creates (see parser).
func (p *Pipeline) loadResume(ctx context.Context, f *file) error {
	f.resume = nil
	if f.parser != nil || f.state.Offset == 0 {
		return nil
	}
	state, err := p.st.ParserState(ctx, f.state.Key)
	if err != nil {
		return fmt.Errorf("read parser state: %w", err)
	}
	f.resume, f.stateSum = state, stateSum(state)
	return nil
}

// scopes resolves the scope of each session in events from the cwd of its
// last event that has one.
func (p *Pipeline) scopes(events []transcript.Event) map[string][]string {
	if p.opts.Scope == nil || len(events) == 0 {
		return nil
	}
	cwds := map[string]string{}
	for i := range events {
		if events[i].CWD != "" {
			cwds[events[i].SessionID] = events[i].CWD
		}
	}
	out := make(map[string][]string, len(cwds))
	for id, cwd := range cwds {
		if nodes := p.opts.Scope.Resolve(cwd); len(nodes) > 0 {
			out[id] = slices.Clone(nodes)
		}
	}
	return out
}

// parser returns f's parser, creating it for the first line it sees (at
// offset). For an "auto" watch the format comes from the file state
// (detected before a restart) or from this line; ok is false while it
// cannot be told. A parser created for the line at the stored offset
// starts from the state stored with that offset (see the package comment).
func (p *Pipeline) parser(w Watch, f *file, first []byte, offset int64) (transcript.Parser, bool) {
	if f.parser != nil {
		return f.parser, true
	}
	format := w.Format
	if format == FormatAuto {
		format = f.state.Format
		if format == "" {
			format = string(transcript.Detect(first))
		}
		if format == "" {
			return nil, false
		}
	}
	parser, err := transcript.New(transcript.Format(format), transcript.Options{
		MaxText:        p.opts.MaxText,
		MaxMessageText: p.opts.MaxMessageText,
		Redact:         p.redact.Scrub,
		OnSkip:         func(_ transcript.Position, reason string) { f.skips[reason]++ },
	})
	if err != nil {
		// New validated the watch formats, and Detect only returns known
		// ones; a stored format from a newer build is the only way here.
		p.log.Warn("unknown stored format; detecting again", "path", f.state.Path, "format", format)
		f.state.Format = ""
		return nil, false
	}
	resume := f.resume
	f.resume = nil
	if sp, ok := parser.(transcript.Stateful); ok && offset > 0 && offset == f.state.Offset {
		switch {
		case resume == nil:
			// Read by a build that stored no states, or a state that
			// could not be saved (counted then).
			p.log.Debug("no parser state stored; resuming with a fresh parser", "path", f.state.Path, "offset", offset)
		default:
			if err := sp.UnmarshalState(resume); err != nil {
				p.log.Warn("parser state unreadable; resuming with a fresh parser", "path", f.state.Path, "offset", offset, "error", err)
				f.skips[SkipParserStateUnreadable]++
			}
		}
	}
	f.parser, f.state.Format = parser, format
	if f.fileID == "" {
		f.fileID = fileIdentity(f.state.Path)
	}
	return parser, true
}

// fileIdentity names a file's content for event ids of records that carry
// no id of their own: a hash of its first line (at most 4 KiB of it). Unlike
// the tail's fingerprint it does not change as a small file grows, so the
// same bytes always give the same ids; unlike the inode it survives a copy.
func fileIdentity(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return ""
	}
	buf = buf[:n]
	for i, c := range buf {
		if c == '\n' {
			buf = buf[:i]
			break
		}
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:8])
}

func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// redactEvent redacts every text-bearing field of e in place and returns
// how many secrets it replaced.
func (p *Pipeline) redactEvent(e *transcript.Event) int64 {
	var total int
	r := func(s *string) {
		if *s == "" {
			return
		}
		out, n := p.redact.Redact(*s)
		*s, total = out, total+n
	}
	r(&e.Text)
	r(&e.Command)
	r(&e.Query)
	r(&e.URL)
	for i := range e.FilePaths {
		r(&e.FilePaths[i])
	}
	for i := range e.Todos {
		r(&e.Todos[i].Content)
		r(&e.Todos[i].ActiveForm)
	}
	return int64(total)
}

// updateBacklog keeps the backlog figure equal to the sum over tracked
// files of the bytes not read yet.
func (p *Pipeline) updateBacklog(f *file) {
	c := max(f.size-f.state.Offset, 0)
	p.backlog.Add(c - f.contrib)
	f.contrib = c
}

// Status returns the pipeline's figures. Watch figures (watches, watched
// folders, watcher errors) are the watcher's to add.
func (p *Pipeline) Status() *api.IngestStatus {
	s := &api.IngestStatus{
		Watches:      []api.WatchStatus{},
		Files:        int(p.tracked.Load()),
		Bytes:        p.bytes.Load(),
		Lines:        p.lines.Load(),
		Events:       p.events.Load(),
		Duplicates:   p.duplicates.Load(),
		Redactions:   p.redactions.Load(),
		BacklogBytes: p.backlog.Load(),
	}
	for kind, n := range p.redact.CountsByKind() {
		if s.RedactionsByKind == nil {
			s.RedactionsByKind = map[string]int64{}
		}
		s.RedactionsByKind[kind] = int64(n)
	}
	if t := p.lastIngest.Load(); t != 0 {
		s.LastIngestAt = time.Unix(0, t).UTC().Format(time.RFC3339Nano)
	}
	p.smu.Lock()
	s.Skipped = maps.Clone(p.skipped)
	s.Errors = slices.Clone(p.errs)
	p.smu.Unlock()
	if t, ok := p.st.(totaler); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if n, buffered, checkpoints, err := t.EpisodeTotals(ctx); err == nil {
			s.Sessions, s.BufferedEvents, s.Checkpoints = n, buffered, checkpoints
		}
	}
	return s
}
