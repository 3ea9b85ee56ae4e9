package ingest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/medallionhq/medallion/internal/tail"
)

// A file renamed out of the watched patterns (logrotate's x.jsonl →
// x.jsonl.1) is never reported under its new name, so it used to be
// forgotten with whatever was written to it after the last read: one event
// lost per rotation while the daemon was down. Before forgetting a file,
// the pipeline looks for it, by identity, beside its last path and reads
// it to the end.

// errPeek stops a tail.Read at its first line: only its verdict on the
// file's identity is wanted.
var errPeek = errors.New("peek")

// finishRenamed reads the rest of f when it now lives under another name
// in its folder (same device and inode, and the same first bytes, since an
// inode can be reused by a new file). It reports false when the file's
// state must be kept because reading or storing failed; a check is then
// scheduled again.
func (p *Pipeline) finishRenamed(ctx context.Context, key string, f *file) bool {
	moved := findByKey(filepath.Dir(f.state.Path), key)
	w, ok := p.watches[f.state.Watch]
	if moved == "" || !ok {
		return true
	}
	prev := &tail.Position{
		Dev: f.state.Dev, Ino: f.state.Ino, Fingerprint: f.state.Fingerprint,
		FingerprintLen: f.state.FingerprintLen, Offset: f.state.Offset, Size: f.state.Size,
	}
	res, err := tail.Read(moved, prev, tail.Options{MaxLine: p.opts.MaxLine}, func(tail.Line) error { return errPeek })
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true // gone meanwhile
	case err != nil && !errors.Is(err, errPeek):
		p.fail("read renamed file", moved, err)
		p.checks[key] = p.now().Add(p.opts.GoneGrace)
		return false
	case res.Restart != "":
		return true // another file on a reused inode, or rewritten: not ours to finish
	}
	old := f.state.Path
	f.state.Path = moved
	defer func() { f.state.Path = old }() // forget clears the old path's entry
	for {
		more, _, err := p.batch(ctx, w, f, false)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				p.fail("ingest renamed file", moved, err)
			}
			p.checks[key] = p.now().Add(p.opts.GoneGrace)
			return errors.Is(err, fs.ErrNotExist)
		}
		if !more {
			break
		}
	}
	p.log.Info("read a file renamed out of the watched patterns to its end", "from", old, "to", moved, "offset", f.state.Offset)
	return true
}

// findByKey returns the file in dir whose (device, inode) key is key, or
// "".
func findByKey(dir, key string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if dev, ino, _, err := tail.Identify(path); err == nil && tail.Key(dev, ino) == key {
			return path
		}
	}
	return ""
}
