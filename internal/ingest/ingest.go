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
//
// ingest.go holds the pipeline and its queue; files.go which file is read
// when; read.go steps 1-4; commit.go steps 5-6; status.go the figures.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

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
