package ingest

import "github.com/medallionhq/medallion/internal/transcript"

// fileSession returns the session id to store an event of f under, given
// the one its parser gave. A Codex parser names the session from the
// file's session_meta record, and without it (started mid-file after a
// restart) from the file name, which for a rollout without a UUID in its
// name is another session: the id the record named is kept in the file's
// state and stands in for the file-name one.
func fileSession(f *file, id string) string {
	if f.state.Format != string(transcript.FormatCodex) {
		return id
	}
	fromPath := transcript.SessionFromPath(f.state.Path).SessionID
	switch {
	case id != fromPath:
		f.state.SessionID = id
	case f.state.SessionID != "":
		return f.state.SessionID
	}
	return id
}
