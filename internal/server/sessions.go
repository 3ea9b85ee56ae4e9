package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/store"
)

// Paging of GET /v1/sessions/{id}: a buffered episode can hold many
// thousands of events, each up to a few KiB of text, so a page is bounded
// and the client asks for the next one with ?after=.
const (
	defaultEpisodeLimit = 200
	maxEpisodeLimit     = 10000
)

// checkpointWriteTimeout replaces the server's write timeout for a
// checkpoint: it runs the curator before answering, which later tiers make
// slower than a store lookup.
const checkpointWriteTimeout = 5 * time.Minute

// errIngestDisabled answers the session and checkpoint endpoints of a daemon
// running without ingestion (a store-only daemon, or a test).
func errIngestDisabled() error {
	return notFound("ingestion is not enabled in this daemon")
}

// sessions answers GET /v1/sessions: every session, most recently active
// first.
func (s *Server) sessions(r *http.Request) (any, error) {
	if s.cfg.Episodes == nil {
		return nil, errIngestDisabled()
	}
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	list, err := s.cfg.Episodes.Sessions(r.Context())
	if err != nil {
		return nil, err
	}
	if list == nil {
		list = []episode.SessionInfo{}
	}
	return api.SessionsResponse{Sessions: list}, nil
}

// session answers GET /v1/sessions/{id...}?after=SEQ&limit=N: the session's
// summary and one page of its buffered episode.
//
// The summary and the page are two reads, not one snapshot: events ingested
// in between show in one and not the other, which a reader paging through a
// live session expects anyway.
func (s *Server) session(r *http.Request) (any, error) {
	if s.cfg.Episodes == nil {
		return nil, errIngestDisabled()
	}
	id := r.PathValue("id")
	if id == "" {
		return nil, badRequest("give a session id: GET /v1/sessions/{id} (GET /v1/sessions lists them)")
	}
	q, err := query(r, "after", "limit")
	if err != nil {
		return nil, err
	}
	var after uint64
	if v, ok, err := single(q, "after"); err != nil {
		return nil, err
	} else if ok {
		after, err = strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, badRequest("after must be a sequence number, a whole number from 0 (got %q)", v)
		}
	}
	limit := defaultEpisodeLimit
	if v, ok, err := single(q, "limit"); err != nil {
		return nil, err
	} else if ok {
		limit, err = strconv.Atoi(v)
		if err != nil || limit < 1 || limit > maxEpisodeLimit {
			return nil, badRequest("limit must be a whole number from 1 to %d (got %q)", maxEpisodeLimit, v)
		}
	}
	ctx := r.Context()
	info, err := s.cfg.Episodes.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, sessionNotFound(id)
	}
	events, err := s.cfg.Episodes.Episode(ctx, id, after, limit)
	if err != nil {
		return nil, err
	}
	if events == nil {
		events = []episode.BufferedEvent{}
	}
	return api.SessionResponse{Session: *info, Events: events}, nil
}

// checkpoint answers POST /v1/checkpoint: a manual checkpoint of one
// session, or of every session with buffered events (an empty body), or of
// explicit evidence for a scope ({"nodes": [...], "tags": [...],
// "evidence": {"session_summary", "transcripts", "artefacts"}}, seed 002).
//
// The answer lists one result per session; a session whose curation failed
// carries its error there, and the request still succeeds, so that one bad
// session does not hide what happened to the others. Only an error of the
// whole request (an unknown session: 404) is an error status.
func (s *Server) checkpoint(r *http.Request) (any, error) {
	if s.cfg.Checkpoint == nil {
		return nil, errIngestDisabled()
	}
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	var req api.CheckpointRequest
	if err := decodeStrict(r, &req, `"session_id", "note", "nodes", "tags", "evidence" with "session_summary", "transcripts", "artefacts"`); err != nil {
		return nil, err
	}
	if req.SessionID != "" && strings.TrimSpace(req.SessionID) == "" {
		return nil, badRequest("session_id must not be blank (leave it out to checkpoint every session)")
	}
	if req.Nodes != nil || req.Tags != nil || req.Evidence != nil {
		if err := checkpoint.CheckEvidence(req); err != nil {
			return nil, badRequest("%s", strings.TrimPrefix(err.Error(), checkpoint.ErrInvalidEvidence.Error()+": "))
		}
	}
	resp, err := s.cfg.Checkpoint(r.Context(), req)
	if errors.Is(err, store.ErrNotFound) && req.SessionID != "" {
		return nil, sessionNotFound(req.SessionID)
	}
	if err != nil {
		return nil, err
	}
	if resp.Checkpoints == nil {
		resp.Checkpoints = []api.CheckpointResult{}
	}
	return resp, nil
}

// extendWrite gives next's response more time than the server's write
// timeout: a checkpoint answers only once the curator is done.
func extendWrite(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Best effort: a writer that cannot move its deadline keeps the
		// server's, and a slow checkpoint then runs but cannot answer.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
		next.ServeHTTP(w, r)
	})
}

// decodeStrict reads the request body as one JSON value into v, refusing
// unknown fields (allowed names them for the message) and trailing data. An
// empty body leaves v as it is: every field of the requests decoded here is
// optional.
func decodeStrict(r *http.Request, v any, allowed string) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil && strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return badRequest("unknown field %s in the request body (allowed: %s)", field, allowed)
	case err != nil:
		return bodyError(err)
	}
	return expectEOF(dec)
}

// expectEOF refuses anything but white space after the decoded value: a
// second value is a client bug.
func expectEOF(dec *json.Decoder) error {
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("invalid JSON: the request body holds more than one JSON value")
	}
	return nil
}

// sessionNotFound is how every command that names a session says it is
// unknown (session show, checkpoint --session).
func sessionNotFound(id string) error {
	return notFound("session %s not found (medallionctl sessions lists them)", id)
}
