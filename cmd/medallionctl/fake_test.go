package main

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/version"
)

// fakeDaemon answers the local API on a real Unix socket from memory. It
// stands in for medalliond at the edge of the process so the CLI can be
// tested in-process; the real daemon is driven by the end-to-end tests in
// internal/e2e. It follows the API contract of package api: validation with
// every field named, 404/409 codes, version history.
type fakeDaemon struct {
	sock string
	// version is sent in api.VersionHeader.
	version string
	// statusErr, when set, is the answer to GET /v1/status.
	statusErr *api.Error

	mu       sync.Mutex
	clock    time.Time
	versions map[string][]*medallion.Medallion
	requests []string

	// ingest is Status.Ingest. sessions (most recently active first) and
	// episodes answer the session endpoints, checkpointErrs fails the
	// checkpoint of a session with that message, and checkpointReqs
	// records the checkpoint requests. noIngest answers the session and
	// checkpoint endpoints with 404, like a daemon without ingestion.
	ingest *api.IngestStatus
	// llm is Status.LLM.
	llm            *api.LLMStatus
	noIngest       bool
	sessions       []episode.SessionInfo
	episodes       map[string][]episode.BufferedEvent
	checkpointErrs map[string]string
	checkpointReqs []api.CheckpointRequest
	// disk is Status.Disk, storeDamage Status.StoreDamage.
	disk        *api.DiskStatus
	storeDamage string
}

// socketPath returns a fresh socket path short enough for sun_path, in a
// directory removed at the end of the test.
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "med")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "d.sock")
}

// startFake serves a fake daemon on a new socket.
func startFake(t *testing.T) *fakeDaemon {
	t.Helper()
	return startFakeAt(t, socketPath(t))
}

func startFakeAt(t *testing.T, sock string) *fakeDaemon {
	t.Helper()
	f := &fakeDaemon{
		sock:     sock,
		version:  version.String(),
		clock:    time.Date(2025, 11, 17, 9, 30, 0, 0, time.UTC),
		versions: map[string][]*medallion.Medallion{},
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(f.handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return f
}

// seen returns the requests served so far, as "METHOD /path?query".
func (f *fakeDaemon) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeDaemon) latest(id string) *medallion.Medallion {
	f.mu.Lock()
	defer f.mu.Unlock()
	vs := f.versions[id]
	if len(vs) == 0 {
		return nil
	}
	return vs[len(vs)-1].Clone()
}

func (f *fakeDaemon) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		statusErr, version, count, ingest, llm, disk, damage := f.statusErr, f.version, len(f.versions), f.ingest, f.llm, f.disk, f.storeDamage
		f.mu.Unlock()
		if statusErr != nil {
			f.reply(w, http.StatusInternalServerError, statusErr)
			return
		}
		f.reply(w, http.StatusOK, &api.Status{
			Version: version, PID: 4242, StartedAt: "2025-11-17T08:00:00.000000Z", UptimeSec: 5400,
			DataDir: "/home/ada/.local/share/medallion", Socket: "/run/user/1000/medallion/medallion.sock",
			Medallions: count, StoreBytes: 3 << 20, Ingest: ingest, LLM: llm, Disk: disk, StoreDamage: damage,
		})
	})
	mux.HandleFunc("GET /v1/medallions", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		limit := api.DefaultListLimit
		if s := q.Get("limit"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				f.reply(w, http.StatusBadRequest, &api.Error{Error: "bad limit", Code: api.CodeInvalid})
				return
			}
			limit = n
		}
		if len(q["node"])+len(q["tag"]) == 0 {
			f.reply(w, http.StatusBadRequest, &api.Error{Error: "give at least one node or tag", Code: api.CodeInvalid})
			return
		}
		f.reply(w, http.StatusOK, &api.ListResponse{Medallions: f.list(q["node"], q["tag"], limit)})
	})
	mux.HandleFunc("GET /v1/medallions/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		vs := f.versions[r.PathValue("id")]
		f.mu.Unlock()
		if len(vs) == 0 {
			f.reply(w, http.StatusNotFound, &api.Error{Error: "medallion " + strconv.Quote(r.PathValue("id")) + " not found", Code: api.CodeNotFound})
			return
		}
		m := vs[len(vs)-1]
		if s := r.URL.Query().Get("version"); s != "" {
			n, _ := strconv.Atoi(s)
			if n < 1 || n > len(vs) {
				f.reply(w, http.StatusNotFound, &api.Error{Error: "version " + s + " of medallion " + strconv.Quote(r.PathValue("id")) + " not found", Code: api.CodeNotFound})
				return
			}
			m = vs[n-1]
		}
		f.reply(w, http.StatusOK, m)
	})
	mux.HandleFunc("GET /v1/medallions/{id}/history", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		vs := f.versions[r.PathValue("id")]
		f.mu.Unlock()
		if len(vs) == 0 {
			f.reply(w, http.StatusNotFound, &api.Error{Error: "medallion " + strconv.Quote(r.PathValue("id")) + " not found", Code: api.CodeNotFound})
			return
		}
		h := &api.HistoryResponse{ID: r.PathValue("id")}
		for _, m := range vs {
			h.Versions = append(h.Versions, medallion.VersionInfo{Version: m.Meta.Version, UpdatedAt: m.Meta.UpdatedAt, Model: m.Meta.Model, Status: m.Meta.Status})
		}
		f.reply(w, http.StatusOK, h)
	})
	mux.HandleFunc("GET /v1/load", f.load) // load_test.go
	mux.HandleFunc("POST /v1/medallions", func(w http.ResponseWriter, r *http.Request) { f.write(w, r, "") })
	mux.HandleFunc("PUT /v1/medallions/{id}", func(w http.ResponseWriter, r *http.Request) { f.write(w, r, r.PathValue("id")) })
	f.sessionRoutes(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
}

func (f *fakeDaemon) list(nodes, tags []string, limit int) []*medallion.Medallion {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []*medallion.Medallion{}
	for _, vs := range f.versions {
		m := vs[len(vs)-1]
		ok := true
		for _, n := range nodes {
			ok = ok && slices.Contains(m.Scope.GraphNodes, n)
		}
		if len(tags) > 0 {
			ok = ok && slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(m.Scope.Tags, t) })
		}
		if ok {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *medallion.Medallion) int {
		if a.Meta.UpdatedAt != b.Meta.UpdatedAt {
			if a.Meta.UpdatedAt > b.Meta.UpdatedAt {
				return -1
			}
			return 1
		}
		if a.Meta.MedallionID < b.Meta.MedallionID {
			return -1
		}
		return 1
	})
	return out[:min(limit, len(out))]
}

// configure changes the fake's settings safely while it serves.
func (f *fakeDaemon) configure(change func(*fakeDaemon)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

// write creates (POST, or PUT of a new id) or updates a medallion the way
// the store contract says: timestamps and version set by the daemon, a stale
// meta.version refused, every invalid field reported.
func (f *fakeDaemon) write(w http.ResponseWriter, r *http.Request, pathID string) {
	var m medallion.Medallion
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		f.reply(w, http.StatusBadRequest, &api.Error{Error: "decode medallion: " + err.Error(), Code: api.CodeInvalid})
		return
	}
	if pathID != "" && pathID != m.Meta.MedallionID {
		f.reply(w, http.StatusBadRequest, &api.Error{Error: "meta.medallion_id does not match the URL", Code: api.CodeInvalid})
		return
	}
	status, body := f.store(&m, pathID)
	f.reply(w, status, body)
}

func (f *fakeDaemon) store(m *medallion.Medallion, pathID string) (int, any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = f.clock.Add(time.Minute)
	now := medallion.FormatTime(f.clock)
	vs := f.versions[m.Meta.MedallionID]
	created := len(vs) == 0
	switch {
	case created:
		if m.Meta.CreatedAt == "" {
			m.Meta.CreatedAt = now
		}
		if m.Meta.UpdatedAt == "" {
			m.Meta.UpdatedAt = m.Meta.CreatedAt
		}
		m.Meta.Version = 1
	case pathID == "":
		return http.StatusConflict, &api.Error{Error: "medallion " + strconv.Quote(m.Meta.MedallionID) + " already exists", Code: api.CodeExists}
	default:
		last := vs[len(vs)-1].Meta
		if m.Meta.Version > 0 && m.Meta.Version != last.Version {
			return http.StatusConflict, &api.Error{
				Error: "version conflict: medallion " + strconv.Quote(m.Meta.MedallionID) + " is at version " + strconv.Itoa(last.Version) + ", the update is based on " + strconv.Itoa(m.Meta.Version),
				Code:  api.CodeConflict,
			}
		}
		m.Meta.CreatedAt, m.Meta.UpdatedAt, m.Meta.Version = last.CreatedAt, now, last.Version+1
	}
	if m.Meta.Status == "" {
		m.Meta.Status = medallion.StatusActive
	}
	m.Normalize()
	if err := m.Validate(); err != nil {
		var ve *medallion.ValidationError
		errors.As(err, &ve)
		return http.StatusBadRequest, &api.Error{Error: ve.Error(), Code: api.CodeInvalid, Fields: ve.Problems}
	}
	f.versions[m.Meta.MedallionID] = append(vs, m)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, &api.PutResponse{Created: created, Medallion: m.Clone()}
}

func (f *fakeDaemon) reply(w http.ResponseWriter, status int, v any) {
	f.mu.Lock()
	version := f.version
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(api.VersionHeader, version)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
