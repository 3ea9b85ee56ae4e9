package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/search"
	"github.com/medallionhq/medallion/internal/store"
)

// startSearch starts a server with the search index over its store.
func startSearch(t *testing.T) *env {
	t.Helper()
	return startWith(t, func(c *Config, st *store.Badger) {
		ix, err := search.Open(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ix.Close)
		c.Search = ix
		c.ScopeForCWD = func(cwd string) []string {
			if cwd == "/src/nowhere" {
				return nil
			}
			return []string{"repo:" + cwd[strings.LastIndexByte(cwd, '/')+1:]}
		}
	})
}

func TestSearchItemRecordErrors(t *testing.T) {
	e := startSearch(t)
	e.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m1", "repo:a"), nil)
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		code, want   string
	}{
		{"GET", "/v1/search", nil, 400, api.CodeInvalid, "give a query"},
		{"GET", "/v1/search?q=%20", nil, 400, api.CodeInvalid, "give a query"},
		{"GET", "/v1/search?q=x&limit=0", nil, 400, api.CodeInvalid, "limit must be"},
		{"GET", "/v1/search?q=x&limit=101", nil, 400, api.CodeInvalid, "limit must be"},
		{"GET", "/v1/search?q=x&nodes=a", nil, 400, api.CodeInvalid, "unknown query parameter"},
		{"GET", "/v1/search?q=" + strings.Repeat("a", 5000), nil, 400, api.CodeInvalid, "at most"},
		{"GET", "/v1/item", nil, 400, api.CodeInvalid, "MEDALLION_ID:REF"},
		{"GET", "/v1/item?item=D-001", nil, 400, api.CodeInvalid, "MEDALLION_ID:REF"},
		{"GET", "/v1/item?item=m%2F1:D-001", nil, 400, api.CodeInvalid, "invalid medallion id"},
		{"GET", "/v1/item?item=m1:D-001&version=x", nil, 400, api.CodeInvalid, "version must be"},
		{"GET", "/v1/item?item=m1:D-001&version=7", nil, 404, api.CodeNotFound, "has no version 7"},
		{"GET", "/v1/item?item=m9:D-001", nil, 404, api.CodeNotFound, "medallion m9 not found"},
		{"GET", "/v1/item?item=m1:D-002", nil, 404, api.CodeNotFound, "no item"},
		{"GET", "/v1/item?item=m1:invariant:0", nil, 400, api.CodeInvalid, "whole number"},
		{"GET", "/v1/item?item=m1:invariant:3", nil, 404, api.CodeNotFound, "has 0 invariant items"},
		{"POST", "/v1/record", nil, 400, api.CodeInvalid, "the request body is empty"},
		{"POST", "/v1/record", `{"kind":"rule","text":"x","nodes":["repo:a"],"extra":1}`, 400, api.CodeInvalid, "unknown field"},
		{"POST", "/v1/record", api.RecordRequest{Kind: "wish", Text: "x", Nodes: []string{"repo:a"}}, 400, api.CodeInvalid, "kind must be decision, rule, question, dead_end"},
		{"POST", "/v1/record", api.RecordRequest{Kind: "rule", Text: "  ", Nodes: []string{"repo:a"}}, 400, api.CodeInvalid, "text is empty"},
		{"POST", "/v1/record", api.RecordRequest{Kind: "rule", Text: strings.Repeat("x", 2001), Nodes: []string{"repo:a"}}, 400, api.CodeInvalid, "at most 2000"},
		{"POST", "/v1/record", api.RecordRequest{Kind: "rule", Text: "a\x1b[2Jb", Nodes: []string{"repo:a"}}, 400, api.CodeInvalid, "control characters"},
		{"POST", "/v1/record", api.RecordRequest{Kind: "rule", Text: "x"}, 400, api.CodeInvalid, "give the scope"},
		{"POST", "/v1/record", api.RecordRequest{Kind: "rule", Text: "x", CWD: "/a", Nodes: []string{"repo:a"}}, 400, api.CodeInvalid, "not both"},
		{"POST", "/v1/record", api.RecordRequest{Kind: "rule", Text: "x", CWD: "rel"}, 400, api.CodeInvalid, "absolute"},
		{"POST", "/v1/record", api.RecordRequest{Kind: "rule", Text: "x", CWD: "/src/nowhere"}, 400, api.CodeInvalid, "belongs to no scope"},
		{"POST", "/v1/record", api.RecordRequest{Kind: "rule", Text: "x", Nodes: []string{"repo:a"}, Source: strings.Repeat("s", 101)}, 400, api.CodeInvalid, "source must be"},
	} {
		checkError(t, e.do(t, tc.method, tc.path, tc.body, nil), tc.status, tc.code, tc.want)
	}

	// Without an index, search says so and items have no history.
	plain := start(t)
	checkError(t, plain.do(t, "GET", "/v1/search?q=badger", nil, nil), 404, api.CodeNotFound, "search is not enabled")
	plain.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m1", "repo:a"), nil)
	var it api.Item
	plain.want(t, 200, "GET", "/v1/item?item=m1:D-001", nil, &it)
	if it.State != api.StateCurrent || it.Text != "store in Badger" || len(it.History) != 0 {
		t.Errorf("item without an index: %+v", it)
	}
}

// TestRecordThenSearch: a record by cwd lands in the scope's medallion,
// then in search and item, as the agent's and pending.
func TestRecordThenSearch(t *testing.T) {
	e := startSearch(t)
	e.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m1", "repo:muse"), nil)
	var rec api.RecordResponse
	e.want(t, 200, "POST", "/v1/record", api.RecordRequest{Kind: api.RecordDecision, Text: "Write MIDI as a stream", Why: "big scores ran out of memory", CWD: "/src/muse", Source: "agent:cursor"}, &rec)
	if rec.Item != "m1:D-002" || rec.Version != 2 || rec.Created {
		t.Fatalf("record: %+v", rec)
	}
	var res api.SearchResponse
	e.want(t, 200, "GET", "/v1/search?q="+url.QueryEscape("midi stream memory")+"&node=repo:muse", nil, &res)
	if len(res.Results) != 1 || res.Results[0].Item != "m1:D-002" || res.Results[0].Review != "pending" || res.Results[0].Source != "agent:cursor" {
		t.Fatalf("search after record: %+v", res.Results)
	}
	var it api.Item
	e.want(t, 200, "GET", "/v1/item?item=m1:D-002", nil, &it)
	if it.Detail != "Why: big scores ran out of memory (confidence 0.60)" || it.Review != "pending" || len(it.History) != 1 {
		t.Errorf("item: %+v", it)
	}
	var m struct {
		Meta struct{ Model string } `json:"meta"`
	}
	e.want(t, 200, "GET", "/v1/medallions/m1", nil, &m)
	if m.Meta.Model != "agent:cursor" {
		t.Errorf("the version's model is %q, want the agent", m.Meta.Model)
	}
	e.want(t, 200, "GET", "/v1/search?q=midi&node=repo:other", nil, &res)
	if len(res.Results) != 0 {
		t.Errorf("another scope found %+v", res.Results)
	}
}
