package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/tail"
	"github.com/medallionhq/medallion/internal/transcript"
)

// The files the pipeline tracks: which one to read when (notices, back-off
// retries, quiet tails), and forgetting a file that is gone or replaced.

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
