package server

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/render"
)

// maxLoadBudget caps ?budget=: a save file is meant to be a small part of
// an agent's context, and the cap keeps a typo from rendering megabytes.
const maxLoadBudget = 200_000

// maxLoadLimit caps ?limit= on loads: a save file of more medallions than
// this would not fit any sensible budget.
const maxLoadLimit = 50

// load answers GET /v1/load with the save file of the latest active
// medallions for a scope, given as node/tag or as a cwd the daemon
// resolves to graph nodes (Config.ScopeForCWD).
func (s *Server) load(r *http.Request) (any, error) {
	p, err := s.loadQuery(r)
	if err != nil {
		return nil, err
	}
	body, _, err := s.loadAnswer(r.Context(), p)
	if err != nil {
		return nil, err
	}
	return encodedJSON(body), nil
}

// hookAnswer answers GET /v1/hook?cwd=DIR&budget=B, the SessionStart hook's
// load, with the text the hook adds (api: the hook endpoint): the load of
// /v1/load?cwd=DIR&budget=B without its JSON around it, and 204 when no
// medallion exists for the directory.
func (s *Server) hookAnswer(r *http.Request) (any, error) {
	q, err := query(r, "cwd", "budget")
	if err != nil {
		return nil, err
	}
	if !q.Has("cwd") {
		return nil, badRequest("give the directory the session starts in as cwd (e.g. ?cwd=/home/me/muse)")
	}
	p, err := s.parseLoad(q)
	if err != nil {
		return nil, err
	}
	_, text, err := s.loadAnswer(r.Context(), p)
	if err != nil {
		return nil, err
	}
	if text == "" {
		return reply{status: http.StatusNoContent, body: markdownText("")}, nil
	}
	return markdownText(text), nil
}

// loadParams is what a load renders.
type loadParams struct {
	scope         medallion.Scope
	cwd           string // clean; set when scope was resolved from it
	limit, budget int
	format        string
}

// forHook reports whether p is a load as the SessionStart hook makes it
// (a cwd, the default limit, markdown): its answer is kept as a file for
// the next hook (loadCache.keepFile).
func (p loadParams) forHook() bool {
	return p.cwd != "" && p.limit == api.DefaultLoadLimit && p.format == render.FormatMarkdown
}

// loadQuery reads and checks GET /v1/load's parameters.
func (s *Server) loadQuery(r *http.Request) (loadParams, error) {
	q, err := query(r, "node", "tag", "cwd", "limit", "budget", "format")
	if err != nil {
		return loadParams{}, err
	}
	return s.parseLoad(q)
}

// parseLoad checks a load's parameters: those of GET /v1/load, or fewer.
func (s *Server) parseLoad(q url.Values) (loadParams, error) {
	var p loadParams
	var err error
	p.scope = medallion.Scope{GraphNodes: q["node"], Tags: q["tag"]}
	for _, v := range append(append([]string{}, p.scope.GraphNodes...), p.scope.Tags...) {
		if strings.TrimSpace(v) == "" {
			return p, badRequest("node and tag must not be empty")
		}
	}
	cwd, hasCWD, err := single(q, "cwd")
	if err != nil {
		return p, err
	}
	switch {
	case hasCWD && (len(p.scope.GraphNodes) > 0 || len(p.scope.Tags) > 0):
		return p, badRequest("give either cwd or node/tag, not both")
	case hasCWD:
		if !filepath.IsAbs(cwd) {
			return p, badRequest("cwd must be an absolute path (got %q)", cwd)
		}
		if s.cfg.ScopeForCWD == nil {
			return p, badRequest("this daemon cannot resolve --cwd; name the scope with node or tag")
		}
		p.cwd = filepath.Clean(cwd)
		p.scope.GraphNodes = s.cfg.ScopeForCWD(p.cwd)
	case len(p.scope.GraphNodes) == 0 && len(p.scope.Tags) == 0:
		return p, badRequest("give at least one node or tag, or a cwd (e.g. ?node=repo:muse or ?cwd=/home/me/muse)")
	}

	if p.limit, err = intParam(q, "limit", api.DefaultLoadLimit, maxLoadLimit); err != nil {
		return p, err
	}
	if p.budget, err = intParam(q, "budget", render.DefaultBudget, maxLoadBudget); err != nil {
		return p, err
	}
	p.format = render.FormatMarkdown
	if v, ok, err := single(q, "format"); err != nil {
		return p, err
	} else if ok {
		if v != render.FormatMarkdown && v != render.FormatJSON {
			return p, badRequest("format must be markdown or json (got %q)", v)
		}
		p.format = v
	}
	return p, nil
}

// loadAnswer is the answer to the load p, kept or rendered (and kept):
// the encoded api.LoadResponse, and the text the hook adds for it ("" when
// no medallion is in the scope). The hook's loads also leave their text in
// a file (forHook).
func (s *Server) loadAnswer(ctx context.Context, p loadParams) (body []byte, text string, err error) {
	key := loadKey(p.scope, p.limit, p.budget, p.format)
	body, text, writes := s.loads.get(key)
	if body == nil {
		var resp api.LoadResponse
		if resp, text, err = s.renderLoad(ctx, p); err != nil {
			return nil, "", err
		}
		var b bytes.Buffer
		if err := jsonEncode(&b, resp); err != nil {
			return nil, "", err
		}
		body = b.Bytes()
		s.loads.put(key, p.scope, body, text, writes)
	}
	if p.forHook() {
		s.loads.keepFileLater(ctx, key, writes, p.cwd, p.budget, p.scope.GraphNodes)
	}
	return body, text, nil
}

// withoutEvidence is a store that can answer a scope query without the
// medallions' evidence (store.Badger): decoding it was most of reading a
// medallion with much of it.
type withoutEvidence interface {
	LatestForScopeWithoutEvidence(ctx context.Context, scope medallion.Scope, limit int) ([]*medallion.Medallion, error)
}

// latestWithoutEvidence is the store's LatestForScope for a reader that
// does not use the evidence (a save file shows none; a scoped search
// wants the ids): the answers may lack it, so none may be written back.
func (s *Server) latestWithoutEvidence(ctx context.Context, scope medallion.Scope, limit int) ([]*medallion.Medallion, error) {
	if st, ok := s.cfg.Store.(withoutEvidence); ok {
		return st.LatestForScopeWithoutEvidence(ctx, scope, limit)
	}
	return s.cfg.Store.LatestForScope(ctx, scope, limit)
}

// renderLoad renders the load p from the store, and the text the hook
// adds for it: none for a scope without medallions.
func (s *Server) renderLoad(ctx context.Context, p loadParams) (resp api.LoadResponse, hookText string, err error) {
	var ms []*medallion.Medallion
	if len(p.scope.GraphNodes) > 0 || len(p.scope.Tags) > 0 {
		// Stale and superseded medallions are not the current state; ask
		// for more than limit so that skipping them still fills it.
		all, err := s.latestWithoutEvidence(ctx, p.scope, min(p.limit*4, maxListLimit))
		if err != nil {
			return resp, "", err
		}
		for _, m := range all {
			if m.Meta.Status == medallion.StatusActive && len(ms) < p.limit {
				ms = append(ms, m)
			}
		}
	}
	res := render.Load(ms, render.Options{Budget: p.budget, Format: p.format, Review: s.cfg.ReviewMode})
	resp = api.LoadResponse{
		Text: res.Text, Tokens: res.Tokens, Budget: p.budget,
		Scope:      append(append([]string{}, p.scope.GraphNodes...), p.scope.Tags...),
		Medallions: make([]string, len(ms)),
		Cut:        res.Cut,
	}
	for i, m := range ms {
		resp.Medallions[i] = m.Meta.MedallionID
	}
	if resp.Cut == nil {
		resp.Cut = []string{}
	}
	if len(ms) > 0 {
		hookText = resp.Text
	}
	return resp, hookText, nil
}

// intParam reads an optional whole-number parameter from 1 to hi.
func intParam(q url.Values, name string, def, hi int) (int, error) {
	v, ok, err := single(q, name)
	if err != nil || !ok {
		return def, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > hi {
		return 0, badRequest("%s must be a whole number from 1 to %d (got %q)", name, hi, v)
	}
	return n, nil
}
