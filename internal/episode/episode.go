// Package episode describes agent sessions and their episode buffers: the
// events ingested since the last checkpoint, which a checkpoint hands to the
// curator. It holds plain types shared by the store, the daemon and the CLI
// (it must not import the store, so medallionctl stays free of Badger).
package episode

import (
	"time"

	"github.com/medallionhq/medallion/internal/transcript"
)

// SessionInfo summarises one agent session as ingested so far.
type SessionInfo struct {
	ID        string `json:"id"`
	ParentID  string `json:"parent_id,omitempty"`
	Agent     string `json:"agent"`
	CWD       string `json:"cwd,omitempty"`
	GitBranch string `json:"git_branch,omitempty"`
	// Scope is the graph nodes the session's episodes are curated into
	// (e.g. ["repo:muse"]); empty until a cwd is known.
	Scope []string `json:"scope"`
	// Events counts every event ever ingested for the session, by kind in
	// ByKind; Buffered is how many wait in the episode buffer now.
	Events   int64            `json:"events"`
	ByKind   map[string]int64 `json:"by_kind"`
	Buffered int64            `json:"buffered"`
	// FirstEventAt/LastEventAt come from event timestamps (which may be out
	// of file order); LastIngestAt is when the daemon last added an event.
	FirstEventAt time.Time `json:"first_event_at,omitzero"`
	LastEventAt  time.Time `json:"last_event_at,omitzero"`
	LastIngestAt time.Time `json:"last_ingest_at,omitzero"`
	// Files are the transcript file paths the session's events came from.
	Files            []string  `json:"files"`
	Checkpoints      int64     `json:"checkpoints"`
	LastCheckpointAt time.Time `json:"last_checkpoint_at,omitzero"`
}

// BufferedEvent is an event in a session's episode buffer, with its
// position in that buffer.
type BufferedEvent struct {
	Seq   uint64           `json:"seq"`
	Event transcript.Event `json:"event"`
}
