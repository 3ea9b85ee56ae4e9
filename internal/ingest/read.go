package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/tail"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Reading a file's new lines: steps 1-4 of the package comment (tail,
// parse, redact), in batches bounded by the store's limits.

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
