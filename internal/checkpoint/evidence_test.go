package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/transcript"
)

// ev is one converted event, as the tests compare it.
type ev struct {
	kind    transcript.Kind
	subtype string
	text    string
}

func TestFromEvidence(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		evidence api.Evidence
		want     []ev
	}{
		{
			name:     "summary",
			evidence: api.Evidence{SessionSummary: "  Rewrote the parser.\n"},
			want:     []ev{{transcript.KindCompactionSummary, "session_summary", "Rewrote the parser."}},
		},
		{
			name: "turns with continuation lines",
			evidence: api.Evidence{Transcripts: []string{
				"User: the build fails\nwith exit 2\n\nAssistant: fixed the import\nagent: tests pass\r\nhuman: no, never vendor deps",
				"assistant: second transcript",
			}},
			want: []ev{
				{transcript.KindUserPrompt, "", "the build fails\nwith exit 2"},
				{transcript.KindAssistantMessage, "", "fixed the import"},
				{transcript.KindAssistantMessage, "", "tests pass"},
				{transcript.KindUserPrompt, "", "no, never vendor deps"},
				{transcript.KindAssistantMessage, "", "second transcript"},
			},
		},
		{
			name:     "text before any speaker is nobody's",
			evidence: api.Evidence{Transcripts: []string{"notes from the standup\nUSER: always use make"}},
			want: []ev{
				{transcript.KindSystem, "transcript", "notes from the standup"},
				{transcript.KindUserPrompt, "", "always use make"},
			},
		},
		{
			name:     "empty turns dropped",
			evidence: api.Evidence{Transcripts: []string{"user:\nassistant:   \nuser: real"}},
			want:     []ev{{transcript.KindUserPrompt, "", "real"}},
		},
		{
			name:     "artefacts in key order",
			evidence: api.Evidence{Artefacts: map[string]api.Artefact{"report": "ok", "pr": "https://example.com/pr/1"}},
			want: []ev{
				{transcript.KindSystem, "artefact", "artefact pr: https://example.com/pr/1"},
				{transcript.KindSystem, "artefact", "artefact report: ok"},
			},
		},
		{
			name: "secrets redacted",
			evidence: api.Evidence{
				Transcripts: []string{"user: the key is AKIAIOSFODNN7EXAMPLE"},
				Artefacts:   map[string]api.Artefact{"env": "GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345"},
			},
			want: []ev{
				{transcript.KindUserPrompt, "", "the key is [REDACTED:aws-access-key]"},
				{transcript.KindSystem, "artefact", "artefact env: GITHUB_TOKEN=[REDACTED:github-token]"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := api.CheckpointRequest{Nodes: []string{"repo:x", "module:y", "repo:x"}, Tags: []string{"t"}, Note: "n", Evidence: &tt.evidence}
			ep, err := FromEvidence(req, now)
			if err != nil {
				t.Fatal(err)
			}
			var got []ev
			ids := map[string]bool{}
			for i, b := range ep.Events {
				e := b.Event
				got = append(got, ev{e.Kind, e.Subtype, e.Text})
				if b.Seq != uint64(i+1) || e.SessionID != ep.SessionID || e.Agent != EvidenceAgent || !e.Time.Equal(now) || e.Boilerplate {
					t.Errorf("event %d = %+v (seq %d)", i, e, b.Seq)
				}
				if ids[e.ID] || !strings.HasPrefix(e.ID, "ev-") {
					t.Errorf("event %d: id %q repeated or malformed", i, e.ID)
				}
				ids[e.ID] = true
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("events:\n got %q\nwant %q", got, tt.want)
			}
			if fmt.Sprint(ep.Scope) != "[module:y repo:x]" || fmt.Sprint(ep.Tags) != "[t]" || ep.Trigger != TriggerEvidence ||
				ep.Agent != EvidenceAgent || !strings.HasPrefix(ep.SessionID, "evidence-") {
				t.Errorf("episode = %+v", ep)
			}

			// The same request gives the same ids, at any time.
			again, err := FromEvidence(req, now.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if again.SessionID != ep.SessionID {
				t.Errorf("session id changed: %s, then %s", ep.SessionID, again.SessionID)
			}
			for i := range ep.Events {
				if again.Events[i].Event.ID != ep.Events[i].Event.ID {
					t.Errorf("event %d: id %s, then %s", i, ep.Events[i].Event.ID, again.Events[i].Event.ID)
				}
			}
		})
	}
}

func TestFromEvidenceDerivesContext(t *testing.T) {
	ep, err := FromEvidence(api.CheckpointRequest{Nodes: []string{"repo:x"}, Evidence: &api.Evidence{
		Transcripts: []string{"user: don't touch the generated files\nassistant: understood"},
	}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Context.Corrections) != 1 {
		t.Errorf("corrections = %+v, want the user's one", ep.Context.Corrections)
	}
}

func TestFromEvidenceBounds(t *testing.T) {
	arts := map[string]api.Artefact{}
	for i := range MaxArtefacts + 5 {
		arts[fmt.Sprintf("a%03d", i)] = api.Artefact(strings.Repeat("v", 2*MaxArtefactText))
	}
	long := "user: " + strings.Repeat("é", MaxEvidenceText)
	ep, err := FromEvidence(api.CheckpointRequest{Nodes: []string{"repo:x"}, Evidence: &api.Evidence{
		Transcripts: []string{long}, Artefacts: arts,
	}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ep.Events); n != 1+MaxArtefacts {
		t.Errorf("%d events, want the turn and %d artefacts", n, MaxArtefacts)
	}
	turn := ep.Events[0].Event
	if len(turn.Text) > MaxEvidenceText || !strings.Contains(turn.Text, "bytes elided") || turn.TextBytes != len(long)-len("user: ") {
		t.Errorf("long turn: %d bytes (TextBytes %d), want at most %d with a marker", len(turn.Text), turn.TextBytes, MaxEvidenceText)
	}
	if !strings.HasPrefix(turn.Text, "éé") || !strings.HasSuffix(turn.Text, "éé") {
		t.Errorf("long turn not cut on rune boundaries: %q…", turn.Text[:10])
	}
	for _, b := range ep.Events[1:] {
		if len(b.Event.Text) > MaxArtefactText {
			t.Errorf("artefact of %d bytes, want at most %d", len(b.Event.Text), MaxArtefactText)
		}
	}
}

func TestCheckEvidence(t *testing.T) {
	ok := &api.Evidence{SessionSummary: "s"}
	tests := []struct {
		name string
		req  api.CheckpointRequest
		want string // in the error; "" for valid
	}{
		{"valid", api.CheckpointRequest{Nodes: []string{"repo:x"}, Evidence: ok}, ""},
		{"artefacts only", api.CheckpointRequest{Nodes: []string{"repo:x"}, Evidence: &api.Evidence{Artefacts: map[string]api.Artefact{"k": "v"}}}, ""},
		{"no nodes", api.CheckpointRequest{Evidence: ok}, "nodes:"},
		{"blank node", api.CheckpointRequest{Nodes: []string{"repo:x", " "}, Evidence: ok}, "nodes[1] is blank"},
		{"blank tag", api.CheckpointRequest{Nodes: []string{"repo:x"}, Tags: []string{""}, Evidence: ok}, "tags[0] is blank"},
		{"no evidence", api.CheckpointRequest{Nodes: []string{"repo:x"}}, "evidence:"},
		{"empty evidence", api.CheckpointRequest{Nodes: []string{"repo:x"}, Evidence: &api.Evidence{Transcripts: []string{""}}}, "all empty"},
		{"with a session", api.CheckpointRequest{SessionID: "s", Nodes: []string{"repo:x"}, Evidence: ok}, "exclude each other"},
		{"too many turns", api.CheckpointRequest{Nodes: []string{"repo:x"}, Evidence: &api.Evidence{
			Transcripts: []string{strings.Repeat("user: x\n", MaxEpisodeEvents)},
		}}, "evidence.transcripts:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckEvidence(tt.req)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.want != "" && (!errors.Is(err, ErrInvalidEvidence) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want ErrInvalidEvidence with %q", err, tt.want)
			}
		})
	}
}

// TestEvidenceArtefactsAnyJSON: artefacts take any JSON value, as the
// seed's Record<string, any> (its own example has "files_touched": [...]).
func TestEvidenceArtefactsAnyJSON(t *testing.T) {
	var ev api.Evidence
	seed := `{"session_summary": "Refactored the router.",
	  "artefacts": {"test_results": {"passed": 12, "failed": 0}, "files_touched": ["llm_router.py", "config.yaml"], "pr": "#7"}}`
	if err := json.Unmarshal([]byte(seed), &ev); err != nil {
		t.Fatal(err)
	}
	ep, err := FromEvidence(api.CheckpointRequest{Nodes: []string{"repo:muse"}, Evidence: &ev}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ep.Events {
		if e.Event.Subtype == "artefact" {
			got = append(got, e.Event.Text)
		}
	}
	want := []string{`artefact files_touched: ["llm_router.py","config.yaml"]`, "artefact pr: #7", `artefact test_results: {"passed":12,"failed":0}`}
	if !slices.Equal(got, want) {
		t.Errorf("artefacts %q, want %q", got, want)
	}
}
