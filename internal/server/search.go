package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/search"
)

// maxScopeMedallions caps how many medallions of a scope a scoped search
// looks at: far more than any repository has.
const maxScopeMedallions = 10000

// maxQueryBytes caps a query: a pasted stack trace is fine, a file is not.
const maxQueryBytes = 4 << 10

// search answers GET /v1/search?q=QUERY&node=N&limit=L.
func (s *Server) search(r *http.Request) (any, error) {
	q, err := query(r, "q", "node", "limit")
	if err != nil {
		return nil, err
	}
	text, _, err := single(q, "q")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("give a query: ?q=WORDS (a few keywords, identifiers or an error message)")
	}
	if len(text) > maxQueryBytes {
		return nil, badRequest("the query is %d bytes; at most %d", len(text), maxQueryBytes)
	}
	limit := api.DefaultSearchLimit
	if v, ok, err := single(q, "limit"); err != nil {
		return nil, err
	} else if ok {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > api.MaxSearchLimit {
			return nil, badRequest("limit must be a whole number from 1 to %d (got %q)", api.MaxSearchLimit, v)
		}
	}
	if s.cfg.Search == nil {
		return nil, notFound("search is not enabled in this daemon")
	}
	ctx := r.Context()
	var scope []string // nil: every medallion
	if nodes := q["node"]; len(nodes) > 0 {
		for _, n := range nodes {
			if strings.TrimSpace(n) == "" {
				return nil, badRequest("node must not be empty")
			}
		}
		ms, err := s.latestWithoutEvidence(ctx, medallion.Scope{GraphNodes: nodes}, maxScopeMedallions)
		if err != nil {
			return nil, err
		}
		scope = []string{}
		for _, m := range ms {
			scope = append(scope, m.Meta.MedallionID)
		}
	}
	res, err := s.cfg.Search.Search(ctx, text, scope, limit)
	if err != nil {
		return nil, err
	}
	resp := api.SearchResponse{Query: text, Terms: res.Terms, Matched: res.Matched, Results: []api.SearchResult{}, Indexed: s.cfg.Search.Items()}
	if resp.Terms == nil {
		resp.Terms = []string{}
	}
	versions := versionCache{s: s, ctx: ctx}
	for _, h := range res.Hits {
		out, err := versions.result(h)
		if err != nil {
			return nil, err
		}
		if out != nil {
			resp.Results = append(resp.Results, *out)
		}
	}
	return resp, nil
}

// versionCache reads each medallion version a search answer needs once.
type versionCache struct {
	s   *Server
	ctx context.Context
	got map[string]*medallion.Medallion // "id\x00version" → version; "id" → latest
}

func (c *versionCache) get(id string, version int) (*medallion.Medallion, error) {
	if c.got == nil {
		c.got = map[string]*medallion.Medallion{}
	}
	key := id
	if version > 0 {
		key += "\x00" + strconv.Itoa(version)
	}
	if m, ok := c.got[key]; ok {
		return m, nil
	}
	var m *medallion.Medallion
	var err error
	if version > 0 {
		m, err = c.s.cfg.Store.GetVersion(c.ctx, id, version)
	} else {
		m, err = c.s.cfg.Store.Get(c.ctx, id)
	}
	if err != nil {
		return nil, err
	}
	c.got[key] = m
	return m, nil
}

// result turns a hit into a search result that addresses the item in the
// latest version holding its text; nil when that version is gone (a
// medallion removed meanwhile).
func (c *versionCache) result(h search.Hit) (*api.SearchResult, error) {
	latest, err := c.get(h.MedallionID, 0)
	if err != nil || latest == nil {
		return nil, err
	}
	version := latest.Meta.Version
	if h.Until != 0 {
		version = h.Until - 1
	}
	m := latest
	if version != latest.Meta.Version {
		if m, err = c.get(h.MedallionID, version); err != nil || m == nil {
			return nil, err
		}
	}
	out := &api.SearchResult{
		MedallionID: h.MedallionID, Kind: h.Kind, Text: h.Text, State: h.State, By: h.By,
		Version: version, FirstVersion: h.First, Nodes: latest.Scope.GraphNodes, Score: h.Score,
		Ref: refIn(m, h.Doc),
	}
	out.Item = api.ItemAddress(h.MedallionID, out.Ref)
	if h.Until == 0 {
		out.Review, out.Source = reviewOf(latest, h.Kind, h.Ref, listText(h.Doc))
	}
	return out, nil
}

// refIn is the address within m of the item a document holds: its id, a
// list's name and the 1-based position of its text, or "summary".
func refIn(m *medallion.Medallion, d *search.Doc) string {
	switch d.Kind {
	case api.KindDecision, api.KindQuestion:
		return d.Ref
	case api.KindSubsystem:
		if i := slices.IndexFunc(m.Summary.Subsystems, func(s medallion.Subsystem) bool { return s.Name == d.Ref }); i >= 0 {
			return api.KindSubsystem + ":" + strconv.Itoa(i+1)
		}
		return api.KindSubsystem
	case medallion.ItemSummary:
		return medallion.ItemSummary
	}
	if list := m.List(d.Kind); list != nil {
		if i := slices.IndexFunc(*list, func(t string) bool { return strings.TrimSpace(t) == d.Text }); i >= 0 {
			return d.Kind + ":" + strconv.Itoa(i+1)
		}
	}
	return d.Kind
}

// listText is the text a Review entry names a list item or the summary
// by; decisions, questions and subsystems go by their reference alone.
func listText(d *search.Doc) string {
	switch d.Kind {
	case api.KindDecision, api.KindQuestion, api.KindSubsystem:
		return ""
	}
	return d.Text
}

// reviewOf is the review state and source of an item a model or an agent
// wrote, or empty strings.
func reviewOf(m *medallion.Medallion, kind, ref, text string) (state, source string) {
	if kind == api.KindSubsystem {
		return "", ""
	}
	if i := m.ReviewFor(ref, text); i >= 0 {
		return string(m.Review[i].State), m.Review[i].Source
	}
	return "", ""
}

// found is one item located in a version by its address.
type found struct {
	kind, ref string // ref as the address gives it
	doc       search.Doc
	text      string // the main text: statement, question, rule …
	detail    string
	// evidence names the item as Evidence entries do.
	evidenceItem, evidenceText string
}

// parseItemAddress splits "MEDALLION_ID:REF" where REF is an id, a list
// name or "subsystem" and a position, or "summary".
func parseItemAddress(addr string) (id, ref string) {
	segs := strings.Split(addr, ":")
	n := 1
	if len(segs) >= 3 {
		if l := segs[len(segs)-2]; slices.Contains(medallion.ReviewLists, l) || l == api.KindSubsystem {
			n = 2
		}
	}
	return strings.Join(segs[:len(segs)-n], ":"), strings.Join(segs[len(segs)-n:], ":")
}

// locateItem finds the item at ref in m.
func locateItem(m *medallion.Medallion, ref string) (*found, error) {
	id := m.Meta.MedallionID
	f := &found{ref: ref}
	f.doc.MedallionID = id
	name, pos, isList := strings.Cut(ref, ":")
	switch {
	case isList && (m.List(name) != nil || name == api.KindSubsystem):
		n, err := strconv.Atoi(pos)
		if err != nil || n < 1 {
			return nil, badRequest("%s: the position must be a whole number from 1 (got %q)", ref, pos)
		}
		if name == api.KindSubsystem {
			subs := m.Summary.Subsystems
			if n > len(subs) {
				return nil, notFound("%s: medallion %s version %d has %d subsystems", ref, id, m.Meta.Version, len(subs))
			}
			sub := subs[n-1]
			f.kind, f.text, f.detail = api.KindSubsystem, sub.Name, "status "+string(sub.Status)
			if sub.Notes != "" {
				f.detail = sub.Notes + " (" + f.detail + ")"
			}
			f.doc.Ref, f.doc.Text = sub.Name, search.SubsystemText(sub)
			f.evidenceItem, f.evidenceText = api.KindSubsystem, sub.Name
			return f, nil
		}
		list := *m.List(name)
		if n > len(list) {
			return nil, notFound("%s: medallion %s version %d has %d %s items", ref, id, m.Meta.Version, len(list), name)
		}
		f.kind, f.text = name, strings.TrimSpace(list[n-1])
		f.doc.Ref, f.doc.Text = name, f.text
		f.evidenceItem, f.evidenceText = name, list[n-1]
		return f, nil
	case ref == medallion.ItemSummary:
		if strings.TrimSpace(m.Summary.HighLevel) == "" {
			return nil, notFound("medallion %s version %d has no summary", id, m.Meta.Version)
		}
		f.kind, f.text = medallion.ItemSummary, strings.TrimSpace(m.Summary.HighLevel)
		f.doc.Ref, f.doc.Text = medallion.ItemSummary, f.text
		f.evidenceItem, f.evidenceText = medallion.ItemSummary, m.Summary.HighLevel
		return f, nil
	}
	if i := slices.IndexFunc(m.Decisions, func(d medallion.Decision) bool { return d.ID == ref }); i >= 0 {
		d := m.Decisions[i]
		f.kind, f.text = api.KindDecision, d.Statement
		f.detail = fmt.Sprintf("confidence %.2f", d.Confidence)
		if strings.TrimSpace(d.Rationale) != "" {
			f.detail = "Why: " + d.Rationale + " (" + f.detail + ")"
		}
		f.doc.Ref, f.doc.Text = d.ID, search.DecisionText(d)
		f.evidenceItem = d.ID
		return f, nil
	}
	if i := slices.IndexFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool { return q.ID == ref }); i >= 0 {
		q := m.OpenQuestions[i]
		f.kind, f.text = api.KindQuestion, q.Question
		f.detail = "priority " + string(q.Priority)
		if len(q.BlockedOn) > 0 {
			f.detail += "; blocked on: " + strings.Join(q.BlockedOn, "; ")
		}
		f.doc.Ref, f.doc.Text = q.ID, search.QuestionText(q)
		f.evidenceItem = q.ID
		return f, nil
	}
	return nil, notFound("no item %q in medallion %s version %d (items are D-…, Q-…, invariant:N, avoid_repeating:N, entry_point:N, subsystem:N or summary)", ref, id, m.Meta.Version)
}

// item answers GET /v1/item?item=MEDALLION_ID:REF&version=N.
func (s *Server) item(r *http.Request) (any, error) {
	q, err := query(r, "item", "version")
	if err != nil {
		return nil, err
	}
	addr, _, err := single(q, "item")
	if err != nil {
		return nil, err
	}
	id, ref := parseItemAddress(addr)
	if id == "" || ref == "" {
		return nil, badRequest("give the item as MEDALLION_ID:REF, e.g. muse-state:D-003 (search and load name them; got %q)", addr)
	}
	if !medallion.ValidID(id) {
		return nil, badRequest("invalid medallion id %q in %q: want MEDALLION_ID:REF such as muse-state:D-003", id, addr)
	}
	version := 0
	if v, ok, err := single(q, "version"); err != nil {
		return nil, err
	} else if ok {
		if version, err = strconv.Atoi(v); err != nil || version < 1 {
			return nil, badRequest("version must be a whole number from 1 (got %q)", v)
		}
	}
	ctx := r.Context()
	latest, err := s.cfg.Store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if latest == nil {
		return nil, notFound("medallion %s not found", id)
	}
	m := latest
	if version > 0 && version != latest.Meta.Version {
		if m, err = s.cfg.Store.GetVersion(ctx, id, version); err != nil {
			return nil, err
		}
		if m == nil {
			return nil, notFound("medallion %s has no version %d (the latest is %d)", id, version, latest.Meta.Version)
		}
	}
	f, err := locateItem(m, ref)
	if err != nil {
		return nil, err
	}
	out := api.Item{
		Item: api.ItemAddress(id, ref), MedallionID: id, Ref: ref, Kind: f.kind,
		Version: m.Meta.Version, Latest: latest.Meta.Version, State: api.StateCurrent,
		Text: f.text, Detail: f.detail, Evidence: evidenceOf(m, f.evidenceItem, f.evidenceText),
		History: []api.ItemVersion{}, Nodes: latest.Scope.GraphNodes,
	}
	reviewText := f.evidenceText
	if f.kind == api.KindDecision || f.kind == api.KindQuestion {
		reviewText = ""
	}
	out.Review, out.Source = reviewOf(m, f.kind, f.evidenceItem, reviewText)
	if s.cfg.Search != nil {
		if err := s.itemHistory(ctx, &out, f, latest); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// itemHistory fills in the item's state and every text its reference had,
// from the search index's documents of the medallion.
func (s *Server) itemHistory(ctx context.Context, out *api.Item, f *found, latest *medallion.Medallion) error {
	docs, err := s.cfg.Search.MedallionDocs(ctx, out.MedallionID)
	if err != nil {
		return err
	}
	byText := f.kind != api.KindDecision && f.kind != api.KindQuestion && f.kind != api.KindSubsystem && f.kind != medallion.ItemSummary
	for _, d := range docs {
		if d.Kind != f.kind || d.Ref != f.doc.Ref || (byText && d.Text != f.doc.Text) {
			continue
		}
		last := latest.Meta.Version
		if d.Until != 0 {
			last = d.Until - 1
		}
		out.History = append(out.History, api.ItemVersion{Text: d.Text, FirstVersion: d.First, Version: last, State: d.State, By: d.By})
		if d.Text == f.doc.Text {
			out.State, out.By = d.State, d.By
		}
	}
	return nil
}
