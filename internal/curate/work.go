package curate

import (
	"regexp"
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Work the agent tracked itself: its todo list, its approved plan and its
// compaction summary.

// todos reads the latest todo list: open items become questions, completed
// ones progress.
func (x *extractor) todos(it *Items) {
	var latest *transcript.Event
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if e.Kind == transcript.KindPlanUpdate && e.Subtype == transcript.SubtypeTodos && len(e.Todos) > 0 {
			latest = e
		}
	}
	if latest == nil {
		return
	}
	pending := 0
	for _, td := range latest.Todos {
		text := clip(strings.Join(strings.Fields(td.Content), " "), maxStatement)
		if text == "" {
			continue
		}
		switch td.Status {
		case "completed":
			it.Progress = append(it.Progress, text)
			it.Closed = append(it.Closed, text)
		case "in_progress":
			it.Current = append(it.Current, text)
			it.OpenQuestions = append(it.OpenQuestions, Question{
				Question: text, BlockedOn: []string{}, Priority: medallion.PriorityHigh, Evidence: x.evidence(latest.ID),
			})
		default:
			p := medallion.PriorityLow
			if pending < 2 {
				p = medallion.PriorityMedium
			}
			pending++
			it.OpenQuestions = append(it.OpenQuestions, Question{
				Question: text, BlockedOn: []string{}, Priority: p, Evidence: x.evidence(latest.ID),
			})
		}
	}
}

// plans records plans the user approved: ExitPlanMode answered OK, or a
// plan Claude Code hands to a cleared context as the first prompt.
func (x *extractor) plans(it *Items) {
	approved := map[string]string{} // tool call id → result id
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if e.Kind == transcript.KindToolResult && e.ToolCallID != "" && e.OK != nil && *e.OK {
			approved[e.ToolCallID] = e.ID
		}
	}
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		var evidence Evidence
		switch {
		case e.Kind == transcript.KindUserPrompt && e.Subtype == transcript.SubtypeApprovedPlan:
			evidence = x.evidence(e.ID)
		case e.Kind == transcript.KindPlanUpdate && e.Subtype == transcript.SubtypePlan && e.ToolCallID != "":
			res, ok := approved[e.ToolCallID]
			if !ok {
				continue
			}
			evidence = x.evidence(e.ID, res)
		default:
			continue
		}
		plan := strings.TrimPrefix(strings.TrimSpace(e.Text), planPreamble)
		first := ""
		for line := range strings.Lines(plan) {
			if l := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#*-> ")); l != "" {
				first = l
				break
			}
		}
		if first == "" {
			continue
		}
		it.Decisions = append(it.Decisions, Decision{
			Statement:  clip("Approved plan: "+first, maxStatement),
			Rationale:  rationaleApprovedPlan,
			Confidence: confidencePlan,
			Evidence:   evidence,
		})
		for _, c := range planChoices(plan) {
			it.Decisions = append(it.Decisions, Decision{
				Statement: clip(c, maxStatement), Rationale: rationaleApprovedPlan,
				Confidence: confidencePlan, Evidence: evidence,
			})
		}
	}
}

// planGoal is a plan's line that names what it settles ("Goal: …",
// "Approach: …"), the line a reader of the plan keeps.
var planGoal = regexp.MustCompile(`^(?i:goal|approach|decision|solution|strategy|key decision)s?:\s*(.{20,})`)

// maxPlanChoices bounds the choices taken from one approved plan.
const maxPlanChoices = 3

// planChoices are the sentences of an approved plan that state a choice
// ("use X instead of Y", "store it in Z"), strongest first: the user
// agreed to them, so the next session must not reopen them. The plan's
// markup (bold, code ticks stay) is taken off first.
func planChoices(plan string) []string {
	type cand struct {
		text   string
		weight int
	}
	var cs []cand
	for _, s := range sentences(unbold.Replace(plan)) {
		if m := planGoal.FindStringSubmatch(s); m != nil {
			cs = append(cs, cand{m[1], 4})
		} else if w := choiceWeight(s); w > 0 {
			cs = append(cs, cand{s, w})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return b.weight - a.weight })
	var out []string
	for _, c := range cs[:min(len(cs), maxPlanChoices)] {
		out = append(out, c.text)
	}
	return out
}

// planPreamble opens the prompt of a plan approved into a cleared context.
const planPreamble = "Implement the following plan:"

// maxCompaction bounds the compaction gist in the summary.
const maxCompaction = 480

// compaction keeps the gist of the latest compaction summary: the agent's
// account of the work so far, which the summary reports as progress.
// Claude Code's summaries open with a fixed preamble and an "Analysis:"
// section before "Summary:"; only what follows "Summary:" is kept.
func (x *extractor) compaction(it *Items) {
	for i := len(x.ep.Events) - 1; i >= 0; i-- {
		e := &x.ep.Events[i].Event
		if e.Kind != transcript.KindCompactionSummary {
			continue
		}
		text := e.Text
		if j := strings.Index(text, "Summary:"); j >= 0 {
			text = text[j+len("Summary:"):]
		}
		var kept []string
		for _, s := range sentences(text) {
			l := strings.ToLower(s)
			if strings.HasPrefix(l, "this session is being continued") || strings.HasPrefix(l, "the conversation is summarized") ||
				strings.HasPrefix(l, "context compacted") {
				continue
			}
			kept = append(kept, s)
		}
		if g := strings.Join(strings.Fields(strings.Join(kept, " ")), " "); g != "" {
			it.Compaction = clip(g, maxCompaction)
		}
		return
	}
}
