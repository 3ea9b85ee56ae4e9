package main

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/episode"
)

// sessionRoutes serves the session and checkpoint endpoints from the fake's
// sessions and episodes, following the contract of package api: pages of
// ?after=&limit= (default 200, at most 10000), 404 for an unknown session,
// a manual checkpoint that empties the buffers it curated.
func (f *fakeDaemon) sessionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.noIngest {
			f.replyLocked(w, http.StatusNotFound, &api.Error{Error: "ingestion is not enabled in this daemon", Code: api.CodeNotFound})
			return
		}
		f.replyLocked(w, http.StatusOK, &api.SessionsResponse{Sessions: append([]episode.SessionInfo{}, f.sessions...)})
	})
	mux.HandleFunc("GET /v1/sessions/{id...}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.noIngest {
			f.replyLocked(w, http.StatusNotFound, &api.Error{Error: "ingestion is not enabled in this daemon", Code: api.CodeNotFound})
			return
		}
		id := r.PathValue("id")
		q := r.URL.Query()
		after, err := strconv.ParseUint(cmp.Or(q.Get("after"), "0"), 10, 64)
		if err != nil {
			f.replyLocked(w, http.StatusBadRequest, &api.Error{Error: "bad after", Code: api.CodeInvalid})
			return
		}
		limit, err := strconv.Atoi(cmp.Or(q.Get("limit"), "200"))
		if err != nil || limit < 1 || limit > 10000 {
			f.replyLocked(w, http.StatusBadRequest, &api.Error{Error: "limit must be a whole number from 1 to 10000", Code: api.CodeInvalid})
			return
		}
		i := slices.IndexFunc(f.sessions, func(s episode.SessionInfo) bool { return s.ID == id })
		if i < 0 {
			f.replyLocked(w, http.StatusNotFound, &api.Error{Error: "session " + id + " not found", Code: api.CodeNotFound})
			return
		}
		events := []episode.BufferedEvent{}
		for _, e := range f.episodes[id] {
			if e.Seq > after && len(events) < limit {
				events = append(events, e)
			}
		}
		f.replyLocked(w, http.StatusOK, &api.SessionResponse{Session: f.sessions[i], Events: events})
	})
	mux.HandleFunc("POST /v1/checkpoint", func(w http.ResponseWriter, r *http.Request) {
		var req api.CheckpointRequest
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			f.reply(w, http.StatusBadRequest, &api.Error{Error: "decode checkpoint request: " + err.Error(), Code: api.CodeInvalid})
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.noIngest {
			f.replyLocked(w, http.StatusNotFound, &api.Error{Error: "ingestion is not enabled in this daemon", Code: api.CodeNotFound})
			return
		}
		f.checkpointReqs = append(f.checkpointReqs, req)
		if req.SessionID != "" && !slices.ContainsFunc(f.sessions, func(s episode.SessionInfo) bool { return s.ID == req.SessionID }) {
			f.replyLocked(w, http.StatusNotFound, &api.Error{Error: "checkpoint: session " + req.SessionID + " not found", Code: api.CodeNotFound})
			return
		}
		resp := &api.CheckpointResponse{Checkpoints: []api.CheckpointResult{}}
		if req.Evidence != nil {
			// Evidence for a scope: curated into that scope's medallion, as
			// the daemon does.
			resp.Checkpoints = append(resp.Checkpoints, api.CheckpointResult{
				SessionID: "evidence-5d41402abc4b2a76", Scope: req.Nodes, Trigger: "evidence",
				Events: len(req.Evidence.Transcripts) + len(req.Evidence.Artefacts), MedallionID: "med-" + strings.ReplaceAll(req.Nodes[0], ":", "-"),
				Version: 1, Items: map[string]int{"invariants": 1, "open_questions": 1},
			})
			f.replyLocked(w, http.StatusOK, resp)
			return
		}
		for i := range f.sessions {
			s := &f.sessions[i]
			if (req.SessionID != "" && s.ID != req.SessionID) || s.Buffered == 0 {
				continue
			}
			res := api.CheckpointResult{SessionID: s.ID, Scope: s.Scope, Trigger: "manual", Events: int(s.Buffered)}
			switch msg := f.checkpointErrs[s.ID]; {
			case msg != "":
				res.Error = msg
			case len(s.Scope) == 0:
				// As the daemon: kept until the session has a scope.
				res.Skipped = "no scope: session has no working directory"
			default:
				s.Buffered, s.Checkpoints = 0, s.Checkpoints+1
				delete(f.episodes, s.ID)
				res.MedallionID = strings.ReplaceAll(s.Scope[0], ":", "-") + "-project-state"
				res.Version = int(s.Checkpoints)
				res.Items = map[string]int{"avoid_repeating": 1, "invariants": 2}
			}
			resp.Checkpoints = append(resp.Checkpoints, res)
		}
		f.replyLocked(w, http.StatusOK, resp)
	})
}

// replyLocked is reply for a caller holding f.mu.
func (f *fakeDaemon) replyLocked(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(api.VersionHeader, f.version)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
