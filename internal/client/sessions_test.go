package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/episode"
)

func sampleSession(id string) episode.SessionInfo {
	return episode.SessionInfo{
		ID: id, Agent: "claude-code", CWD: "/home/ada/muse", Scope: []string{"repo:muse"},
		Events: 12, ByKind: map[string]int64{"tool_call": 12}, Buffered: 12,
		LastEventAt: time.Date(2025, 11, 17, 9, 30, 0, 0, time.UTC),
		Files:       []string{"/home/ada/.claude/projects/-home-ada-muse/" + id + ".jsonl"},
	}
}

// TestSessionIDsRoundTrip checks that every session id reaches the
// server's {id...} pattern unchanged: subagent ids keep their "/" as a
// separator, and characters with a meaning in URLs are escaped.
func TestSessionIDsRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var gotIDs, gotRaw []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sessions/{id...}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotIDs = append(gotIDs, r.PathValue("id"))
		gotRaw = append(gotRaw, r.URL.EscapedPath())
		mu.Unlock()
		writeJSON(w, 200, api.SessionResponse{Session: episode.SessionInfo{ID: r.PathValue("id")}})
	})
	c := serve(t, mux)
	tests := []struct {
		id, raw string
	}{
		{"0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d", "/v1/sessions/0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d"},
		{"0b9c6a1e/agent-a1b2", "/v1/sessions/0b9c6a1e/agent-a1b2"},
		{"odd id?#%", "/v1/sessions/odd%20id%3F%23%25"},
		{"ünï/cödé", "/v1/sessions/%C3%BCn%C3%AF/c%C3%B6d%C3%A9"},
	}
	for _, tt := range tests {
		resp, err := c.Session(context.Background(), tt.id, 0, 0)
		if err != nil {
			t.Fatalf("Session(%q): %v", tt.id, err)
		}
		if resp.Session.ID != tt.id {
			t.Errorf("Session(%q) answered for %q", tt.id, resp.Session.ID)
		}
		if resp.Events == nil {
			t.Errorf("Session(%q): events is nil, want an empty list", tt.id)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, tt := range tests {
		if gotIDs[i] != tt.id || gotRaw[i] != tt.raw {
			t.Errorf("id %q reached the server as %q (path %s), want %s", tt.id, gotIDs[i], gotRaw[i], tt.raw)
		}
	}
}

func TestUnrequestableSessionIDs(t *testing.T) {
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
	}))
	for _, id := range []string{"", "a//b", "a/", "/a", "..", "a/./b"} {
		if _, err := c.Session(context.Background(), id, 0, 0); err == nil || !strings.Contains(err.Error(), "invalid session id") {
			t.Errorf("Session(%q) error = %v, want an invalid session id error", id, err)
		}
	}
}

func TestSessionsNullIsEmpty(t *testing.T) {
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/sessions":
			io.WriteString(w, `{"sessions":null}`)
		default:
			io.WriteString(w, `{"checkpoints":null}`)
		}
	}))
	ss, err := c.Sessions(context.Background())
	if err != nil || ss == nil || len(ss) != 0 {
		t.Errorf("Sessions = %#v, %v; want an empty non-nil slice", ss, err)
	}
	cp, err := c.Checkpoint(context.Background(), api.CheckpointRequest{})
	if err != nil || cp.Checkpoints == nil || len(cp.Checkpoints) != 0 {
		t.Errorf("Checkpoint = %#v, %v; want an empty non-nil list", cp, err)
	}
}

func TestIngestionDisabled(t *testing.T) {
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 404, api.Error{Error: "ingestion is not enabled in this daemon", Code: api.CodeNotFound})
	}))
	_, err := c.Sessions(context.Background())
	var ae *APIError
	if !errors.As(err, &ae) || ae.Body.Code != api.CodeNotFound || err.Error() != "ingestion is not enabled in this daemon" {
		t.Errorf("Sessions error = %v, want the daemon's 404", err)
	}
}

// TestCheckpointOutlastsTheClientTimeout: a checkpoint runs the curator
// before answering, so the short lookup timeout must not cut it off.
func TestCheckpointOutlastsTheClientTimeout(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
		writeJSON(w, 200, api.CheckpointResponse{Checkpoints: []api.CheckpointResult{{SessionID: "s1", Events: 3}}})
	}))
	c.Timeout = 20 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := c.Checkpoint(context.Background(), api.CheckpointRequest{SessionID: "s1"})
		done <- err
	}()
	// Once the checkpoint is held by the daemon, a status request with the
	// same 20ms timeout runs out; only then is the checkpoint released, so
	// it has waited longer than Client.Timeout.
	<-arrived
	holdStatus := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	holdStatus.Timeout = c.Timeout
	if _, err := holdStatus.Status(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("status with a 20ms timeout: %v, want a deadline error", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("Checkpoint: %v, want it to wait past Client.Timeout", err)
	}
}

// TestCheckpointEvidence: an evidence checkpoint goes over the wire as
// seed 002's fields, and its result comes back with what was stored.
func TestCheckpointEvidence(t *testing.T) {
	var body string
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/checkpoint", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		writeJSON(w, 200, api.CheckpointResponse{Checkpoints: []api.CheckpointResult{{
			SessionID: "evidence-1", Scope: []string{"repo:x"}, Trigger: "evidence", Events: 2,
			MedallionID: "med-1", Version: 1, Items: map[string]int{"invariants": 1},
		}}})
	})
	c := serve(t, mux)
	resp, err := c.Checkpoint(context.Background(), api.CheckpointRequest{
		Nodes: []string{"repo:x"}, Tags: []string{"t"},
		Evidence: &api.Evidence{SessionSummary: "s", Transcripts: []string{"user: hi"}, Artefacts: map[string]api.Artefact{"k": "v"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"nodes":["repo:x"],"tags":["t"],"evidence":{"session_summary":"s","transcripts":["user: hi"],"artefacts":{"k":"v"}}}`
	if strings.TrimSpace(body) != want {
		t.Errorf("body = %s\nwant %s", body, want)
	}
	if r := resp.Checkpoints; len(r) != 1 || r[0].Version != 1 || r[0].Items["invariants"] != 1 {
		t.Errorf("Checkpoint = %+v", r)
	}
}
