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

// HoldWindow is how far back from the end of a buffer a tool call still
// waiting for its result is held back by Settled; an older call without
// a result (the agent was killed, the result never written) no longer
// holds anything.
const HoldWindow = 64

// Settled returns how many events, from the start of a live session's
// buffer, a checkpoint can curate now without separating a tool call from
// its result: a call among the last HoldWindow events whose result has
// not arrived stays buffered, with everything after it, for the next
// episode, where the curator sees the pair whole (a commit's message with
// git's confirmation, a failing command with its error). When nothing
// would be left to curate, it returns len(events): holding everything
// back would stall the session's checkpoints.
func Settled(events []BufferedEvent) int {
	results := map[string]bool{}
	cut := len(events)
	for i := len(events) - 1; i >= max(0, len(events)-HoldWindow); i-- {
		e := &events[i].Event
		switch {
		case e.ToolCallID == "":
		case e.Kind == transcript.KindToolResult:
			results[e.ToolCallID] = true
		case e.Kind == transcript.KindToolCall && !results[e.ToolCallID]:
			cut = i
		}
	}
	if cut == 0 {
		return len(events)
	}
	return cut
}
