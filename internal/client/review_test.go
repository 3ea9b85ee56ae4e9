package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
)

func TestReviewRequests(t *testing.T) {
	var got []recorded
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: string(b)})
		switch r.URL.Path {
		case "/v1/review":
			if r.Method == http.MethodGet {
				writeJSON(w, http.StatusOK, api.ReviewResponse{Medallions: 1})
				return
			}
			writeJSON(w, http.StatusOK, api.ReviewActionResponse{})
		case "/v1/llm/check":
			writeJSON(w, http.StatusOK, api.LLMCheck{OK: true, Lines: []string{"works"}})
		}
	}))
	ctx := context.Background()
	list, err := c.Review(ctx, ReviewRequest{Nodes: []string{"repo:a"}, Tags: []string{"t"}, State: "all"})
	if err != nil || list.Items == nil || list.Medallions != 1 {
		t.Fatalf("Review = %+v, %v", list, err)
	}
	act, err := c.ReviewAct(ctx, api.ReviewActionRequest{Action: api.ReviewEdit, Item: "m:D-001", Text: "new"})
	if err != nil || act.Changes == nil {
		t.Fatalf("ReviewAct = %+v, %v", act, err)
	}
	check, err := c.LLMCheck(ctx)
	if err != nil || !check.OK || check.Lines[0] != "works" {
		t.Fatalf("LLMCheck = %+v, %v", check, err)
	}
	if len(got) != 3 || got[0].Method != "GET" || got[0].Query != "node=repo%3Aa&state=all&tag=t" ||
		got[1].Method != "POST" || got[2].Method != "POST" || got[2].Path != "/v1/llm/check" || got[2].Body != "" {
		t.Errorf("requests %+v", got)
	}
	var body api.ReviewActionRequest
	if err := json.Unmarshal([]byte(got[1].Body), &body); err != nil || body.Action != "edit" || body.Item != "m:D-001" || body.Text != "new" {
		t.Errorf("action body %s", got[1].Body)
	}
}

func TestLLMCheckWithoutLLM(t *testing.T) {
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, api.Error{Error: api.NoLLMMessage, Code: api.CodeNotFound})
	}))
	_, err := c.LLMCheck(context.Background())
	if ae, ok := err.(*APIError); !ok || ae.Body.Code != api.CodeNotFound || ae.Error() != api.NoLLMMessage {
		t.Fatalf("err = %v", err)
	}
}
