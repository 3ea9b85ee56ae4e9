package distill

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

func base() *medallion.Medallion {
	m := &medallion.Medallion{
		Meta:      medallion.Meta{MedallionID: "med-1", SchemaVersion: medallion.SchemaVersion, Model: "tier0", CreatedAt: "2026-11-25T10:00:00.000000Z", UpdatedAt: "2026-11-25T10:00:00.000000Z", Status: medallion.StatusActive, Version: 3},
		Scope:     medallion.Scope{GraphNodes: []string{"repo:muse"}, Tags: []string{"project_state"}},
		Decisions: []medallion.Decision{{ID: "D-001", Statement: "Keep the importer's retry loop as it is for now", Rationale: "agent's choice", Confidence: 0.5}},
		OpenQuestions: []medallion.OpenQuestion{
			{ID: "Q-004", Question: "Finish the migration", BlockedOn: []string{}, Priority: medallion.PriorityMedium},
		},
		Affordances: medallion.Affordances{Invariants: []string{"never edit generated files"}, AvoidRepeating: []string{}, RecommendedEntryPoints: []string{"internal/pb"}},
		Review:      []medallion.Review{{Item: "invariant", Text: "Always use tabs", Source: "tier1:m", State: medallion.ReviewRejected}},
	}
	m.Normalize()
	return m
}

var entries = []Entry{
	{SessionID: "s1", EventIDs: []string{"e1"}, Text: "user: ok, let's implement this"},
	{SessionID: "s1", EventIDs: []string{"e2", "e3"}, Text: "call Bash `make migrate` → ok"},
	{SessionID: "s1", EventIDs: []string{"e4"}, Text: "agent: Migration done; I chose to keep v1 columns for rollback."},
}

func TestApply(t *testing.T) {
	m := base()
	p, problems := parse(`{"summary":"","decisions":[
	  {"op":"drop","id":"D-001","statement":"","rationale":"","confidence":"low","evidence":[]},
	  {"op":"add","id":"","statement":"Keep the v1 columns after the migration","rationale":"rollback stays possible","confidence":"medium","evidence":["E3"]}],
	 "open_questions":[{"op":"resolve","id":"Q-004","question":"","blocked_on":[],"priority":"low","evidence":["E2"]}],
	 "invariants":[{"op":"add","ref":"","text":"always use tabs","evidence":["E1"]},{"op":"drop","ref":"I-1","text":"","evidence":[]}],
	 "avoid_repeating":[],"entry_points":[{"op":"drop","ref":"P-9","text":"","evidence":[]}],"subsystems":[]}`)
	if p == nil {
		t.Fatal(problems)
	}
	out := m.Clone()
	got := apply(out, newView(m, entries), p, "tier1:m", nil)
	want := Applied{Added: 1, Dropped: 2, Resolved: 1, Refused: 2} // a rejected text, an unknown handle
	if got != want {
		t.Errorf("applied %+v, want %+v", got, want)
	}
	// Ids are the code's: one past the highest ever used (D-001 left).
	if len(out.Decisions) != 1 || out.Decisions[0].ID != "D-002" || out.Decisions[0].Confidence != 0.7 {
		t.Errorf("decisions %+v", out.Decisions)
	}
	if len(out.OpenQuestions) != 0 || len(out.Affordances.Invariants) != 0 {
		t.Errorf("questions %v invariants %v", out.OpenQuestions, out.Affordances.Invariants)
	}
	if !slices.ContainsFunc(out.Evidence, func(e medallion.Evidence) bool { return e.Item == "D-002" && slices.Equal(e.EventIDs, []string{"e4"}) }) {
		t.Errorf("evidence %+v", out.Evidence)
	}
	if !slices.ContainsFunc(out.Review, func(r medallion.Review) bool { return r.Item == "invariant" && r.State == medallion.ReviewRejected }) {
		t.Error("a rejection was forgotten: the item could come back")
	}
	if err := out.Validate(); err != nil {
		t.Error(err)
	}
	if m.Decisions[0].ID != "D-001" {
		t.Error("apply changed its input")
	}
}

// TestApplyKeepsUserWords: a model may move a decision Tier 0 took from the
// user's words (to the invariants, say) but not lose them: its drop is
// refused unless an item the patch adds keeps most of those words.
func TestApplyKeepsUserWords(t *testing.T) {
	m := base()
	m.Decisions = append(m.Decisions,
		medallion.Decision{ID: "D-002", Statement: "Store the sync cursor in the metrics file and extend its JSON", Rationale: medallion.RationaleUserRequest, Confidence: 0.6},
		medallion.Decision{ID: "D-003", Statement: "Use table-driven tests for the parser", Rationale: medallion.RationaleUserPreference, Confidence: 0.7})
	p, problems := parse(`{"summary":"","decisions":[
	  {"op":"drop","id":"D-002","statement":"","rationale":"","confidence":"low","evidence":[]},
	  {"op":"drop","id":"D-003","statement":"","rationale":"","confidence":"low","evidence":[]}],
	 "open_questions":[],
	 "invariants":[{"op":"add","ref":"","text":"Use table-driven tests for the parser (the user's rule)","evidence":["E1"]}],
	 "avoid_repeating":[],"entry_points":[],"subsystems":[]}`)
	if p == nil {
		t.Fatal(problems)
	}
	out := m.Clone()
	got := apply(out, newView(m, entries), p, "tier1:m", nil)
	if got.Dropped != 1 || got.Refused != 1 {
		t.Errorf("applied %+v, want D-003 moved (dropped) and D-002's drop refused", got)
	}
	var ids []string
	for _, d := range out.Decisions {
		ids = append(ids, d.ID)
	}
	if !slices.Equal(ids, []string{"D-001", "D-002"}) {
		t.Errorf("decisions %q, want D-001 and D-002 kept", ids)
	}
}

func TestParseProblems(t *testing.T) {
	for _, tc := range []struct{ reply, want string }{
		{`{"summary":1}`, "not a JSON object"},
		{`{"summary":"","decisions":[],"open_questions":[],"invariants":[],"avoid_repeating":[],"entry_points":[],"subsystems":[],"extra":1}`, "unknown field"},
		{`{"summary":"","decisions":[{"op":"add","id":"","statement":"","rationale":"","confidence":"sure","evidence":[]}],"open_questions":[],"invariants":[],"avoid_repeating":[],"entry_points":[],"subsystems":[]}`, "confidence"},
		{"{} {}", "more than one"},
	} {
		if p, problems := parse(tc.reply); p != nil || !strings.Contains(strings.Join(problems, "\n"), tc.want) {
			t.Errorf("parse(%s) = %v, %v; want a problem with %q", tc.reply, p, problems, tc.want)
		}
	}
	// A fenced reply from a json_object server is accepted.
	if p, problems := parse("```json\n{\"summary\":\"s\",\"decisions\":[],\"open_questions\":[],\"invariants\":[],\"avoid_repeating\":[],\"entry_points\":[],\"subsystems\":[]}\n```"); p == nil {
		t.Errorf("fenced reply: %v", problems)
	}
}

// TestSchemaStrict: every object lists all its properties as required
// and forbids others, as strict mode demands.
func TestSchemaStrict(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		o, ok := v.(map[string]any)
		if !ok {
			return
		}
		if o["type"] == "object" {
			props := o["properties"].(map[string]any)
			req := o["required"].([]any)
			if len(req) != len(props) || o["additionalProperties"] != false {
				t.Errorf("%s: required %v of %d properties, additionalProperties %v", path, req, len(props), o["additionalProperties"])
			}
			for k, p := range props {
				walk(path+"."+k, p)
			}
		}
		if it, ok := o["items"]; ok {
			walk(path+"[]", it)
		}
	}
	walk("$", s)
}

// TestDigestAndChunks: calls join their results, harness text is flagged,
// long text is cut, and chunks split only at entry boundaries and the
// same way every time.
func TestDigestAndChunks(t *testing.T) {
	ok := false
	events := []transcript.Event{
		{ID: "a", SessionID: "s", Kind: transcript.KindUserPrompt, Text: "Fix the build.\nThen stop."},
		{ID: "b", SessionID: "s", Kind: transcript.KindUserPrompt, Boilerplate: true, Subtype: "hook", Text: "Stop hook feedback: " + strings.Repeat("x", 1000)},
		{ID: "c", SessionID: "s", Kind: transcript.KindToolCall, Tool: "Bash", ToolCallID: "t1", Command: "make"},
		{ID: "d", SessionID: "s", Kind: transcript.KindToolResult, Tool: "Bash", ToolCallID: "t1", OK: &ok, Text: strings.Repeat("error line\n", 500)},
	}
	d := Digest(events)
	if len(d) != 3 {
		t.Fatalf("digest %+v", d)
	}
	if d[0].Text != "user: Fix the build. ⏎ Then stop." {
		t.Errorf("prompt entry %q", d[0].Text)
	}
	if !strings.HasPrefix(d[1].Text, "[harness text, not the user: hook]") || len(d[1].Text) > 300 {
		t.Errorf("harness entry %q", d[1].Text)
	}
	if !slices.Equal(d[2].EventIDs, []string{"c", "d"}) || !strings.Contains(d[2].Text, "FAILED") || len(d[2].Text) > 1400 {
		t.Errorf("call entry %v %q", d[2].EventIDs, d[2].Text)
	}
	var many []Entry
	for range 100 {
		many = append(many, d...)
	}
	c1, c2 := Chunks(many, 2000), Chunks(many, 2000)
	if len(c1) < 2 || len(c1) != len(c2) {
		t.Fatalf("chunks %d, %d", len(c1), len(c2))
	}
	n := 0
	for _, c := range c1 {
		n += len(c)
		if tok := TotalTokens(c); tok > 2000 && len(c) > 1 {
			t.Errorf("a chunk of %d tokens", tok)
		}
	}
	if n != len(many) {
		t.Errorf("chunks hold %d entries of %d", n, len(many))
	}
}
