package ingest

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/medallionhq/medallion/internal/api"
)

// The pipeline's figures for medalliond status.

// totaler is implemented by stores that can sum their episode buffers
// cheaply (store.Badger); Status uses it when available.
type totaler interface {
	EpisodeTotals(ctx context.Context) (sessions int, buffered, checkpoints int64, err error)
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
