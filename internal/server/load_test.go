package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

func TestLoad(t *testing.T) {
	e := startWith(t, func(c *Config, _ *store.Badger) {
		c.ScopeForCWD = func(cwd string) []string {
			if strings.HasPrefix(cwd, "/src/muse") {
				return []string{"repo:muse"}
			}
			return nil
		}
	})
	ctx := context.Background()
	rule := sample("muse-state", "repo:muse")
	rule.Affordances.Invariants = []string{"never commit generated files"}
	if _, err := e.store.Create(ctx, rule); err != nil {
		t.Fatal(err)
	}
	stale := sample("muse-old", "repo:muse")
	stale.Meta.Status = medallion.StatusStale
	stale.Affordances.Invariants = []string{"an outdated rule"}
	if _, err := e.store.Create(ctx, stale); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, query string
		ids         []string
		want        []string
	}{
		{"node", "node=repo:muse", []string{"muse-state"}, []string{"canonical state of repo:muse", "never commit generated files", "store in Badger"}},
		{"cwd", "cwd=" + url.QueryEscape("/src/muse/cmd"), []string{"muse-state"}, []string{"never commit generated files"}},
		{"no medallion", "node=repo:other", []string{}, []string{"No medallion exists"}},
		{"cwd outside any scope", "cwd=/tmp", []string{}, []string{"No medallion exists"}},
		{"json", "node=repo:muse&format=json", []string{"muse-state"}, []string{`"rules":["never commit generated files"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var resp api.LoadResponse
			e.want(t, http.StatusOK, "GET", "/v1/load?"+tc.query, nil, &resp)
			if strings.Join(resp.Medallions, ",") != strings.Join(tc.ids, ",") {
				t.Errorf("medallions %q, want %q", resp.Medallions, tc.ids)
			}
			for _, w := range tc.want {
				if !strings.Contains(resp.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, resp.Text)
				}
			}
			if strings.Contains(resp.Text, "outdated") {
				t.Errorf("a stale medallion was rendered:\n%s", resp.Text)
			}
			if resp.Budget != 1500 || resp.Tokens > resp.Budget || resp.Tokens == 0 {
				t.Errorf("tokens %d of budget %d", resp.Tokens, resp.Budget)
			}
		})
	}

	var small api.LoadResponse
	e.want(t, http.StatusOK, "GET", "/v1/load?node=repo:muse&budget=60", nil, &small)
	if small.Tokens > 60 || len(small.Cut) == 0 {
		t.Errorf("budget 60: tokens %d, cut %q", small.Tokens, small.Cut)
	}
}

func TestLoadErrors(t *testing.T) {
	e := start(t) // no ScopeForCWD
	for _, tc := range []struct{ query, want string }{
		{"", "give at least one node or tag"},
		{"cwd=/src/muse", "cannot resolve --cwd"},
		{"cwd=relative", "absolute"},
		{"cwd=/a&node=repo:x", "not both"},
		{"node=repo:x&budget=0", "budget must be"},
		{"node=repo:x&limit=x", "limit must be"},
		{"node=repo:x&format=html", "format must be"},
		{"node=", "must not be empty"},
		{"nodes=repo:x", "unknown query parameter"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			checkError(t, e.do(t, "GET", "/v1/load?"+tc.query, nil, nil), http.StatusBadRequest, api.CodeInvalid, tc.want)
		})
	}
}
