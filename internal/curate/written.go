package curate

import (
	"strings"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Bounds on the open items a written plan yields.
const (
	maxPlanSections = 4 // sections, one open item each
	minPlanSteps    = 3 // unchecked steps that make a message a plan
)

// writtenPlan reports the steps of a plan the agent wrote out in a message
// (unchecked "- [ ]" steps, or a status "Not Started") when no file was
// edited after it: the plan is still to be carried out. Each section of
// the plan ("## Phase 1: …") with its step headings is one open item, so
// the next session knows where to start.
func (x *extractor) writtenPlan(it *Items) {
	at := -1
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		switch {
		case e.Kind == transcript.KindAssistantMessage && strings.Count(e.Text, "- [ ]")+strings.Count(strings.ToLower(e.Text), "not started") >= minPlanSteps:
			at = i
		case e.Kind == transcript.KindToolCall && episode.EditsFiles(e.Tool):
			at = -1 // work began after the plan, or there was none yet
		}
	}
	if at < 0 {
		return
	}
	e := &x.ep.Events[at].Event
	type section struct {
		title string
		steps []string
		open  bool
	}
	var secs []*section
	for line := range strings.Lines(e.Text) {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, "## ") && !strings.HasPrefix(l, "### "):
			secs = append(secs, &section{title: strings.TrimSpace(strings.Trim(l[3:], "*# "))})
		case len(secs) == 0:
		case strings.HasPrefix(l, "### "):
			s := secs[len(secs)-1]
			s.steps = append(s.steps, strings.TrimSpace(strings.Trim(l[4:], "*# ")))
		case strings.HasPrefix(l, "- [ ]"):
			secs[len(secs)-1].open = true
		}
	}
	n := 0
	for _, s := range secs {
		if !s.open || len(s.steps) == 0 || n == maxPlanSections {
			continue
		}
		n++
		it.OpenQuestions = append(it.OpenQuestions, Question{
			Question:  clip("Not started: "+s.title+" — "+strings.Join(s.steps, "; "), maxStatement),
			BlockedOn: []string{},
			Priority:  medallion.PriorityMedium,
			Evidence:  x.evidence(e.ID),
		})
	}
}
