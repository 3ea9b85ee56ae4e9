package store

import (
	"context"
	"time"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/transcript"
)

// The ingestion side of the store: per-file tail positions, per-session
// episode buffers, and the dedupe set that makes ingestion exactly-once.
// It lives in the same Badger database as the medallions so that a
// checkpoint can store a curated medallion and clear the episode it came
// from in one transaction.

// FileState is the tailer's position in one transcript file.
type FileState struct {
	// Key identifies the file across renames: "<dev>:<inode>".
	Key  string `json:"key"`
	Path string `json:"path"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
	// Fingerprint is the hex SHA-256 of the file's first FingerprintLen
	// bytes; a file whose first bytes change was rewritten and starts over.
	Fingerprint    string `json:"fingerprint"`
	FingerprintLen int    `json:"fingerprint_len"`
	// Offset is how many bytes have been consumed; always just past a '\n'.
	Offset int64 `json:"offset"`
	// Size is the file size seen at the last read.
	Size   int64  `json:"size"`
	Watch  string `json:"watch"`  // name of the watch block that found it
	Format string `json:"format"` // transcript format used for it
	// Lines, Events and Skipped are running totals for this file.
	Lines   int64            `json:"lines"`
	Events  int64            `json:"events"`
	Skipped map[string]int64 `json:"skipped,omitempty"`
	// SessionID is the session a Codex file's session_meta named, kept so
	// that the parser started mid-file after a restart, which never sees
	// that record, does not fall back to the file name (issue 11: one
	// session became two); empty until such a record is read.
	SessionID string `json:"session_id,omitempty"`
	// Generation counts restarts from offset 0 (truncation, rewrite).
	Generation int       `json:"generation"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// IngestBatch is what one read of one file produced. Events must already be
// redacted and carry their SessionID.
type IngestBatch struct {
	// File is the file's state after this batch: Offset is just past the
	// last line the batch covers, and the running totals include it.
	File FileState
	// Events in file order.
	Events []transcript.Event
	// Scopes maps each session id in Events to its graph nodes, resolved
	// by the ingester (cwd → git root → repo:<name> + rules); a session
	// whose scope is already stored keeps it unless a non-empty one is given.
	Scopes map[string][]string
	// ParserState is the state of the file's parser after the batch's last
	// line (transcript.Stateful), stored in the same transaction as File so
	// that a parser resuming at File.Offset reads on exactly as the one
	// that stopped there; nil or empty deletes the stored one (a parser
	// without state, or a file that starts over). At most MaxParserState
	// bytes.
	ParserState []byte
	// KeepParserState leaves the stored parser state as it is, and
	// ParserState unused: the batch did not change it.
	KeepParserState bool
}

// IngestResult says what an Ingest call stored.
type IngestResult struct {
	// Added counts events appended to episode buffers; Duplicates counts
	// events whose id was already stored (dropped).
	Added      int `json:"added"`
	Duplicates int `json:"duplicates"`
	// Sessions lists the sessions that received events, with their
	// updated summaries, so the trigger policy needs no second read.
	Sessions []episode.SessionInfo `json:"sessions"`
}

// EpisodeStore is the ingestion contract.
type EpisodeStore interface {
	// Ingest, in ONE transaction, appends the batch's new events to their
	// sessions' episode buffers (dropping events whose id was ever stored),
	// updates the sessions' summaries, and stores b.File. Either all of it
	// is stored or none: a crash can never advance the offset without the
	// events, nor store the events without the offset. Batches too large for
	// one transaction are refused with ErrBatchTooLarge, nothing stored; the
	// caller splits at a line boundary.
	Ingest(ctx context.Context, b IngestBatch) (IngestResult, error)

	// FileState returns the stored state for key, or (nil, nil).
	FileState(ctx context.Context, key string) (*FileState, error)
	// FileStates lists every stored file state.
	FileStates(ctx context.Context) ([]FileState, error)
	// ParserState returns the parser state stored with the file's offset
	// (see IngestBatch.ParserState), or nil when there is none.
	ParserState(ctx context.Context, key string) ([]byte, error)
	// DeleteFileState forgets a file (it was deleted), its parser state
	// with it; no error when absent.
	DeleteFileState(ctx context.Context, key string) error

	// Sessions lists every session, most recently active first.
	Sessions(ctx context.Context) ([]episode.SessionInfo, error)
	// Session returns one session, or (nil, nil) when unknown.
	Session(ctx context.Context, id string) (*episode.SessionInfo, error)
	// Episode returns up to limit buffered events of a session in buffer
	// order, starting after seq `after` (0: from the start; limit <= 0: all).
	Episode(ctx context.Context, sessionID string, after uint64, limit int) ([]episode.BufferedEvent, error)
	// ClearEpisode removes the session's buffered events with seq <= upto
	// and counts a checkpoint; events ingested meanwhile stay buffered.
	// Their ids stay in the dedupe set, so they are never ingested again.
	ClearEpisode(ctx context.Context, sessionID string, upto uint64) error
}
