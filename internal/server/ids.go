package server

import (
	"net/http"
	"strings"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/store"
)

// maxCompletions bounds the ids GET /v1/ids answers with: a shell offers
// them as completions, where hundreds are already more than anyone reads.
const maxCompletions = 500

// ids answers GET /v1/ids: every medallion's id with its scope, for the
// shell completion of the commands that take an id.
func (s *Server) ids(r *http.Request) (any, error) {
	if _, err := query(r); err != nil {
		return nil, err
	}
	lister, ok := s.cfg.Store.(store.IDLister)
	if !ok {
		return nil, badRequest("this daemon's store cannot list every medallion")
	}
	ids, err := lister.IDs(r.Context())
	if err != nil {
		return nil, err
	}
	resp := api.IDsResponse{Medallions: []api.IDEntry{}}
	for _, id := range ids {
		if len(resp.Medallions) == maxCompletions {
			break
		}
		m, err := s.cfg.Store.Get(r.Context(), id)
		if err != nil {
			return nil, err
		}
		if m == nil { // deleted meanwhile
			continue
		}
		resp.Medallions = append(resp.Medallions, api.IDEntry{ID: id, Scope: strings.Join(m.Scope.GraphNodes, " "), Version: m.Meta.Version})
	}
	return resp, nil
}
