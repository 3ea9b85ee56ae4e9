package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/medallionhq/medallion/internal/tail"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Some transcripts are one JSON document rewritten whole on every change
// (Gemini CLI up to 0.38: a pretty-printed .json file per session), which
// lines and offsets cannot follow: a rewrite changes bytes anywhere. Such a
// file, as its parser says (transcript.WholeFile), is read whole each time
// it changed and handed to the parser as one "line" at offset 0. The
// parser remembers what it emitted, and that state is stored with the
// file's new state in the same store.Ingest call, as for lines, so each
// read yields only what is new since the last one, across restarts too.
// The stored offset is the size of the content read, the fingerprint a
// hash of all of it: an unchanged file is not parsed again. A file that is
// not complete JSON (read while being written) is left for the next change
// to it; one larger than MaxLine is skipped and counted.

// isWhole reports whether f is read whole: its watch has a fixed format
// whose parser says so for f's path.
func (p *Pipeline) isWhole(w Watch, f *file) bool {
	if w.Format == FormatAuto {
		return false
	}
	parser := f.parser
	if parser == nil {
		var err error
		if parser, err = transcript.New(transcript.Format(w.Format), transcript.Options{}); err != nil {
			return false
		}
	}
	wf, ok := parser.(transcript.WholeFile)
	return ok && wf.WholeFile(f.state.Path)
}

// readWhole reads and stores what is new in a whole-file transcript; it
// never asks for more (one read takes the whole file).
func (p *Pipeline) readWhole(ctx context.Context, w Watch, f *file) (more bool, err error) {
	if err := p.loadResume(ctx, f); err != nil {
		return false, err
	}
	fh, err := os.Open(f.state.Path)
	if err != nil {
		return false, err
	}
	defer fh.Close()
	dev, ino, err := fileKeyOf(fh)
	if err != nil {
		return false, err
	}
	if tail.Key(dev, ino) != f.state.Key {
		// Another file took the path meanwhile: it has its own key.
		f.parser = nil
		p.enqueue(notice{watch: w.Name, path: f.state.Path})
		return false, nil
	}
	data, err := io.ReadAll(io.LimitReader(fh, int64(p.opts.MaxLine)+1))
	if err != nil {
		return false, fmt.Errorf("read: %w", err)
	}
	size := int64(len(data))
	sum := sha256.Sum256(data)
	next := f.state
	next.Dev, next.Ino, next.Size = dev, ino, size
	next.Fingerprint, next.FingerprintLen = hex.EncodeToString(sum[:]), len(data)
	if next.Fingerprint == f.state.Fingerprint && f.state.Offset == size {
		f.state.Size = size
		return false, nil // unchanged since the last read
	}
	f.skips = map[string]int64{}
	var lines []line
	switch {
	case size > int64(p.opts.MaxLine):
		f.skips[tail.SkipLineTooLong]++
		p.log.Warn("whole-file transcript over max_line; skipped", "path", f.state.Path, "max_line", p.opts.MaxLine)
	case !jsonValues(data):
		// Most likely caught while being rewritten (truncated, then
		// written): the write that completes it notifies again.
		p.log.Debug("whole-file transcript is not complete JSON; waiting for the next change", "path", f.state.Path, "bytes", size)
		f.state.Size = size
		return false, nil
	default:
		// The parser is created as the one that read the file up to the
		// stored offset, that is with the state stored with it: for a
		// whole file that is its memory of the last read.
		if _, ok := p.parser(w, f, data, f.state.Offset); !ok {
			return false, nil
		}
		if events, ok := p.parseLine(w, f, data, 0); ok {
			lines = []line{{start: 0, events: events}}
		}
	}
	next.Format = f.state.Format // set by the parser's creation
	b := p.newPending(f, next, 0, size)
	if err := p.commitNow(ctx, b, lines, size, 1, f.skips); err != nil {
		return false, err
	}
	p.account(f, size, b.redactions)
	f.size = size
	p.updateBacklog(f)
	return false, nil
}

// fileKeyOf is the (device, inode) of an open file.
func fileKeyOf(fh *os.File) (dev, ino uint64, err error) {
	dev, ino, _, err = tail.Identify(fh.Name())
	return dev, ino, err
}
