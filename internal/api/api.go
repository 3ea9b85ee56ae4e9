// Package api holds the request and response types of medalliond's local
// HTTP API, shared by the server and the client so they cannot drift.
//
// The API is HTTP/1.1 + JSON over a Unix socket; every path is under /v1/:
//
//	GET  /v1/status                         Status
//	GET  /v1/medallions?node=N&tag=T&limit=L ListResponse (latest for scope)
//	POST /v1/medallions                     create; body Medallion; 201 PutResponse
//	PUT  /v1/medallions/{id}                create or update; body Medallion; PutResponse
//	    (an update whose body has meta.version > 0 must name the latest
//	    version or gets 409 conflict; version 0 updates on top of the latest)
//	GET  /v1/medallions/{id}[?version=N]    Medallion
//	GET  /v1/medallions/{id}/history        HistoryResponse
//	GET  /v1/review?node=N&tag=T&state=S    ReviewResponse (review.go)
//	POST /v1/review                         ReviewActionRequest → ReviewActionResponse
//	POST /v1/llm/check                      LLMCheck (llm.go)
//	GET  /v1/search?q=Q&node=N&limit=L      SearchResponse (search.go)
//	GET  /v1/item?item=ID:REF&version=V     Item
//	POST /v1/record                         RecordRequest → RecordResponse
//
// Errors are an Error body with a fitting status: 400 bad input, 404 not
// found, 409 exists/conflict, 403 forbidden, 507 disk full, 500 ours.
package api

import (
	"bytes"
	"encoding/json"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
)

// VersionHeader carries the server's build version on every response; the
// client warns when it differs from its own.
const VersionHeader = "Medallion-Version"

// DefaultListLimit is used when a list request names no limit.
const DefaultListLimit = 10

// Error codes, stable strings a client can branch on.
const (
	CodeInvalid   = "invalid"   // 400: bad request or invalid medallion (see Fields)
	CodeNotFound  = "not_found" // 404
	CodeExists    = "exists"    // 409: create of an existing id
	CodeConflict  = "conflict"  // 409: update based on a stale version
	CodeForbidden = "forbidden" // 403: browser-originated request
	CodeDiskFull  = "disk_full" // 507: too little free space under the data dir to write
	CodeInternal  = "internal"  // 500
)

// Error is the body of every non-2xx response.
type Error struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	// Fields names each invalid field when Code is "invalid" because of a
	// medallion that failed validation.
	Fields []medallion.Problem `json:"fields,omitempty"`
}

// Status answers GET /v1/status.
type Status struct {
	Version    string `json:"version"`
	PID        int    `json:"pid"`
	StartedAt  string `json:"started_at"`
	UptimeSec  int64  `json:"uptime_seconds"`
	DataDir    string `json:"data_dir"`
	Socket     string `json:"socket"`
	Medallions int    `json:"medallions"`
	// StoreBytes is the on-disk size of the store (LSM + value log).
	StoreBytes int64 `json:"store_bytes"`
	// StoreDamage, when set, is what the daemon's periodic read-back of the
	// store found damaged, with what to do about it; the daemon keeps
	// serving what it can read.
	StoreDamage string `json:"store_damage,omitempty"`
	// Disk is the free space under the data dir and whether the daemon
	// stopped writing for want of it; nil from a daemon that does not
	// measure it.
	Disk *DiskStatus `json:"disk,omitempty"`
	// Ingest is nil when the daemon runs without ingestion.
	Ingest *IngestStatus `json:"ingest,omitempty"`
	// LLM is nil when the config has no llm block (no Tier 1, no network).
	LLM *LLMStatus `json:"llm,omitempty"`
}

// DiskStatus is the disk part of Status.
type DiskStatus struct {
	// FreeBytes is the space still free under the data dir.
	FreeBytes int64 `json:"free_bytes"`
	// ReserveBytes is the free space below which the daemon writes
	// nothing: on a full disk the store's memory-mapped writes would kill
	// it.
	ReserveBytes int64 `json:"reserve_bytes"`
	// Full is set while FreeBytes < ReserveBytes: ingestion is paused and
	// writes are refused (507); reads work. Both resume by themselves once
	// space is freed.
	Full bool `json:"full"`
	// ReadOnly is set while the store is open read-only because the disk
	// was full when the daemon started; it reopens read-write by itself.
	ReadOnly bool `json:"read_only"`
	// Message says in a sentence what is going on when Full or ReadOnly.
	Message string `json:"message,omitempty"`
}

// ListResponse answers GET /v1/medallions.
type ListResponse struct {
	Medallions []*medallion.Medallion `json:"medallions"`
}

// PutResponse answers POST and PUT /v1/medallions.
type PutResponse struct {
	// Created is true when the request stored a new medallion (version 1).
	Created   bool                 `json:"created"`
	Medallion *medallion.Medallion `json:"medallion"`
}

// Export and import (issue 11: a way back, and a way to move machines):
//
//	GET  /v1/export   every version of every medallion as JSON Lines
//	                  (application/x-ndjson): one medallion.v1 document per
//	                  line, by id, oldest version first; a stream cut short
//	                  ends without its final chunk, never as a short 200
//	POST /v1/import   such lines → ImportResponse; ids already stored are
//	                  left as they are and listed

// ImportResponse answers POST /v1/import.
type ImportResponse struct {
	// Imported counts the medallions stored, Versions their versions.
	Imported int `json:"imported"`
	Versions int `json:"versions"`
	// Existing lists the ids that were stored already and left unchanged.
	Existing []string `json:"existing"`
}

// HistoryResponse answers GET /v1/medallions/{id}/history.
type HistoryResponse struct {
	ID       string                  `json:"medallion_id"`
	Versions []medallion.VersionInfo `json:"versions"`
}

// Ingestion and checkpoint endpoints:
//
//	GET  /v1/sessions                       SessionsResponse (most recent first)
//	GET  /v1/sessions/{id}?after=SEQ&limit=N SessionResponse (the buffered episode)
//	POST /v1/checkpoint                     CheckpointRequest → CheckpointResponse
//
// Session ids may contain "/" (subagents: "<parent>/agent-<id>"); the
// {id...} path pattern takes the rest of the path.

// SessionsResponse answers GET /v1/sessions.
type SessionsResponse struct {
	Sessions []episode.SessionInfo `json:"sessions"`
}

// SessionResponse answers GET /v1/sessions/{id}.
type SessionResponse struct {
	Session episode.SessionInfo     `json:"session"`
	Events  []episode.BufferedEvent `json:"events"`
}

// CheckpointRequest asks for a manual checkpoint: of one session, or of every
// session with buffered events when SessionID and Nodes are empty, or of
// explicit evidence for the scope Nodes (seed 002), which a framework that
// writes no transcript can send. SessionID and Nodes exclude each other.
type CheckpointRequest struct {
	SessionID string `json:"session_id,omitempty"`
	Note      string `json:"note,omitempty"`
	// Nodes is the graph nodes of the evidence's scope: the checkpoint
	// updates the active medallion whose graph nodes are exactly these, or
	// creates it. Required with Evidence.
	Nodes []string `json:"nodes,omitempty"`
	// Tags are added to the scope tags of the medallion the evidence goes to.
	Tags     []string  `json:"tags,omitempty"`
	Evidence *Evidence `json:"evidence,omitempty"`
}

// Evidence is seed 002's checkpoint input: what a session produced, in
// plain text.
type Evidence struct {
	// SessionSummary is a summary of the session in prose.
	SessionSummary string `json:"session_summary,omitempty"`
	// Transcripts are conversation texts, one turn per line group: a line
	// starting "user:" or "human:" opens a user turn, "assistant:" or
	// "agent:" an assistant turn; other lines continue the current turn.
	Transcripts []string `json:"transcripts,omitempty"`
	// Artefacts are named results (a file, a URL, a test report): any JSON
	// value, as the seed's Record<string, any>.
	Artefacts map[string]Artefact `json:"artefacts,omitempty"`
}

// Artefact is one evidence artefact as text: a JSON string as it is, any
// other JSON value (a list of files touched, a test report object) as its
// compact JSON.
type Artefact string

// UnmarshalJSON takes any JSON value.
func (a *Artefact) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = Artefact(s)
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*a = Artefact(buf.String())
	return nil
}

// CheckpointResult is one session's checkpoint.
type CheckpointResult struct {
	SessionID string   `json:"session_id"`
	Scope     []string `json:"scope"`
	Trigger   string   `json:"trigger"`
	Events    int      `json:"events"`
	// MedallionID and Version name what the curator stored, when it stored
	// a medallion.
	MedallionID string `json:"medallion_id,omitempty"`
	Version     int    `json:"version,omitempty"`
	// Items counts what the curator stored in that version, by kind
	// ("avoid_repeating", "invariants", "decisions", "open_questions",
	// "closed", "progress", "subsystems", "entry_points").
	Items map[string]int `json:"items,omitempty"`
	// Skipped says why the episode was not curated and stays buffered
	// (for example "no scope: session has no working directory").
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

// CheckpointResponse answers POST /v1/checkpoint.
type CheckpointResponse struct {
	Checkpoints []CheckpointResult `json:"checkpoints"`
}

// IngestStatus is the ingestion part of Status.
type IngestStatus struct {
	// Watches lists the configured (or default) watch roots.
	Watches []WatchStatus `json:"watches"`
	// WatchedDirs is how many directories have an inotify watch.
	WatchedDirs int `json:"watched_dirs"`
	// Files is how many transcript files are tracked.
	Files int `json:"files"`
	// Bytes, Lines and Events are totals ingested since the daemon started;
	// Duplicates counts events dropped because their id was already stored.
	Bytes      int64 `json:"bytes"`
	Lines      int64 `json:"lines"`
	Events     int64 `json:"events"`
	Duplicates int64 `json:"duplicates"`
	// Skipped counts lines and records not ingested, by reason
	// ("invalid_json", "line_too_long", "binary", "unknown_type:x" …).
	Skipped map[string]int64 `json:"skipped"`
	// Redactions counts secrets replaced before storage.
	Redactions int64 `json:"redactions"`
	// RedactionsByKind counts, by kind ("aws-access-key", "high-entropy"
	// …), every secret the daemon replaced since it started: in transcripts
	// and in medallion writes.
	RedactionsByKind map[string]int64 `json:"redactions_by_kind,omitempty"`
	// BacklogBytes is how many bytes of tracked files are not ingested yet:
	// how far behind the daemon is.
	BacklogBytes int64 `json:"backlog_bytes"`
	// LastIngestAt is when an event was last stored.
	LastIngestAt string `json:"last_ingest_at,omitempty"`
	// Sessions and BufferedEvents summarise the episode buffers.
	Sessions       int   `json:"sessions"`
	BufferedEvents int64 `json:"buffered_events"`
	Checkpoints    int64 `json:"checkpoints"`
	// Errors are recent problems a user can act on (inotify limits, an
	// unreadable folder), newest first, at most 10.
	Errors []string `json:"errors,omitempty"`
}

// WatchStatus describes one watch root.
type WatchStatus struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Format string `json:"format"`
	// Exists is false while the root folder does not exist yet (it is
	// picked up when it appears).
	Exists bool `json:"exists"`
	Files  int  `json:"files"`
}
