package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

// The Badger store is the episode store the daemon serves.
var _ store.EpisodeStore = (*store.Badger)(nil)

// Sessions the tests ingest: a Claude Code session, one of its subagents
// (an id with a "/"), and a session whose id needs escaping in a URL.
const (
	mainSession = "0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d"
	subSession  = mainSession + "/agent-a1b2c3"
	oddSession  = "odd id?#%"
	longSession = "long"
	longEvents  = 250
)

// ingest stores n events of session id as one batch of file key, the way
// the tailer does.
func ingest(t *testing.T, st *store.Badger, key, id, agent string, n int, scope []string) {
	t.Helper()
	t0 := time.Date(2025, 11, 17, 9, 0, 0, 0, time.UTC)
	b := store.IngestBatch{
		File: store.FileState{
			Key: key, Path: "/transcripts/" + key + ".jsonl", Watch: "test", Format: "jsonl",
			Offset: int64(100 * n), Size: int64(100 * n), Lines: int64(n), Events: int64(n),
		},
		Scopes: map[string][]string{id: scope},
	}
	for i := range n {
		e := transcript.Event{
			ID: fmt.Sprintf("%s:%d", key, i), SessionID: id, Agent: agent, CWD: "/home/ada/muse",
			Kind: transcript.KindToolCall, Tool: "Bash", Command: fmt.Sprintf("echo %d", i),
			Time:   t0.Add(time.Duration(i) * time.Second),
			Source: transcript.Source{File: key, Offset: int64(100 * i)},
		}
		if strings.Contains(id, "/") {
			e.ParentSessionID = mainSession
		}
		b.Events = append(b.Events, e)
	}
	res, err := st.Ingest(context.Background(), b)
	if err != nil {
		t.Fatalf("ingest %s: %v", id, err)
	}
	if res.Added != n {
		t.Fatalf("ingest %s: added %d of %d events", id, res.Added, n)
	}
}

// checkpointer is the daemon's checkpoint function as the server sees it:
// it records requests and answers from the store.
type checkpointer struct {
	st   *store.Badger
	mu   sync.Mutex
	reqs []api.CheckpointRequest
}

func (c *checkpointer) checkpoint(ctx context.Context, req api.CheckpointRequest) (api.CheckpointResponse, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.mu.Unlock()
	if req.SessionID == "boom" {
		return api.CheckpointResponse{}, errors.New("curator queue closed")
	}
	if len(req.Nodes) > 0 {
		return api.CheckpointResponse{Checkpoints: []api.CheckpointResult{{
			SessionID: "evidence-1", Scope: req.Nodes, Trigger: "evidence", Events: len(req.Evidence.Transcripts),
		}}}, nil
	}
	sessions, err := c.st.Sessions(ctx)
	if err != nil {
		return api.CheckpointResponse{}, err
	}
	var resp api.CheckpointResponse
	found := false
	for _, s := range sessions {
		if req.SessionID != "" && s.ID != req.SessionID {
			continue
		}
		found = true
		if s.Buffered > 0 {
			resp.Checkpoints = append(resp.Checkpoints, api.CheckpointResult{
				SessionID: s.ID, Scope: s.Scope, Trigger: "manual", Events: int(s.Buffered),
			})
		}
	}
	if req.SessionID != "" && !found {
		return api.CheckpointResponse{}, fmt.Errorf("checkpoint session %s: %w", req.SessionID, store.ErrNotFound)
	}
	return resp, nil
}

func (c *checkpointer) requests() []api.CheckpointRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]api.CheckpointRequest(nil), c.reqs...)
}

// ingesting starts a server with ingestion enabled over a store holding the
// test sessions.
func ingesting(t *testing.T) (*env, *checkpointer) {
	t.Helper()
	cp := &checkpointer{}
	e := startWith(t, func(cfg *Config, st *store.Badger) {
		cp.st = st
		cfg.Episodes = st
		cfg.Checkpoint = cp.checkpoint
	})
	ingest(t, e.store, "1:10", mainSession, transcript.AgentClaudeCode, 5, []string{"repo:muse"})
	ingest(t, e.store, "1:11", subSession, transcript.AgentClaudeCode, 2, []string{"repo:muse"})
	ingest(t, e.store, "1:12", oddSession, "aider", 1, nil)
	ingest(t, e.store, "1:13", longSession, transcript.AgentCodex, longEvents, []string{"repo:site"})
	return e, cp
}

func TestSessionsEndpoint(t *testing.T) {
	e, _ := ingesting(t)
	ctx := context.Background()
	var got api.SessionsResponse
	e.want(t, http.StatusOK, "GET", "/v1/sessions", nil, &got)
	want, err := e.store.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 4 {
		t.Fatalf("store has %d sessions, want 4", len(want))
	}
	// The store's list, in the store's order, with times that survived the
	// JSON round trip.
	if !reflect.DeepEqual(got.Sessions, want) {
		t.Errorf("GET /v1/sessions =\n%+v\nwant the store's\n%+v", got.Sessions, want)
	}
}

func TestSessionEndpoint(t *testing.T) {
	e, _ := ingesting(t)
	ctx := context.Background()
	tests := []struct {
		name, path, id string
		after          uint64
		limit          int
		wantN          int
	}{
		{"plain id", "/v1/sessions/" + mainSession, mainSession, 0, 200, 5},
		{"subagent id keeps its slash", "/v1/sessions/" + subSession, subSession, 0, 200, 2},
		{"escaped id", "/v1/sessions/odd%20id%3F%23%25", oddSession, 0, 200, 1},
		{"default page", "/v1/sessions/long", longSession, 0, 200, 200},
		{"next page", "/v1/sessions/long?after=200&limit=100", longSession, 200, 100, longEvents - 200},
		{"small page", "/v1/sessions/long?after=10&limit=3", longSession, 10, 3, 3},
		{"past the end", "/v1/sessions/long?after=100000", longSession, 100000, 200, 0},
		{"largest page", "/v1/sessions/long?limit=10000", longSession, 0, 10000, longEvents},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got api.SessionResponse
			e.want(t, http.StatusOK, "GET", tt.path, nil, &got)
			info, err := e.store.Session(ctx, tt.id)
			if err != nil || info == nil {
				t.Fatalf("store.Session(%q) = %v, %v", tt.id, info, err)
			}
			if !reflect.DeepEqual(got.Session, *info) {
				t.Errorf("session =\n%+v\nwant the store's\n%+v", got.Session, *info)
			}
			want, err := e.store.Episode(ctx, tt.id, tt.after, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got.Events == nil {
				t.Fatal("events is null, want a list")
			}
			if len(got.Events) != tt.wantN || len(want) != tt.wantN {
				t.Fatalf("%d events (store: %d), want %d", len(got.Events), len(want), tt.wantN)
			}
			for i := range want {
				if got.Events[i].Seq != want[i].Seq || got.Events[i].Event.ID != want[i].Event.ID ||
					got.Events[i].Event.Command != want[i].Event.Command || !got.Events[i].Event.Time.Equal(want[i].Event.Time) {
					t.Errorf("event %d = %+v, want %+v", i, got.Events[i], want[i])
				}
				if got.Events[i].Seq <= tt.after {
					t.Errorf("event %d has seq %d, not after %d", i, got.Events[i].Seq, tt.after)
				}
			}
		})
	}
}

// TestPagingCoversTheEpisode pages through a session the way medallionctl
// does and checks every buffered event comes exactly once, in order.
func TestPagingCoversTheEpisode(t *testing.T) {
	e, _ := ingesting(t)
	var after uint64
	var ids []string
	for pages := 0; ; pages++ {
		if pages > longEvents {
			t.Fatal("paging does not end")
		}
		var page api.SessionResponse
		e.want(t, http.StatusOK, "GET", fmt.Sprintf("/v1/sessions/long?after=%d&limit=64", after), nil, &page)
		for _, be := range page.Events {
			if be.Seq <= after {
				t.Fatalf("seq %d after %d", be.Seq, after)
			}
			after = be.Seq
			ids = append(ids, be.Event.ID)
		}
		if len(page.Events) < 64 {
			break
		}
	}
	if len(ids) != longEvents {
		t.Fatalf("paging gave %d events, want %d", len(ids), longEvents)
	}
	for i, id := range ids {
		if want := fmt.Sprintf("1:13:%d", i); id != want {
			t.Fatalf("event %d is %s, want %s", i, id, want)
		}
	}
}

func TestCheckpointEndpoint(t *testing.T) {
	e, cp := ingesting(t)
	tests := []struct {
		name string
		body any
		req  api.CheckpointRequest
		want []string // sessions checkpointed
	}{
		{"empty body: every session", "", api.CheckpointRequest{},
			[]string{mainSession, subSession, oddSession, longSession}},
		{"empty object: every session", "{}", api.CheckpointRequest{},
			[]string{mainSession, subSession, oddSession, longSession}},
		{"one session with a note", api.CheckpointRequest{SessionID: subSession, Note: "parser done"},
			api.CheckpointRequest{SessionID: subSession, Note: "parser done"}, []string{subSession}},
		{"evidence for a scope",
			`{"nodes": ["repo:demo"], "tags": ["seed"], "note": "n", "evidence": {"session_summary": "s", "transcripts": ["user: hi"], "artefacts": {"k": "v"}}}`,
			api.CheckpointRequest{Nodes: []string{"repo:demo"}, Tags: []string{"seed"}, Note: "n", Evidence: &api.Evidence{
				SessionSummary: "s", Transcripts: []string{"user: hi"}, Artefacts: map[string]api.Artefact{"k": "v"},
			}},
			[]string{"evidence-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(cp.requests())
			var got api.CheckpointResponse
			e.want(t, http.StatusOK, "POST", "/v1/checkpoint", tt.body, &got)
			var ids []string
			for _, r := range got.Checkpoints {
				ids = append(ids, r.SessionID)
			}
			if !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(tt.want))) {
				t.Errorf("checkpointed %v, want %v", ids, tt.want)
			}
			reqs := cp.requests()[before:]
			if len(reqs) != 1 || !reflect.DeepEqual(reqs[0], tt.req) {
				t.Errorf("Checkpoint got %+v, want one %+v", reqs, tt.req)
			}
		})
	}
}

func TestCheckpointAnswersAList(t *testing.T) {
	// A checkpoint function that found nothing to do may return a nil
	// list; clients get [] rather than null.
	e := startWith(t, func(cfg *Config, _ *store.Badger) {
		cfg.Checkpoint = func(context.Context, api.CheckpointRequest) (api.CheckpointResponse, error) {
			return api.CheckpointResponse{}, nil
		}
	})
	res := e.do(t, "POST", "/v1/checkpoint", "", nil)
	if res.status != http.StatusOK || strings.TrimSpace(string(res.body)) != "{\n  \"checkpoints\": []\n}" {
		t.Errorf("status %d, body %s", res.status, res.body)
	}
}

func TestSessionErrors(t *testing.T) {
	e, cp := ingesting(t)
	tests := []struct {
		name         string
		method, path string
		body         any
		status       int
		code         string
		want         []string
	}{
		{name: "unknown session", method: "GET", path: "/v1/sessions/nope",
			status: 404, code: api.CodeNotFound, want: []string{"session nope not found"}},
		{name: "unknown subagent", method: "GET", path: "/v1/sessions/" + mainSession + "/agent-zz",
			status: 404, code: api.CodeNotFound, want: []string{"session " + mainSession + "/agent-zz not found"}},
		{name: "no id", method: "GET", path: "/v1/sessions/",
			status: 400, code: api.CodeInvalid, want: []string{"give a session id"}},
		{name: "list takes no parameters", method: "GET", path: "/v1/sessions?agent=codex",
			status: 400, code: api.CodeInvalid, want: []string{`unknown query parameter "agent"`}},
		{name: "misspelt parameter", method: "GET", path: "/v1/sessions/long?limt=5",
			status: 400, code: api.CodeInvalid, want: []string{`unknown query parameter "limt"`, `"after", "limit"`}},
		{name: "limit 0", method: "GET", path: "/v1/sessions/long?limit=0",
			status: 400, code: api.CodeInvalid, want: []string{"limit must be a whole number from 1 to 10000", `"0"`}},
		{name: "limit too big", method: "GET", path: "/v1/sessions/long?limit=10001",
			status: 400, code: api.CodeInvalid, want: []string{"limit must be"}},
		{name: "limit not a number", method: "GET", path: "/v1/sessions/long?limit=all",
			status: 400, code: api.CodeInvalid, want: []string{"limit must be", `"all"`}},
		{name: "negative after", method: "GET", path: "/v1/sessions/long?after=-1",
			status: 400, code: api.CodeInvalid, want: []string{"after must be a sequence number", `"-1"`}},
		{name: "after twice", method: "GET", path: "/v1/sessions/long?after=1&after=2",
			status: 400, code: api.CodeInvalid, want: []string{"give after once"}},
		{name: "checkpoint by GET", method: "GET", path: "/v1/checkpoint",
			status: 405, code: api.CodeInvalid, want: []string{"method GET is not allowed", "POST"}},
		{name: "sessions by POST", method: "POST", path: "/v1/sessions",
			status: 405, code: api.CodeInvalid, want: []string{"method POST is not allowed"}},
		{name: "checkpoint unknown session", method: "POST", path: "/v1/checkpoint", body: api.CheckpointRequest{SessionID: "nope"},
			status: 404, code: api.CodeNotFound, want: []string{"session nope not found (medallionctl sessions lists them)"}},
		{name: "checkpoint failing", method: "POST", path: "/v1/checkpoint", body: api.CheckpointRequest{SessionID: "boom"},
			status: 500, code: api.CodeInternal, want: []string{"curator queue closed"}},
		{name: "checkpoint unknown field", method: "POST", path: "/v1/checkpoint", body: `{"session": "x"}`,
			status: 400, code: api.CodeInvalid, want: []string{`unknown field "session"`, `"session_id", "note"`}},
		{name: "checkpoint wrong type", method: "POST", path: "/v1/checkpoint", body: `{"session_id": 7}`,
			status: 400, code: api.CodeInvalid, want: []string{"invalid JSON", "session_id"}},
		{name: "checkpoint two values", method: "POST", path: "/v1/checkpoint", body: `{} {}`,
			status: 400, code: api.CodeInvalid, want: []string{"more than one JSON value"}},
		{name: "checkpoint truncated", method: "POST", path: "/v1/checkpoint", body: `{"note": "x`,
			status: 400, code: api.CodeInvalid, want: []string{"ends in the middle"}},
		{name: "checkpoint blank session", method: "POST", path: "/v1/checkpoint", body: `{"session_id": "  "}`,
			status: 400, code: api.CodeInvalid, want: []string{"session_id must not be blank"}},
		{name: "evidence without nodes", method: "POST", path: "/v1/checkpoint", body: `{"evidence": {"session_summary": "s"}}`,
			status: 400, code: api.CodeInvalid, want: []string{"nodes: give the graph nodes"}},
		{name: "nodes without evidence", method: "POST", path: "/v1/checkpoint", body: `{"nodes": ["repo:x"]}`,
			status: 400, code: api.CodeInvalid, want: []string{"evidence: give session_summary, transcripts or artefacts"}},
		{name: "evidence and a session", method: "POST", path: "/v1/checkpoint",
			body:   `{"session_id": "s", "nodes": ["repo:x"], "evidence": {"session_summary": "s"}}`,
			status: 400, code: api.CodeInvalid, want: []string{"session_id and nodes exclude each other"}},
		{name: "blank node", method: "POST", path: "/v1/checkpoint", body: `{"nodes": [""], "evidence": {"session_summary": "s"}}`,
			status: 400, code: api.CodeInvalid, want: []string{"nodes[0] is blank"}},
		{name: "empty evidence", method: "POST", path: "/v1/checkpoint", body: `{"nodes": ["repo:x"], "evidence": {}}`,
			status: 400, code: api.CodeInvalid, want: []string{"all empty"}},
		{name: "evidence wrong type", method: "POST", path: "/v1/checkpoint", body: `{"nodes": ["repo:x"], "evidence": {"transcripts": "user: hi"}}`,
			status: 400, code: api.CodeInvalid, want: []string{"invalid JSON", "evidence.transcripts"}},
		{name: "evidence unknown field", method: "POST", path: "/v1/checkpoint", body: `{"nodes": ["repo:x"], "evidence": {"summary": "s"}}`,
			status: 400, code: api.CodeInvalid, want: []string{`unknown field "summary"`, `"session_summary"`}},
		{name: "checkpoint with parameters", method: "POST", path: "/v1/checkpoint?session=x",
			status: 400, code: api.CodeInvalid, want: []string{`unknown query parameter "session"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkError(t, e.do(t, tt.method, tt.path, tt.body, nil), tt.status, tt.code, tt.want...)
		})
	}
	// Only the requests that decoded reached the checkpoint function.
	want := []api.CheckpointRequest{{SessionID: "nope"}, {SessionID: "boom"}}
	if got := cp.requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("Checkpoint got %+v, want %+v", got, want)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "[ERROR] api: request failed") || !strings.Contains(logs, "curator queue closed") {
		t.Errorf("the failed checkpoint was not logged at Error:\n%s", logs)
	}
}

func TestIngestionDisabled(t *testing.T) {
	e := start(t)
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/sessions"},
		{"GET", "/v1/sessions/" + mainSession},
		{"POST", "/v1/checkpoint"},
	} {
		checkError(t, e.do(t, r.method, r.path, nil, nil), http.StatusNotFound, api.CodeNotFound, "ingestion is not enabled")
	}
	res := e.do(t, "GET", "/v1/status", nil, nil)
	if res.status != http.StatusOK || strings.Contains(string(res.body), `"ingest"`) {
		t.Errorf("status without ingestion: %d %s", res.status, res.body)
	}
}

func TestStatusIngest(t *testing.T) {
	want := &api.IngestStatus{
		Watches:     []api.WatchStatus{{Name: "claude-code", Path: "/home/ada/.claude/projects", Format: "claude-code", Exists: true, Files: 3}},
		WatchedDirs: 4, Files: 3, Bytes: 12345, Lines: 100, Events: 90, Duplicates: 2,
		Skipped: map[string]int64{"invalid_json": 1}, Redactions: 1, BacklogBytes: 512,
		LastIngestAt: "2025-11-17T09:27:01.000000Z", Sessions: 2, BufferedEvents: 7, Checkpoints: 1,
		Errors: []string{"watch limit reached"},
	}
	var calls int
	var mu sync.Mutex
	e := startWith(t, func(cfg *Config, _ *store.Badger) {
		cfg.Ingest = func() *api.IngestStatus {
			mu.Lock()
			defer mu.Unlock()
			calls++
			return want
		}
	})
	var st api.Status
	e.want(t, http.StatusOK, "GET", "/v1/status", nil, &st)
	if !reflect.DeepEqual(st.Ingest, want) {
		t.Errorf("status ingest =\n%+v\nwant\n%+v", st.Ingest, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("Ingest called %d times for one status, want 1", calls)
	}
}

// TestClientRoundTrip drives the endpoints through the real client: the
// ids it escapes segment by segment must be the ids the server looks up.
func TestClientRoundTrip(t *testing.T) {
	e, cp := ingesting(t)
	c := client.New(e.sock)
	ctx := context.Background()

	sessions, err := c.Sessions(ctx)
	if err != nil || len(sessions) != 4 {
		t.Fatalf("Sessions = %d sessions, %v", len(sessions), err)
	}
	for _, id := range []string{mainSession, subSession, oddSession} {
		resp, err := c.Session(ctx, id, 0, 0)
		if err != nil {
			t.Fatalf("Session(%q): %v", id, err)
		}
		if resp.Session.ID != id || int64(len(resp.Events)) != resp.Session.Buffered {
			t.Errorf("Session(%q) = session %q with %d of %d events", id, resp.Session.ID, len(resp.Events), resp.Session.Buffered)
		}
	}
	page, err := c.Session(ctx, longSession, 5, 10)
	if err != nil || len(page.Events) != 10 || page.Events[0].Seq <= 5 {
		t.Errorf("Session(long, after 5, limit 10) = %+v, %v", page, err)
	}

	_, err = c.Session(ctx, "nope", 0, 0)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Body.Code != api.CodeNotFound {
		t.Errorf("Session(nope) error = %v, want a 404", err)
	}

	resp, err := c.Checkpoint(ctx, api.CheckpointRequest{SessionID: subSession, Note: "n"})
	if err != nil || len(resp.Checkpoints) != 1 || resp.Checkpoints[0].SessionID != subSession || resp.Checkpoints[0].Events != 2 {
		t.Errorf("Checkpoint = %+v, %v", resp, err)
	}
	if got := cp.requests(); len(got) != 1 || !reflect.DeepEqual(got[0], api.CheckpointRequest{SessionID: subSession, Note: "n"}) {
		t.Errorf("Checkpoint got %+v", got)
	}
	_, err = c.Checkpoint(ctx, api.CheckpointRequest{SessionID: "nope"})
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Errorf("Checkpoint(nope) error = %v, want a 404", err)
	}
	// Events the checkpointer left in the store are still there: the
	// server itself never clears a buffer.
	info, err := e.store.Session(ctx, subSession)
	if err != nil || info.Buffered != 2 {
		t.Errorf("subagent after checkpoint: %+v, %v", info, err)
	}
}
