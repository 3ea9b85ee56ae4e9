package client

import (
	"context"
	"net/http"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
)

func TestLoadQuery(t *testing.T) {
	var got []string
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		writeJSON(w, http.StatusOK, api.LoadResponse{Text: "state", Tokens: 2, Budget: 1500, Medallions: []string{"m"}})
	}))
	for _, tc := range []struct {
		req  api.LoadRequest
		want string
	}{
		{api.LoadRequest{Nodes: []string{"repo:a", "module:b"}, Tags: []string{"t"}}, "GET /v1/load?node=repo%3Aa&node=module%3Ab&tag=t"},
		{api.LoadRequest{CWD: "/src/a b", Limit: 2, Budget: 300, Format: "json"}, "GET /v1/load?budget=300&cwd=%2Fsrc%2Fa+b&format=json&limit=2"},
	} {
		got = nil
		resp, err := c.Load(context.Background(), tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "state" || resp.Medallions[0] != "m" {
			t.Errorf("response %+v", resp)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("requests %q, want %q", got, tc.want)
		}
	}
}

func TestLoadError(t *testing.T) {
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusBadRequest, api.Error{Error: "this daemon cannot resolve --cwd", Code: api.CodeInvalid})
	}))
	_, err := c.Load(context.Background(), api.LoadRequest{CWD: "/x"})
	if ae, ok := err.(*APIError); !ok || ae.Body.Code != api.CodeInvalid {
		t.Fatalf("err = %v, want a 400 APIError", err)
	}
}
