package server

import (
	"bytes"
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
	q, err := query(r, "node", "tag", "cwd", "limit", "budget", "format")
	if err != nil {
		return nil, err
	}
	scope := medallion.Scope{GraphNodes: q["node"], Tags: q["tag"]}
	for _, v := range append(append([]string{}, scope.GraphNodes...), scope.Tags...) {
		if strings.TrimSpace(v) == "" {
			return nil, badRequest("node and tag must not be empty")
		}
	}
	cwd, hasCWD, err := single(q, "cwd")
	if err != nil {
		return nil, err
	}
	switch {
	case hasCWD && (len(scope.GraphNodes) > 0 || len(scope.Tags) > 0):
		return nil, badRequest("give either cwd or node/tag, not both")
	case hasCWD:
		if !filepath.IsAbs(cwd) {
			return nil, badRequest("cwd must be an absolute path (got %q)", cwd)
		}
		if s.cfg.ScopeForCWD == nil {
			return nil, badRequest("this daemon cannot resolve --cwd; name the scope with node or tag")
		}
		cwd = filepath.Clean(cwd)
		scope.GraphNodes = s.cfg.ScopeForCWD(cwd)
	case len(scope.GraphNodes) == 0 && len(scope.Tags) == 0:
		return nil, badRequest("give at least one node or tag, or a cwd (e.g. ?node=repo:muse or ?cwd=/home/me/muse)")
	}

	limit, err := intParam(q, "limit", api.DefaultLoadLimit, maxLoadLimit)
	if err != nil {
		return nil, err
	}
	budget, err := intParam(q, "budget", render.DefaultBudget, maxLoadBudget)
	if err != nil {
		return nil, err
	}
	format := render.FormatMarkdown
	if v, ok, err := single(q, "format"); err != nil {
		return nil, err
	} else if ok {
		if v != render.FormatMarkdown && v != render.FormatJSON {
			return nil, badRequest("format must be markdown or json (got %q)", v)
		}
		format = v
	}

	key := loadKey(scope, limit, budget, format)
	// A load as the SessionStart hook makes it (its cwd, the default
	// limit, markdown) leaves its answer where the next hook reads it.
	forHook := hasCWD && limit == api.DefaultLoadLimit && format == render.FormatMarkdown
	cached, writes := s.loads.get(key)
	if cached != nil {
		if forHook {
			s.loads.keepFile(key, writes, cwd, budget, scope.GraphNodes)
		}
		return encodedJSON(cached), nil
	}
	var ms []*medallion.Medallion
	if len(scope.GraphNodes) > 0 || len(scope.Tags) > 0 {
		// Stale and superseded medallions are not the current state; ask
		// for more than limit so that skipping them still fills it.
		all, err := s.cfg.Store.LatestForScope(r.Context(), scope, min(limit*4, maxListLimit))
		if err != nil {
			return nil, err
		}
		for _, m := range all {
			if m.Meta.Status == medallion.StatusActive && len(ms) < limit {
				ms = append(ms, m)
			}
		}
	}
	res := render.Load(ms, render.Options{Budget: budget, Format: format, Review: s.cfg.ReviewMode})
	resp := api.LoadResponse{
		Text: res.Text, Tokens: res.Tokens, Budget: budget,
		Scope:      append(append([]string{}, scope.GraphNodes...), scope.Tags...),
		Medallions: make([]string, len(ms)),
		Cut:        res.Cut,
	}
	for i, m := range ms {
		resp.Medallions[i] = m.Meta.MedallionID
	}
	if resp.Cut == nil {
		resp.Cut = []string{}
	}
	if s.loads == nil {
		return resp, nil
	}
	var body bytes.Buffer
	if err := jsonEncode(&body, resp); err != nil {
		return nil, err
	}
	text := "" // the hook adds nothing for a scope without medallions
	if len(ms) > 0 {
		text = resp.Text
	}
	s.loads.put(key, scope, body.Bytes(), text, writes)
	if forHook {
		s.loads.keepFile(key, writes, cwd, budget, scope.GraphNodes)
	}
	return encodedJSON(body.Bytes()), nil
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
