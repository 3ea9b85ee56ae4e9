package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/curate"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// Bounds of what an agent records: an item is a sentence or two, and a
// source a short name.
const (
	maxRecordText   = 2000
	maxRecordSource = 100
	// recordConfidence is the confidence of a decision an agent records:
	// below what a user's own words get, above a guess.
	recordConfidence = 0.6
)

// record answers POST /v1/record: an agent's decision, rule, open question
// or dead end goes into the active medallion whose graph nodes are exactly
// the scope's (the one checkpoints of that scope update), created when
// there is none. The item gets a pending review entry naming the agent, as
// a model's items do, so the user settles it with medallionctl review.
func (s *Server) record(r *http.Request) (any, error) {
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	var req api.RecordRequest
	if err := decodeStrict(r, &req, "kind, text, why, nodes, cwd, source"); err != nil {
		return nil, err
	}
	if req.Kind == "" && req.Text == "" && req.CWD == "" && len(req.Nodes) == 0 {
		return nil, badRequest(`the request body is empty; send an item such as {"kind": "rule", "text": "…", "cwd": "/src/muse"}`)
	}
	if err := checkRecord(&req); err != nil {
		return nil, err
	}
	nodes, err := s.recordScope(req)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	for attempt := 1; ; attempt++ {
		target, err := s.activeFor(ctx, nodes)
		if err != nil {
			return nil, err
		}
		if target == nil {
			resp, err := s.recordNew(ctx, nodes, req)
			if errors.Is(err, store.ErrExists) && attempt < reviewRetries {
				continue // created meanwhile (or an inactive one holds the id): add to it
			}
			return resp, err
		}
		var resp api.RecordResponse
		stored, err := s.changeMedallionAs(ctx, target.Meta.MedallionID, req.Source, func(m *medallion.Medallion) (bool, error) {
			resp = addRecord(m, req)
			return resp.Note == "", nil
		}, nil)
		if err != nil {
			return nil, err
		}
		resp.MedallionID, resp.Version = stored.Meta.MedallionID, stored.Meta.Version
		resp.Item = api.ItemAddress(resp.MedallionID, resp.Item)
		return resp, nil
	}
}

// checkRecord refuses what cannot be recorded, and trims and defaults the
// rest.
func checkRecord(req *api.RecordRequest) error {
	req.Kind = strings.TrimSpace(req.Kind)
	req.Text = strings.TrimSpace(req.Text)
	req.Why = strings.TrimSpace(req.Why)
	req.Source = strings.TrimSpace(req.Source)
	if !slices.Contains(api.RecordKinds, req.Kind) {
		return badRequest("kind must be %s (got %q)", strings.Join(api.RecordKinds, ", "), req.Kind)
	}
	if req.Text == "" {
		return badRequest("text is empty: say the %s in a sentence or two", strings.ReplaceAll(req.Kind, "_", " "))
	}
	for name, v := range map[string]string{"text": req.Text, "why": req.Why} {
		if len(v) > maxRecordText {
			return badRequest("%s is %d bytes; at most %d (a sentence or two)", name, len(v), maxRecordText)
		}
		if strings.ContainsFunc(v, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
			return badRequest("%s holds control characters: only newlines and tabs are kept", name)
		}
	}
	if req.Source == "" {
		req.Source = "agent"
	}
	if len(req.Source) > maxRecordSource || strings.ContainsFunc(req.Source, unicode.IsControl) {
		return badRequest("source must be a short name such as agent:claude-code")
	}
	return nil
}

// recordScope is the graph nodes the record names, or its cwd's.
func (s *Server) recordScope(req api.RecordRequest) ([]string, error) {
	switch {
	case req.CWD != "" && len(req.Nodes) > 0:
		return nil, badRequest("give cwd or nodes, not both")
	case req.CWD != "":
		if s.cfg.ScopeForCWD == nil {
			return nil, badRequest("this daemon cannot resolve cwd: give nodes")
		}
		if !strings.HasPrefix(req.CWD, "/") {
			return nil, badRequest("cwd must be an absolute path (got %q)", req.CWD)
		}
		nodes := s.cfg.ScopeForCWD(req.CWD)
		if len(nodes) == 0 {
			return nil, badRequest("%s belongs to no scope: give nodes", req.CWD)
		}
		return nodes, nil
	case len(req.Nodes) == 0:
		return nil, badRequest("give the scope: cwd (an absolute directory) or nodes (e.g. repo:muse)")
	}
	for _, n := range req.Nodes {
		if strings.TrimSpace(n) == "" {
			return nil, badRequest("nodes must not be empty")
		}
	}
	return req.Nodes, nil
}

// activeFor returns the active medallion whose graph nodes are exactly
// nodes, as a checkpoint of that scope finds it, or nil.
func (s *Server) activeFor(ctx context.Context, nodes []string) (*medallion.Medallion, error) {
	want := slices.Compact(slices.Sorted(slices.Values(nodes)))
	ms, err := s.cfg.Store.LatestForScope(ctx, medallion.Scope{GraphNodes: want}, maxListLimit)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		have := slices.Compact(slices.Sorted(slices.Values(m.Scope.GraphNodes)))
		if m.Meta.Status == medallion.StatusActive && slices.Equal(have, want) {
			return m, nil
		}
	}
	return nil, nil
}

// recordNew creates the scope's medallion with the record in it, under
// the id the curator gives a scope's medallion.
func (s *Server) recordNew(ctx context.Context, nodes []string, req api.RecordRequest) (*api.RecordResponse, error) {
	now := medallion.FormatTime(time.Now())
	m := &medallion.Medallion{
		Meta: medallion.Meta{
			MedallionID: curate.ID(nodes), SchemaVersion: medallion.SchemaVersion, Model: req.Source,
			CreatedAt: now, UpdatedAt: now, Status: medallion.StatusActive,
		},
		Scope: medallion.Scope{GraphNodes: slices.Compact(slices.Sorted(slices.Values(nodes))), Tags: []string{"project_state"}},
	}
	resp := addRecord(m, req)
	stored, err := s.cfg.Store.Create(ctx, m)
	if err != nil {
		return nil, err
	}
	resp.MedallionID, resp.Version, resp.Created = stored.Meta.MedallionID, stored.Meta.Version, true
	resp.Item = api.ItemAddress(resp.MedallionID, resp.Item)
	return &resp, nil
}

// addRecord adds the record to m with a pending review entry, unless m
// holds the same text already (then Note says so). The response's Item is
// the REF of the item.
func addRecord(m *medallion.Medallion, req api.RecordRequest) api.RecordResponse {
	review := func(item, text string) {
		m.Review = append(m.Review, medallion.Review{Item: item, Text: text, Source: req.Source, State: medallion.ReviewPending})
		// Review is bounded: the oldest settled entries go first, as
		// the curator trims it.
		for i := 0; len(m.Review) > medallion.MaxReview && i < len(m.Review); {
			if m.Review[i].State == medallion.ReviewApproved {
				m.Review = slices.Delete(m.Review, i, i+1)
				continue
			}
			i++
		}
	}
	high := m.HighestIDs()
	switch req.Kind {
	case api.RecordDecision:
		if i := slices.IndexFunc(m.Decisions, func(d medallion.Decision) bool { return strings.EqualFold(d.Statement, req.Text) }); i >= 0 {
			return api.RecordResponse{Item: m.Decisions[i].ID, Note: "already recorded"}
		}
		id := fmt.Sprintf("D-%03d", high["D"]+1)
		m.Decisions = append(m.Decisions, medallion.Decision{ID: id, Statement: req.Text, Rationale: req.Why, Confidence: recordConfidence})
		review(id, req.Text)
		return api.RecordResponse{Item: id}
	case api.RecordQuestion:
		text := joinWhy(req.Text, req.Why)
		if i := slices.IndexFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool { return strings.EqualFold(q.Question, text) }); i >= 0 {
			return api.RecordResponse{Item: m.OpenQuestions[i].ID, Note: "already recorded"}
		}
		id := fmt.Sprintf("Q-%03d", high["Q"]+1)
		m.OpenQuestions = append(m.OpenQuestions, medallion.OpenQuestion{ID: id, Question: text, BlockedOn: []string{}, Priority: medallion.PriorityMedium})
		review(id, text)
		return api.RecordResponse{Item: id}
	}
	name := medallion.ItemInvariant
	if req.Kind == api.RecordDeadEnd {
		name = medallion.ItemAvoidRepeating
	}
	list := m.List(name)
	text := joinWhy(req.Text, req.Why)
	if i := slices.IndexFunc(*list, func(t string) bool { return strings.EqualFold(strings.TrimSpace(t), text) }); i >= 0 {
		return api.RecordResponse{Item: name + ":" + strconv.Itoa(i+1), Note: "already recorded"}
	}
	*list = append(*list, text)
	review(name, text)
	return api.RecordResponse{Item: name + ":" + strconv.Itoa(len(*list))}
}

// joinWhy appends a reason to a list item or question: "… — because …".
func joinWhy(text, why string) string {
	if why == "" {
		return text
	}
	return text + " — " + why
}
