package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// modelMade is sample(id) after a Tier 1 pass: a pending decision D-002, a
// pending question Q-001, two pending invariants and an approved one, a
// pending summary, and evidence for some; D-001 is the user's.
func modelMade(id string, nodes ...string) *medallion.Medallion {
	m := sample(id, nodes...)
	m.Meta.Model = "tier1:qwen3"
	m.Decisions = append(m.Decisions, medallion.Decision{ID: "D-002", Statement: "keep ids out of the model", Rationale: "mem0 does", Confidence: 0.7})
	m.OpenQuestions = []medallion.OpenQuestion{{ID: "Q-001", Question: "is the cap per day or per session?", Priority: medallion.PriorityHigh}}
	m.Affordances.Invariants = []string{"a user's rule", "never store a key", "temperature 0", "approved rule"}
	m.Review = []medallion.Review{
		{Item: "summary", Text: m.Summary.HighLevel, Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: "D-002", Text: "keep ids out of the model", Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: "Q-001", Text: "is the cap per day or per session?", Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: "invariant", Text: "never store a key", Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: "invariant", Text: "temperature 0", Source: "tier1:qwen3", State: medallion.ReviewPending},
		{Item: "invariant", Text: "approved rule", Source: "tier1:qwen3", State: medallion.ReviewApproved},
	}
	m.Evidence = []medallion.Evidence{
		{Item: "D-002", SessionID: "s1", EventIDs: []string{"e7", "e9"}},
		{Item: "invariant", Text: "never store a key", SessionID: "s1", EventIDs: []string{"e3"}},
		{Item: "D-001", SessionID: "s0", EventIDs: []string{"e1"}},
	}
	return m
}

func refs(items []api.ReviewItem) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.MedallionID+":"+it.Ref)
	}
	return out
}

func TestReviewList(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	for _, m := range []*medallion.Medallion{modelMade("m1", "repo:muse"), modelMade("m2", "repo:other"), sample("plain", "repo:muse")} {
		if _, err := e.store.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	pending := []string{"summary", "D-002", "Q-001", "invariant:2", "invariant:3"}
	for _, tc := range []struct {
		query      string
		want       []string
		medallions int
	}{
		{"", append(prefixed("m1", pending), prefixed("m2", pending)...), 3},
		{"?node=repo:muse", prefixed("m1", pending), 2},
		{"?node=repo:none", []string{}, 0},
		{"?node=repo:muse&state=approved", []string{"m1:invariant:4"}, 2},
		{"?node=repo:muse&state=rejected", []string{}, 2},
		{"?node=repo:muse&state=all", prefixed("m1", append(slices.Clone(pending), "invariant:4")), 2},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var resp api.ReviewResponse
			e.want(t, http.StatusOK, "GET", "/v1/review"+tc.query, nil, &resp)
			if got := refs(resp.Items); !slices.Equal(got, tc.want) {
				t.Errorf("items %q, want %q", got, tc.want)
			}
			if resp.Medallions != tc.medallions {
				t.Errorf("medallions %d, want %d", resp.Medallions, tc.medallions)
			}
		})
	}

	var resp api.ReviewResponse
	e.want(t, http.StatusOK, "GET", "/v1/review?node=repo:muse", nil, &resp)
	d := resp.Items[1]
	if d.Kind != "decision" || d.Text != "keep ids out of the model" || d.Source != "tier1:qwen3" || d.State != medallion.ReviewPending ||
		d.Version != 1 || !strings.Contains(d.Detail, "mem0 does") || len(d.Evidence) != 1 || !slices.Equal(d.Evidence[0].EventIDs, []string{"e7", "e9"}) {
		t.Errorf("decision item %+v", d)
	}
	if inv := resp.Items[3]; inv.Kind != "invariant" || inv.Text != "never store a key" || len(inv.Evidence) != 1 || inv.Evidence[0].EventIDs[0] != "e3" {
		t.Errorf("invariant item %+v", inv)
	}
	if inv := resp.Items[4]; len(inv.Evidence) != 0 || inv.Evidence == nil {
		t.Errorf("an item without evidence: %+v (want an empty list)", inv)
	}

	for _, tc := range []struct{ query, want string }{
		{"?state=maybe", "state must be"},
		{"?node=", "must not be empty"},
		{"?nodes=x", "unknown query parameter"},
	} {
		checkError(t, e.do(t, "GET", "/v1/review"+tc.query, nil, nil), http.StatusBadRequest, api.CodeInvalid, tc.want)
	}
}

func prefixed(id string, refs []string) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = id + ":" + r
	}
	return out
}

// act posts a review action and returns the response.
func (e *env) act(t *testing.T, status int, req api.ReviewActionRequest) api.ReviewActionResponse {
	t.Helper()
	var resp api.ReviewActionResponse
	e.want(t, status, "POST", "/v1/review", req, &resp)
	return resp
}

func TestReviewActions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   api.ReviewActionRequest
		check func(t *testing.T, m *medallion.Medallion)
	}{
		{"approve a decision", api.ReviewActionRequest{Action: "approve", Item: "m1:D-002"}, func(t *testing.T, m *medallion.Medallion) {
			if len(m.Decisions) != 2 || m.Review[1].State != medallion.ReviewApproved {
				t.Errorf("decisions %+v review %+v", m.Decisions, m.Review[1])
			}
		}},
		{"approve without the medallion id", api.ReviewActionRequest{Action: "approve", Item: "Q-001"}, func(t *testing.T, m *medallion.Medallion) {
			if m.Review[2].State != medallion.ReviewApproved {
				t.Errorf("review %+v", m.Review[2])
			}
		}},
		{"reject a decision", api.ReviewActionRequest{Action: "reject", Item: "m1:D-002"}, func(t *testing.T, m *medallion.Medallion) {
			if len(m.Decisions) != 1 || m.Decisions[0].ID != "D-001" {
				t.Errorf("decisions %+v", m.Decisions)
			}
			if r := m.Review[1]; r.State != medallion.ReviewRejected || r.Text != "keep ids out of the model" {
				t.Errorf("review entry %+v: want it kept, rejected, with its text", r)
			}
		}},
		{"reject a question", api.ReviewActionRequest{Action: "reject", Item: "m1:Q-001"}, func(t *testing.T, m *medallion.Medallion) {
			if len(m.OpenQuestions) != 0 || m.Review[2].State != medallion.ReviewRejected {
				t.Errorf("questions %+v", m.OpenQuestions)
			}
		}},
		{"reject a list item by position", api.ReviewActionRequest{Action: "reject", Item: "m1:invariant:3"}, func(t *testing.T, m *medallion.Medallion) {
			if !slices.Equal(m.Affordances.Invariants, []string{"a user's rule", "never store a key", "approved rule"}) {
				t.Errorf("invariants %q", m.Affordances.Invariants)
			}
			if r := m.Review[4]; r.State != medallion.ReviewRejected || r.Text != "temperature 0" {
				t.Errorf("review entry %+v", r)
			}
		}},
		{"reject the summary", api.ReviewActionRequest{Action: "reject", Item: "m1:summary"}, func(t *testing.T, m *medallion.Medallion) {
			if m.Summary.HighLevel != "" || m.Review[0].State != medallion.ReviewRejected || m.Review[0].Text != "a daemon storing save files" {
				t.Errorf("summary %q, review %+v", m.Summary.HighLevel, m.Review[0])
			}
		}},
		{"reject an approved item", api.ReviewActionRequest{Action: "reject", Item: "invariant:4"}, func(t *testing.T, m *medallion.Medallion) {
			if slices.Contains(m.Affordances.Invariants, "approved rule") || m.Review[5].State != medallion.ReviewRejected {
				t.Errorf("invariants %q", m.Affordances.Invariants)
			}
		}},
		{"edit a decision", api.ReviewActionRequest{Action: "edit", Item: "m1:D-002", Text: "  keep ids in code \n"}, func(t *testing.T, m *medallion.Medallion) {
			if m.Decisions[1].Statement != "keep ids in code" || m.Decisions[1].Rationale != "mem0 does" || m.Review[1].State != medallion.ReviewApproved {
				t.Errorf("decision %+v review %+v", m.Decisions[1], m.Review[1])
			}
		}},
		{"edit a list item", api.ReviewActionRequest{Action: "edit", Item: "m1:invariant:2", Text: "never store an API key"}, func(t *testing.T, m *medallion.Medallion) {
			if m.Affordances.Invariants[1] != "never store an API key" || m.Review[3].State != medallion.ReviewApproved || m.Review[3].Text != "never store an API key" {
				t.Errorf("invariants %q review %+v", m.Affordances.Invariants, m.Review[3])
			}
			if m.Evidence[1].Text != "never store an API key" {
				t.Errorf("evidence did not follow the edit: %+v", m.Evidence[1])
			}
		}},
		{"edit the summary", api.ReviewActionRequest{Action: "edit", Item: "summary", Text: "a daemon"}, func(t *testing.T, m *medallion.Medallion) {
			if m.Summary.HighLevel != "a daemon" || m.Review[0].State != medallion.ReviewApproved {
				t.Errorf("summary %q", m.Summary.HighLevel)
			}
		}},
		{"edit a question", api.ReviewActionRequest{Action: "edit", Item: "Q-001", Text: "per day?"}, func(t *testing.T, m *medallion.Medallion) {
			if m.OpenQuestions[0].Question != "per day?" || m.OpenQuestions[0].Priority != medallion.PriorityHigh {
				t.Errorf("question %+v", m.OpenQuestions[0])
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t)
			ctx := context.Background()
			if _, err := e.store.Create(ctx, modelMade("m1", "repo:muse")); err != nil {
				t.Fatal(err)
			}
			resp := e.act(t, http.StatusOK, tc.req)
			if len(resp.Changes) != 1 || resp.Changes[0].MedallionID != "m1" || resp.Changes[0].Version != 2 {
				t.Fatalf("changes %+v", resp.Changes)
			}
			m, err := e.store.Get(ctx, "m1")
			if err != nil {
				t.Fatal(err)
			}
			if m.Meta.Version != 2 || m.Meta.Model != "user" {
				t.Errorf("meta %+v: want version 2 by user", m.Meta)
			}
			tc.check(t, m)
			hist, err := e.store.History(ctx, "m1")
			if err != nil || len(hist) != 2 || hist[0].Model != "tier1:qwen3" || hist[1].Model != "user" {
				t.Errorf("history %+v, %v", hist, err)
			}
		})
	}
}

func TestReviewRejectedStaysOut(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	if _, err := e.store.Create(ctx, modelMade("m1", "repo:muse")); err != nil {
		t.Fatal(err)
	}
	e.act(t, http.StatusOK, api.ReviewActionRequest{Action: "reject", Item: "m1:invariant:2"})
	var resp api.ReviewResponse
	e.want(t, http.StatusOK, "GET", "/v1/review?state=rejected", nil, &resp)
	if len(resp.Items) != 1 || resp.Items[0].Ref != "invariant" || resp.Items[0].Text != "never store a key" || resp.Items[0].State != medallion.ReviewRejected {
		t.Errorf("rejected items %+v", resp.Items)
	}
	// The positions after it moved up: invariant:2 is now "temperature 0".
	e.want(t, http.StatusOK, "GET", "/v1/review", nil, &resp)
	if got := refs(resp.Items); !slices.Contains(got, "m1:invariant:2") || slices.Contains(got, "m1:invariant:3") {
		t.Errorf("pending after reject %q", got)
	}
	var load api.LoadResponse
	e.want(t, http.StatusOK, "GET", "/v1/load?node=repo:muse", nil, &load)
	if strings.Contains(load.Text, "never store a key") {
		t.Errorf("rejected item in the load:\n%s", load.Text)
	}
}

func TestReviewAll(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	for _, m := range []*medallion.Medallion{modelMade("m1", "repo:muse"), modelMade("m2", "repo:other")} {
		if _, err := e.store.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	resp := e.act(t, http.StatusOK, api.ReviewActionRequest{Action: "reject", All: true, Nodes: []string{"repo:muse"}})
	var got []string
	for _, c := range resp.Changes {
		got = append(got, c.MedallionID+":"+c.Ref)
		if c.Version != 2 || c.State != medallion.ReviewRejected {
			t.Errorf("change %+v", c)
		}
	}
	if want := []string{"m1:summary", "m1:D-002", "m1:Q-001", "m1:invariant:2", "m1:invariant:3"}; !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
	m, _ := e.store.Get(ctx, "m1")
	if !slices.Equal(m.Affordances.Invariants, []string{"a user's rule", "approved rule"}) || len(m.Decisions) != 1 || len(m.OpenQuestions) != 0 || m.Summary.HighLevel != "" {
		t.Errorf("after reject --all: %+v", m)
	}
	if h, _ := e.store.History(ctx, "m1"); len(h) != 2 {
		t.Errorf("reject --all stored %d versions, want one more", len(h)-1)
	}
	if other, _ := e.store.Get(ctx, "m2"); other.Meta.Version != 1 {
		t.Errorf("a medallion outside the scope changed: %+v", other.Meta)
	}
	// Nothing pending is left: a second --all changes nothing.
	if resp := e.act(t, http.StatusOK, api.ReviewActionRequest{Action: "approve", All: true, Nodes: []string{"repo:muse"}}); len(resp.Changes) != 0 {
		t.Errorf("second --all: %+v", resp.Changes)
	}
	if m, _ := e.store.Get(ctx, "m1"); m.Meta.Version != 2 {
		t.Errorf("an empty --all stored version %d", m.Meta.Version)
	}
	e.act(t, http.StatusOK, api.ReviewActionRequest{Action: "approve", All: true, Tags: []string{"project_state"}})
	var left api.ReviewResponse
	e.want(t, http.StatusOK, "GET", "/v1/review", nil, &left)
	if len(left.Items) != 0 {
		t.Errorf("pending after approve --all: %q", refs(left.Items))
	}
}

func TestReviewApproveTwice(t *testing.T) {
	e := start(t)
	if _, err := e.store.Create(context.Background(), modelMade("m1", "repo:muse")); err != nil {
		t.Fatal(err)
	}
	e.act(t, http.StatusOK, api.ReviewActionRequest{Action: "approve", Item: "m1:D-002"})
	resp := e.act(t, http.StatusOK, api.ReviewActionRequest{Action: "approve", Item: "m1:D-002"})
	if len(resp.Changes) != 1 || resp.Changes[0].Note != "already approved" || resp.Changes[0].Version != 2 {
		t.Errorf("second approve %+v", resp.Changes)
	}
}

func TestReviewErrors(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	for _, m := range []*medallion.Medallion{modelMade("m1", "repo:muse"), modelMade("m2", "repo:other"), sample("plain", "repo:plain")} {
		if _, err := e.store.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		want   []string
	}{
		{"unknown item", api.ReviewActionRequest{Action: "approve", Item: "m1:D-009"}, 404, api.CodeNotFound,
			[]string{`no item "D-009" in medallion m1`, "summary, D-002, Q-001, invariant:2, invariant:3, invariant:4"}},
		{"position past the end", api.ReviewActionRequest{Action: "approve", Item: "m1:invariant:9"}, 404, api.CodeNotFound,
			[]string{"has 4 invariant items", "invariant:2"}},
		{"unknown medallion", api.ReviewActionRequest{Action: "approve", Item: "nope:D-002"}, 404, api.CodeNotFound, []string{"medallion nope not found"}},
		{"not a model's item", api.ReviewActionRequest{Action: "approve", Item: "m1:D-001"}, 400, api.CodeInvalid,
			[]string{"D-001 in medallion m1 was not written by a model"}},
		{"not a model's list item", api.ReviewActionRequest{Action: "reject", Item: "m1:invariant:1"}, 400, api.CodeInvalid,
			[]string{"invariant:1 in medallion m1 was not written by a model"}},
		{"ambiguous", api.ReviewActionRequest{Action: "approve", Item: "D-002"}, 400, api.CodeInvalid,
			[]string{"in 2 medallions (m1, m2)", "m1:D-002"}},
		{"unknown without medallion", api.ReviewActionRequest{Action: "approve", Item: "D-404"}, 404, api.CodeNotFound,
			[]string{"no model-made item D-404", "m1:D-002", "m2:invariant:3"}},
		{"not a model's, without medallion", api.ReviewActionRequest{Action: "approve", Item: "D-001", Nodes: []string{"repo:plain"}}, 400, api.CodeInvalid,
			[]string{"D-001 in medallion plain was not written by a model"}},
		{"list without position", api.ReviewActionRequest{Action: "approve", Item: "m1:invariant"}, 400, api.CodeInvalid, []string{"invariant:1"}},
		{"bad position", api.ReviewActionRequest{Action: "approve", Item: "m1:invariant:x"}, 400, api.CodeInvalid, []string{"whole number"}},
		{"bad position without medallion", api.ReviewActionRequest{Action: "approve", Item: "invariant:0"}, 400, api.CodeInvalid, []string{"whole number"}},
		{"list without position or medallion", api.ReviewActionRequest{Action: "reject", Item: "avoid_repeating"}, 400, api.CodeInvalid, []string{"avoid_repeating:1"}},
		{"medallion without item", api.ReviewActionRequest{Action: "approve", Item: "m1:"}, 400, api.CodeInvalid, []string{"names no item"}},
		{"empty body", "", 400, api.CodeInvalid, []string{"send an action"}},
		{"bad action", api.ReviewActionRequest{Action: "delete", Item: "m1:D-002"}, 400, api.CodeInvalid, []string{"action must be approve, reject or edit"}},
		{"edit without text", api.ReviewActionRequest{Action: "edit", Item: "m1:D-002", Text: " "}, 400, api.CodeInvalid, []string{"edit needs the new text"}},
		{"text with approve", api.ReviewActionRequest{Action: "approve", Item: "m1:D-002", Text: "x"}, 400, api.CodeInvalid, []string{"edit only"}},
		{"no item", api.ReviewActionRequest{Action: "approve"}, 400, api.CodeInvalid, []string{"give the item"}},
		{"all without scope", api.ReviewActionRequest{Action: "approve", All: true}, 400, api.CodeInvalid, []string{"all needs a scope"}},
		{"all with item", api.ReviewActionRequest{Action: "approve", All: true, Item: "m1:D-002", Nodes: []string{"repo:muse"}}, 400, api.CodeInvalid, []string{"not both"}},
		{"edit all", api.ReviewActionRequest{Action: "edit", All: true, Text: "x", Nodes: []string{"repo:muse"}}, 400, api.CodeInvalid, []string{"edit acts on one item"}},
		{"unknown field", `{"action":"approve","itme":"m1:D-002"}`, 400, api.CodeInvalid, []string{`unknown field "itme"`}},
		{"invalid edit", api.ReviewActionRequest{Action: "edit", Item: "m1:invariant:2", Text: "bad \x00 text"}, 400, api.CodeInvalid, []string{"control characters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkError(t, e.do(t, "POST", "/v1/review", tc.body, nil), tc.status, tc.code, tc.want...)
		})
	}
	// Nothing was stored by any of them.
	for _, id := range []string{"m1", "m2", "plain"} {
		if h, err := e.store.History(ctx, id); err != nil || len(h) != 1 {
			t.Errorf("%s has %d versions after refused actions (%v)", id, len(h), err)
		}
	}
}

// racingStore stores a version of its own before the first n updates, as
// a curator writing between the review's read and write would.
type racingStore struct {
	*store.Badger
	n     atomic.Int32
	races int32
}

func (r *racingStore) Update(ctx context.Context, m *medallion.Medallion) (*medallion.Medallion, error) {
	if r.n.Add(1) <= r.races {
		cur, err := r.Badger.Get(ctx, m.Meta.MedallionID)
		if err != nil {
			return nil, err
		}
		cur.Affordances.Invariants = append(cur.Affordances.Invariants, "added meanwhile")
		if _, err := r.Badger.Update(ctx, cur); err != nil {
			return nil, err
		}
	}
	return r.Badger.Update(ctx, m)
}

func TestReviewRetriesAStaleVersion(t *testing.T) {
	for _, tc := range []struct {
		races  int32
		status int
	}{{1, http.StatusOK}, {2, http.StatusOK}, {reviewRetries, http.StatusConflict}} {
		var rs *racingStore
		e := startWith(t, func(c *Config, st *store.Badger) {
			rs = &racingStore{Badger: st, races: tc.races}
			c.Store = rs
		})
		ctx := context.Background()
		if _, err := e.store.Create(ctx, modelMade("m1", "repo:muse")); err != nil {
			t.Fatal(err)
		}
		res := e.do(t, "POST", "/v1/review", api.ReviewActionRequest{Action: "reject", Item: "m1:invariant:2"}, nil)
		if tc.status == http.StatusConflict {
			checkError(t, res, http.StatusConflict, api.CodeConflict, "kept changing", "run the command again")
			continue
		}
		if res.status != tc.status {
			t.Fatalf("%d races: status %d: %s", tc.races, res.status, res.body)
		}
		m, _ := e.store.Get(ctx, "m1")
		// The other writer's versions are kept, and the review applied on
		// top of the latest.
		if m.Meta.Version != int(tc.races)+2 || m.Meta.Model != "user" || slices.Contains(m.Affordances.Invariants, "never store a key") ||
			strings.Count(strings.Join(m.Affordances.Invariants, "|"), "added meanwhile") != int(tc.races) {
			t.Errorf("%d races: %+v %q", tc.races, m.Meta, m.Affordances.Invariants)
		}
	}
}

func TestLoadReviewMode(t *testing.T) {
	for _, tc := range []struct {
		mode          string
		marked, shown bool
	}{{"", true, true}, {"auto", true, true}, {"required", false, false}, {"off", false, true}} {
		e := startWith(t, func(c *Config, _ *store.Badger) { c.ReviewMode = tc.mode })
		if _, err := e.store.Create(context.Background(), modelMade("m1", "repo:muse")); err != nil {
			t.Fatal(err)
		}
		var load api.LoadResponse
		e.want(t, http.StatusOK, "GET", "/v1/load?node=repo:muse", nil, &load)
		if got := strings.Contains(load.Text, "never store a key (unreviewed)"); got != tc.marked {
			t.Errorf("mode %q: marked %v:\n%s", tc.mode, got, load.Text)
		}
		if got := strings.Contains(load.Text, "never store a key"); got != tc.shown {
			t.Errorf("mode %q: shown %v:\n%s", tc.mode, got, load.Text)
		}
		if !strings.Contains(load.Text, "- approved rule\n") || !strings.Contains(load.Text, "- a user's rule\n") {
			t.Errorf("mode %q: settled items missing or marked:\n%s", tc.mode, load.Text)
		}
		// Approving takes the mark away.
		e.act(t, http.StatusOK, api.ReviewActionRequest{Action: "approve", Item: "m1:invariant:2"})
		e.want(t, http.StatusOK, "GET", "/v1/load?node=repo:muse", nil, &load)
		if !strings.Contains(load.Text, "- never store a key\n") {
			t.Errorf("mode %q: approved item not shown plain:\n%s", tc.mode, load.Text)
		}
	}
}

func TestStatusLLM(t *testing.T) {
	e := start(t)
	var st api.Status
	e.want(t, http.StatusOK, "GET", "/v1/status", nil, &st)
	if st.LLM != nil {
		t.Errorf("status without an llm block has LLM %+v", st.LLM)
	}
	res := e.do(t, "GET", "/v1/status", nil, nil)
	if strings.Contains(string(res.body), `"llm"`) {
		t.Errorf("status without an llm block mentions llm: %s", res.body)
	}

	e = startWith(t, func(c *Config, _ *store.Badger) {
		c.LLM = func() *api.LLMStatus {
			return &api.LLMStatus{Endpoint: "http://user:sk-secret@127.0.0.1:11434/v1", Model: "qwen3:8b", Structured: "json_schema",
				Calls: 4, TokensToday: 12000, DailyTokens: 2000000, Passes: 2, Fallbacks: 1, Refused: 5,
				LastError: "invalid answer twice", LastErrorAt: "2026-11-25T10:00:00Z", PendingReview: 99}
		}
	})
	if _, err := e.store.Create(context.Background(), modelMade("m1", "repo:muse")); err != nil {
		t.Fatal(err)
	}
	e.want(t, http.StatusOK, "GET", "/v1/status", nil, &st)
	if st.LLM == nil || st.LLM.Model != "qwen3:8b" || st.LLM.Fallbacks != 1 || st.LLM.PendingReview != 5 ||
		st.LLM.Endpoint != "http://127.0.0.1:11434/v1" {
		t.Errorf("status LLM %+v: want the daemon's figures and 5 pending items counted by the server", st.LLM)
	}
}

func TestLLMCheck(t *testing.T) {
	e := start(t)
	checkError(t, e.do(t, "POST", "/v1/llm/check", nil, nil), http.StatusNotFound, api.CodeNotFound, api.NoLLMMessage)

	var calls atomic.Int32
	e = startWith(t, func(c *Config, _ *store.Badger) {
		c.LLMCheck = func(ctx context.Context) (api.LLMCheck, error) {
			if calls.Add(1) == 2 {
				return api.LLMCheck{}, errors.New("the check could not start")
			}
			return api.LLMCheck{Endpoint: "http://x/v1", Model: "m", Reachable: true, AuthOK: true, ValidJSON: true,
				Lines: []string{"reachable: http://x/v1 answered", "json_schema: refused; json_object works"}}, nil
		}
	})
	var check api.LLMCheck
	e.want(t, http.StatusOK, "POST", "/v1/llm/check", nil, &check)
	if !check.OK || check.JSONSchema || len(check.Lines) != 2 {
		t.Errorf("check %+v", check)
	}
	checkError(t, e.do(t, "POST", "/v1/llm/check", nil, nil), http.StatusInternalServerError, api.CodeInternal, "could not start")
	checkError(t, e.do(t, "GET", "/v1/llm/check", nil, nil), http.StatusMethodNotAllowed, api.CodeInvalid, "POST")
}
