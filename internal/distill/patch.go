package distill

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Patch is what the model returns: operations on the current medallion,
// never a whole medallion. Code owns ids, created_at, version and model,
// and maps evidence handles (E1, E2 …) back to event ids, so the model
// cannot renumber, forge or silently lose what it did not mention. Every
// field is required in the strict schema; an unused one is "" or [].
type Patch struct {
	Summary        string       `json:"summary"`
	Decisions      []DecisionOp `json:"decisions"`
	OpenQuestions  []QuestionOp `json:"open_questions"`
	Invariants     []ListOp     `json:"invariants"`
	AvoidRepeating []ListOp     `json:"avoid_repeating"`
	EntryPoints    []ListOp     `json:"entry_points"`
	Subsystems     []SubsysOp   `json:"subsystems"`
}

// DecisionOp adds, revises or drops a decision.
type DecisionOp struct {
	Op         string   `json:"op"` // add | revise | drop
	ID         string   `json:"id"` // the decision to revise or drop; "" for add
	Statement  string   `json:"statement"`
	Rationale  string   `json:"rationale"`
	Confidence string   `json:"confidence"` // low | medium | high
	Evidence   []string `json:"evidence"`
}

// QuestionOp adds, resolves or drops an open question.
type QuestionOp struct {
	Op        string   `json:"op"` // add | resolve | drop
	ID        string   `json:"id"`
	Question  string   `json:"question"`
	BlockedOn []string `json:"blocked_on"`
	Priority  string   `json:"priority"`
	Evidence  []string `json:"evidence"`
}

// ListOp adds or drops one item of a text list; Ref names the item to drop
// by its handle (I-1, A-2, P-3).
type ListOp struct {
	Op       string   `json:"op"` // add | drop
	Ref      string   `json:"ref"`
	Text     string   `json:"text"`
	Evidence []string `json:"evidence"`
}

// SubsysOp sets the state of one subsystem, by name.
type SubsysOp struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Notes  string `json:"notes"`
}

// confidences maps the schema's enum to the medallion's number: strict
// schemas take enums better than numeric ranges, and three levels are all
// a model can tell apart.
var confidences = map[string]float64{"low": 0.5, "medium": 0.7, "high": 0.9}

// Bounds on what one patch may write, so a runaway reply cannot flood the
// medallion: an item is a sentence or two, not a document. A patch that
// cleans up a long Tier 0 medallion drops many items, so the operation
// bound is generous; the list caps bound the result.
const (
	maxOps       = 100
	maxItemBytes = 600
)

// Schema returns the strict JSON schema of Patch: every property required,
// additionalProperties false everywhere, enums for every choice. The enum
// values come from the medallion package where it has them.
func Schema() json.RawMessage {
	str := map[string]any{"type": "string"}
	strs := map[string]any{"type": "array", "items": str}
	enum := func(v ...string) map[string]any { return map[string]any{"type": "string", "enum": v} }
	obj := func(props map[string]any) map[string]any {
		req := make([]string, 0, len(props))
		for k := range props {
			req = append(req, k)
		}
		slices.Sort(req)
		return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
	}
	arr := func(item map[string]any) map[string]any { return map[string]any{"type": "array", "items": item} }
	list := arr(obj(map[string]any{"op": enum("add", "drop"), "ref": str, "text": str, "evidence": strs}))
	var subsys []string
	for _, s := range medallion.SubsystemStatuses {
		subsys = append(subsys, string(s))
	}
	var prios []string
	for _, p := range medallion.Priorities {
		prios = append(prios, string(p))
	}
	s := obj(map[string]any{
		"summary": str,
		"decisions": arr(obj(map[string]any{
			"op": enum("add", "revise", "drop"), "id": str, "statement": str, "rationale": str,
			"confidence": enum("low", "medium", "high"), "evidence": strs,
		})),
		"open_questions": arr(obj(map[string]any{
			"op": enum("add", "resolve", "drop"), "id": str, "question": str, "blocked_on": strs,
			"priority": enum(prios...), "evidence": strs,
		})),
		"invariants":      list,
		"avoid_repeating": list,
		"entry_points":    list,
		"subsystems":      arr(obj(map[string]any{"name": str, "status": enum(subsys...), "notes": str})),
	})
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a literal of maps and strings always marshals
	}
	return b
}

// parse decodes a reply into a Patch and checks its shape: the strict
// schema, which a json_object server does not enforce. The problems are
// quoted back to the model in the repair turn.
func parse(reply string) (*Patch, []string) {
	reply = strings.TrimSpace(reply)
	// Some servers wrap JSON in a code fence even in JSON mode.
	if strings.HasPrefix(reply, "```") {
		reply = strings.TrimPrefix(strings.TrimPrefix(reply, "```json"), "```")
		reply = strings.TrimSuffix(strings.TrimSpace(reply), "```")
	}
	dec := json.NewDecoder(strings.NewReader(reply))
	dec.DisallowUnknownFields()
	var p Patch
	if err := dec.Decode(&p); err != nil {
		return nil, []string{"the reply is not a JSON object of the schema: " + err.Error()}
	}
	if dec.More() {
		return nil, []string{"the reply holds more than one JSON value"}
	}
	var problems []string
	bad := func(f string, args ...any) { problems = append(problems, fmt.Sprintf(f, args...)) }
	n := len(p.Decisions) + len(p.OpenQuestions) + len(p.Invariants) + len(p.AvoidRepeating) + len(p.EntryPoints) + len(p.Subsystems)
	if n > maxOps {
		bad("%d operations; at most %d", n, maxOps)
	}
	for i, d := range p.Decisions {
		if !slices.Contains([]string{"add", "revise", "drop"}, d.Op) {
			bad("decisions[%d].op %q: want add, revise or drop", i, d.Op)
		}
		if d.Op != "drop" {
			if _, ok := confidences[d.Confidence]; !ok {
				bad("decisions[%d].confidence %q: want low, medium or high", i, d.Confidence)
			}
			if strings.TrimSpace(d.Statement) == "" {
				bad("decisions[%d].statement is empty", i)
			}
		}
	}
	for i, q := range p.OpenQuestions {
		if !slices.Contains([]string{"add", "resolve", "drop"}, q.Op) {
			bad("open_questions[%d].op %q: want add, resolve or drop", i, q.Op)
		}
		if q.Op == "add" {
			if strings.TrimSpace(q.Question) == "" {
				bad("open_questions[%d].question is empty", i)
			}
			if !slices.Contains(medallion.Priorities, medallion.Priority(q.Priority)) {
				bad("open_questions[%d].priority %q: want low, medium or high", i, q.Priority)
			}
		}
	}
	for name, l := range map[string][]ListOp{"invariants": p.Invariants, "avoid_repeating": p.AvoidRepeating, "entry_points": p.EntryPoints} {
		for i, o := range l {
			switch {
			case o.Op != "add" && o.Op != "drop":
				bad("%s[%d].op %q: want add or drop", name, i, o.Op)
			case o.Op == "add" && strings.TrimSpace(o.Text) == "":
				bad("%s[%d].text is empty", name, i)
			}
		}
	}
	for i, s := range p.Subsystems {
		if strings.TrimSpace(s.Name) == "" {
			bad("subsystems[%d].name is empty", i)
		}
		if !slices.Contains(medallion.SubsystemStatuses, medallion.SubsystemStatus(s.Status)) {
			bad("subsystems[%d].status %q", i, s.Status)
		}
	}
	slices.Sort(problems) // map order must not change the repair prompt
	if len(problems) > 0 {
		return nil, problems
	}
	return &p, nil
}

// handleNum parses "E12" (or "[E12]") into 12.
func handleNum(h, prefix string) (int, bool) {
	h = strings.Trim(strings.TrimSpace(h), "[]")
	num, ok := strings.CutPrefix(h, prefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil && n > 0
}
