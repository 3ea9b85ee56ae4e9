package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
)

func TestItemActions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   api.ItemActionRequest
		check func(t *testing.T, m *medallion.Medallion)
	}{
		{"forget a user's decision", api.ItemActionRequest{Action: "forget", Item: "m1:D-001"}, func(t *testing.T, m *medallion.Medallion) {
			if len(m.Decisions) != 1 || m.Decisions[0].ID != "D-002" {
				t.Errorf("decisions %+v", m.Decisions)
			}
			if slices.ContainsFunc(m.Evidence, func(e medallion.Evidence) bool { return e.Item == "D-001" }) {
				t.Errorf("evidence of the forgotten decision kept: %+v", m.Evidence)
			}
			want := medallion.Forgotten{Kind: "decision", Fingerprint: medallion.Fingerprint("store in Badger"), EventIDs: []string{"e1"}}
			if len(m.Forgotten) != 1 || m.Forgotten[0].Fingerprint != want.Fingerprint || !slices.Equal(m.Forgotten[0].EventIDs, want.EventIDs) {
				t.Errorf("forgotten %+v, want %+v", m.Forgotten, want)
			}
		}},
		{"forget a model's rule", api.ItemActionRequest{Action: "forget", Item: "invariant:2"}, func(t *testing.T, m *medallion.Medallion) {
			if slices.Contains(m.Affordances.Invariants, "never store a key") || m.ReviewFor("invariant", "never store a key") >= 0 {
				t.Errorf("invariants %q review %+v", m.Affordances.Invariants, m.Review)
			}
			if !m.WasForgotten("invariant", "Never store a KEY", nil) {
				t.Error("not remembered as forgotten")
			}
		}},
		{"forget a subsystem", api.ItemActionRequest{Action: "forget", Item: "m1:subsystem:1"}, func(t *testing.T, m *medallion.Medallion) {
			if len(m.Summary.Subsystems) != 0 {
				t.Errorf("subsystems %+v", m.Summary.Subsystems)
			}
		}},
		{"edit a user's rule", api.ItemActionRequest{Action: "edit", Item: "m1:invariant:1", Text: "the user's rule, reworded"}, func(t *testing.T, m *medallion.Medallion) {
			if m.Affordances.Invariants[0] != "the user's rule, reworded" || !m.WasForgotten("invariant", "a user's rule", nil) {
				t.Errorf("invariants %q forgotten %+v", m.Affordances.Invariants, m.Forgotten)
			}
		}},
		{"edit a pending model item approves it", api.ItemActionRequest{Action: "edit", Item: "m1:D-002", Text: "keep ids in code"}, func(t *testing.T, m *medallion.Medallion) {
			if m.Decisions[1].Statement != "keep ids in code" || m.Review[1].State != medallion.ReviewApproved {
				t.Errorf("decision %+v review %+v", m.Decisions[1], m.Review[1])
			}
		}},
		{"pin a list item", api.ItemActionRequest{Action: "pin", Item: "m1:invariant:3"}, func(t *testing.T, m *medallion.Medallion) {
			if !m.IsPinned("invariant", "temperature 0") || len(m.Pinned) != 1 {
				t.Errorf("pinned %+v", m.Pinned)
			}
		}},
		{"pin a decision", api.ItemActionRequest{Action: "pin", Item: "m1:D-001"}, func(t *testing.T, m *medallion.Medallion) {
			if len(m.Pinned) != 1 || m.Pinned[0] != (medallion.Pin{Item: "D-001"}) {
				t.Errorf("pinned %+v", m.Pinned)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t)
			ctx := context.Background()
			m := modelMade("m1", "repo:muse")
			m.Summary.Subsystems = []medallion.Subsystem{{Name: "store", Status: medallion.SubsystemStable}}
			if _, err := e.store.Create(ctx, m); err != nil {
				t.Fatal(err)
			}
			var resp api.ItemActionResponse
			e.want(t, http.StatusOK, "POST", "/v1/item", tc.req, &resp)
			if len(resp.Changes) != 1 || resp.Changes[0].MedallionID != "m1" || resp.Changes[0].Version != 2 || resp.Changes[0].Note != "" {
				t.Fatalf("changes %+v", resp.Changes)
			}
			got, err := e.store.Get(ctx, "m1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Meta.Model != "user" || got.Meta.Version != 2 {
				t.Errorf("meta %+v: want version 2 by user", got.Meta)
			}
			tc.check(t, got)
		})
	}
}

func TestItemActionErrors(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	for _, m := range []*medallion.Medallion{modelMade("m1", "repo:muse"), sample("m2", "repo:other")} {
		if _, err := e.store.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var pinned api.ItemActionResponse
	e.want(t, http.StatusOK, "POST", "/v1/item", api.ItemActionRequest{Action: "pin", Item: "m1:summary"}, &pinned)
	for _, tc := range []struct {
		req    api.ItemActionRequest
		status int
		want   string
	}{
		{api.ItemActionRequest{Action: "bury", Item: "m1:D-001"}, 400, "action must be forget, edit, pin, unpin"},
		{api.ItemActionRequest{Action: "pin", Item: "m1:D-001", Text: "x"}, 400, "text goes with edit only"},
		{api.ItemActionRequest{Action: "edit", Item: "m1:D-001"}, 400, "edit needs the new text"},
		{api.ItemActionRequest{Action: "pin", Item: "D-001"}, 400, "D-001 is an item in 2 medallions (m1, m2): say which, e.g. m1:D-001"},
		{api.ItemActionRequest{Action: "pin", Item: "D-001", Nodes: []string{"repo:other"}}, 200, ""},
		{api.ItemActionRequest{Action: "forget", Item: "m1:D-404"}, 404, "in medallion m1; its items are: summary, D-001, D-002, Q-001, invariant:1"},
		{api.ItemActionRequest{Action: "pin", Item: "m1:invariant:9"}, 404, "invariant:9: medallion m1 has 4 invariant items"},
		{api.ItemActionRequest{Action: "unpin", Item: "m1:D-001"}, 200, "not pinned"},
		{api.ItemActionRequest{Action: "pin", Item: "m1:summary"}, 200, "already pinned"},
		{api.ItemActionRequest{Action: "forget", Item: "nope:D-001"}, 404, "medallion nope not found"},
	} {
		res := e.do(t, "POST", "/v1/item", tc.req, nil)
		if res.status != tc.status || !strings.Contains(string(res.body), tc.want) {
			t.Errorf("%+v: %d %s, want %d with %q", tc.req, res.status, res.body, tc.status, tc.want)
		}
	}
}
