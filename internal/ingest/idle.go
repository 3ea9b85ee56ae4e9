package ingest

import (
	"os"
	"time"
)

// A file's parser remembers pending tool calls and the ids of the results
// it emitted (up to thousands per file) to name and count what follows.
// Kept for every file ever seen, that memory took a daemon watching 10k
// transcripts past its memory limit (issue 11). A file read to its end
// that nobody has written to for idleParser is finished, or paused for
// long: its parser is dropped, as after a restart, which loses nothing
// (event ids do not depend on parser state, and the store drops repeats);
// at worst a tool result arriving after that long lacks its call's tool
// name. Old files read at start-up never keep theirs.

// idleParser is how long a fully read file keeps its parser unwritten.
var idleParser = 10 * time.Minute

// readToEnd notes that f was read to its end, and drops its parser at once
// when the file was last written idleParser ago or more.
func (p *Pipeline) readToEnd(f *file) {
	now := p.now()
	f.read = now
	if fi, err := os.Stat(f.state.Path); err == nil && now.Sub(fi.ModTime()) >= idleParser {
		f.parser = nil
	}
}

// sweepParsers drops the parsers of files read to their end idleParser ago
// or more, looking at most every half idleParser. It runs when Run wakes,
// so an idle pipeline keeps what it has until the next notice.
func (p *Pipeline) sweepParsers(now time.Time) {
	if now.Sub(p.sweptAt) < idleParser/2 {
		return
	}
	p.sweptAt = now
	for key, f := range p.files {
		if _, tail := p.tails[key]; f.parser != nil && !f.read.IsZero() && now.Sub(f.read) >= idleParser && !tail {
			f.parser = nil
		}
	}
}
