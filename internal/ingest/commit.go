package ingest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Committing a batch: steps 5-6 of the package comment (scopes, then the
// events, offset and parser state in one store.Ingest call), in place or
// on a goroutine of its own (dispatch).

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
//
// The batch is redacted here, before waiting for the commit in flight:
// redacting is as much CPU as storing, and a commit goroutine doing both
// made the one stage the backfill waited on (issue 12: daemon CPU 2.4 s
// over 1.7 s of the 200 MB generated backfill, reading and parsing 0.4
// of it, redacting and committing 0.6 plus Badger's writes of those
// commits 0.35).
func (p *Pipeline) dispatch(ctx context.Context, j *job, lines []line, end int64, nLines int, skips map[string]int64) {
	j.b.redact(lines)
	p.settle()
	j.done = make(chan error, 1)
	p.inflight = j
	go func() { j.done <- j.b.commit(ctx, lines, end, nLines, skips) }()
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
	b.redact(lines)
	err := b.commit(ctx, lines, end, nLines, skips)
	b.f.state, b.f.stateSum = b.state, b.sum
	if err != nil {
		b.f.parser = nil // the lines it read will be read again
	}
	return err
}

// redact redacts the batch's events in place (see redactEvent), before
// they are committed.
func (b *pending) redact(lines []line) {
	for i := range lines {
		for j := range lines[i].events {
			b.redactions += b.p.redactEvent(&lines[i].events[j])
		}
	}
}

// commit stores lines as one batch ending at end (the offset past the last
// line and any skipped lines after it), or in parts when the store refuses
// it as too large. skips and nLines are added to the file's totals with the
// part that ends at end.
func (b *pending) commit(ctx context.Context, lines []line, end int64, nLines int, skips map[string]int64) error {
	n := 0
	for _, l := range lines {
		n += len(l.events)
	}
	// Sized once: appending line by line grew it by doubling, which was
	// 46 of the 722 MB the 200 MB generated backfill allocated (issue 12).
	events := make([]transcript.Event, 0, n)
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
