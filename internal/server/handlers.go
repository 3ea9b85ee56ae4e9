package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// list answers GET /v1/medallions?node=N&tag=T&limit=L with the latest
// medallions for the scope.
//
// A request naming no node and no tag is refused with 400 rather than
// answered with the store's empty list: it is always a mistake (a
// forgotten flag, a typo in the parameter name), and an empty result would
// read as "nothing stored".
func (s *Server) list(r *http.Request) (any, error) {
	q, err := query(r, "node", "tag", "limit")
	if err != nil {
		return nil, err
	}
	scope := medallion.Scope{GraphNodes: q["node"], Tags: q["tag"]}
	for _, v := range scope.GraphNodes {
		if strings.TrimSpace(v) == "" {
			return nil, badRequest("node must not be empty")
		}
	}
	for _, v := range scope.Tags {
		if strings.TrimSpace(v) == "" {
			return nil, badRequest("tag must not be empty")
		}
	}
	if len(scope.GraphNodes) == 0 && len(scope.Tags) == 0 {
		return nil, badRequest("give at least one node or tag (e.g. ?node=repo:muse or ?tag=project_state)")
	}
	limit := api.DefaultListLimit
	if v, ok, err := single(q, "limit"); err != nil {
		return nil, err
	} else if ok {
		limit, err = strconv.Atoi(v)
		if err != nil || limit < 1 || limit > maxListLimit {
			return nil, badRequest("limit must be a whole number from 1 to %d (got %q)", maxListLimit, v)
		}
	}
	ms, err := s.cfg.Store.LatestForScope(r.Context(), scope, limit)
	if err != nil {
		return nil, err
	}
	if ms == nil {
		ms = []*medallion.Medallion{}
	}
	return api.ListResponse{Medallions: ms}, nil
}

// get answers GET /v1/medallions/{id}[?version=N].
func (s *Server) get(r *http.Request) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	q, err := query(r, "version")
	if err != nil {
		return nil, err
	}
	v, ok, err := single(q, "version")
	if err != nil {
		return nil, err
	}
	if !ok {
		m, err := s.cfg.Store.Get(r.Context(), id)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, notFound("medallion %s not found", id)
		}
		return m, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return nil, badRequest("version must be a whole number from 1 (got %q)", v)
	}
	m, err := s.cfg.Store.GetVersion(r.Context(), id, n)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, notFound("medallion %s version %d not found", id, n)
	}
	return m, nil
}

// history answers GET /v1/medallions/{id}/history.
func (s *Server) history(r *http.Request) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	versions, err := s.cfg.Store.History(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("medallion %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	return api.HistoryResponse{ID: id, Versions: versions}, nil
}

// create answers POST /v1/medallions: store a new medallion as version 1.
func (s *Server) create(r *http.Request) (any, error) {
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	m, err := decodeMedallion(r)
	if err != nil {
		return nil, err
	}
	stored, err := s.cfg.Store.Create(r.Context(), m)
	if errors.Is(err, store.ErrExists) {
		id := m.Meta.MedallionID
		return nil, &apiError{http.StatusConflict, api.CodeExists,
			fmt.Sprintf("medallion %s already exists; PUT /v1/medallions/%s updates it", id, id)}
	}
	if err != nil {
		return nil, err
	}
	return reply{http.StatusCreated, api.PutResponse{Created: true, Medallion: stored}}, nil
}

// put answers PUT /v1/medallions/{id}: create the medallion when absent
// (201), else store the body as its next version (200). A body with
// meta.version > 0 names the version it is based on and gets 409 when that
// is no longer the latest; meta.version 0 means "on top of whatever is
// latest now". An empty meta.status keeps the current status, just as it
// defaults to active on create, so one body works for both.
func (s *Server) put(r *http.Request) (any, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	m, err := decodeMedallion(r)
	if err != nil {
		return nil, err
	}
	if m.Meta.MedallionID != id {
		return nil, badRequest("the path names medallion %q but the body's meta.medallion_id is %q", id, m.Meta.MedallionID)
	}
	ctx := r.Context()
	// Two rounds at most: a Create that loses a race with another
	// creator finds the medallion present on the second round and updates
	// it, which is what a PUT asks for.
	for round := 1; ; round++ {
		cur, err := s.cfg.Store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if cur == nil {
			stored, err := s.cfg.Store.Create(ctx, m)
			if errors.Is(err, store.ErrExists) && round == 1 {
				continue
			}
			if err != nil {
				return nil, err
			}
			return reply{http.StatusCreated, api.PutResponse{Created: true, Medallion: stored}}, nil
		}
		next := m.Clone()
		if next.Meta.Version == 0 {
			next.Meta.Version = cur.Meta.Version
		}
		if next.Meta.Status == "" {
			next.Meta.Status = cur.Meta.Status
		}
		stored, err := s.cfg.Store.Update(ctx, next)
		if errors.Is(err, store.ErrConflict) {
			return nil, &apiError{http.StatusConflict, api.CodeConflict,
				fmt.Sprintf("%v; read the latest version and apply your change to it, or send meta.version 0 to write on top of it", err)}
		}
		if err != nil {
			return nil, err
		}
		return api.PutResponse{Created: false, Medallion: stored}, nil
	}
}

// pathID returns the {id} path segment, refusing ids no medallion can
// have so that the answer is "bad id" rather than "not found".
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !medallion.ValidID(id) {
		return "", badRequest("invalid medallion id %q: use 1-%d ASCII letters, digits or . _ : -", id, medallion.MaxIDLen)
	}
	return id, nil
}

// query parses the query string and refuses parameters not in allowed, so
// that a misspelt one (?nodes=) is an error instead of silently ignored.
func query(r *http.Request, allowed ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("invalid query string: %v", err)
	}
	var unknown []string
	for k := range q {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		if len(allowed) == 0 {
			return nil, badRequest("unknown query parameter %s: %s %s takes none", quoteList(unknown), r.Method, r.URL.Path)
		}
		return nil, badRequest("unknown query parameter %s (allowed: %s)", quoteList(unknown), quoteList(allowed))
	}
	return q, nil
}

// onlyParams refuses any query parameter.
func onlyParams(r *http.Request) error {
	_, err := query(r)
	return err
}

// single returns the one value of parameter name, refusing repeats.
func single(q url.Values, name string) (string, bool, error) {
	vals := q[name]
	switch len(vals) {
	case 0:
		return "", false, nil
	case 1:
		return vals[0], true, nil
	default:
		return "", false, badRequest("give %s once (got %d values)", name, len(vals))
	}
}

// decodeMedallion reads the request body as one medallion. Unknown fields
// are refused: a misspelt key ("decisons") would otherwise be dropped and
// the medallion stored without what the caller meant to send.
func decodeMedallion(r *http.Request) (*medallion.Medallion, error) {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	m := new(medallion.Medallion)
	if err := dec.Decode(m); err != nil {
		return nil, bodyError(err)
	}
	if err := expectEOF(dec); err != nil {
		return nil, err
	}
	return m, nil
}

// bodyError turns a decoding error into a 400 (or 413) a caller can act on.
func bodyError(err error) error {
	var (
		mbe *http.MaxBytesError
		se  *json.SyntaxError
		te  *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, io.EOF):
		return badRequest("the request body is empty; send a medallion as JSON")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("invalid JSON: the request body ends in the middle of a value")
	case errors.As(err, &se):
		return badRequest("invalid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.As(err, &te):
		if te.Field != "" {
			return badRequest("invalid JSON at byte %d: field %s: cannot use a JSON %s as %s", te.Offset, te.Field, te.Value, te.Type)
		}
		return badRequest("invalid JSON at byte %d: cannot use a JSON %s as %s", te.Offset, te.Value, te.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no typed error for this one.
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return badRequest("unknown field %s in the request body (medallionctl schema shows the valid ones)", field)
	default:
		return badRequest("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// jsonEncode writes v as indented JSON: responses are read by people
// using curl as often as by the client.
func jsonEncode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
