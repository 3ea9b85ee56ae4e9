package curate

import (
	"regexp"
	"strings"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Bounds on the open items a written plan yields.
const (
	maxPlanSections = 6   // sections named in the open item
	maxPlanItem     = 800 // bytes of the open item: the sections and their steps
	minPlanSteps    = 3   // unchecked steps that make a message a plan
)

// notStarted finds a step's status "not started" in any case.
var notStarted = newWordFinder(true, "not started")

// isPlan reports whether a message holds minPlanSteps unchecked steps
// ("- [ ]", or "not started" in strings.ToLower(text)). The status is
// counted with the fold, without a lowered copy of each message:
// strings.ToLower maps no letter beyond ASCII onto those of "not
// started", nor any ASCII byte out of ASCII, so the fold finds the same.
func isPlan(text string) bool {
	n := strings.Count(text, "- [ ]")
	for n < minPlanSteps {
		i := notStarted.index(text)
		if i < 0 {
			break
		}
		n++
		text = text[i+len("not started"):]
	}
	return n >= minPlanSteps
}

// writtenPlan reports the steps of a plan the agent wrote out in a message
// (unchecked "- [ ]" steps, or a status "Not Started") when no file was
// edited after it: the plan is still to be carried out. Each section of
// the plan ("## Phase 1: …") with its step headings goes into one open
// item — the plan is one thing left to do, not one per phase — so the next
// session knows where to start.
func (x *extractor) writtenPlan(it *Items) {
	at := -1
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		switch {
		case e.Kind == transcript.KindAssistantMessage && isPlan(e.Text):
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
			s.steps = append(s.steps, stepTitle(l[4:]))
		case strings.HasPrefix(l, "- [ ]"):
			secs[len(secs)-1].open = true
		}
	}
	var parts []string
	for _, s := range secs {
		if !s.open || len(s.steps) == 0 || len(parts) == maxPlanSections {
			continue
		}
		parts = append(parts, s.title+" — "+strings.Join(s.steps, "; "))
	}
	if len(parts) == 0 {
		return
	}
	it.OpenQuestions = append(it.OpenQuestions, Question{
		Question:  clip("Not started: "+strings.Join(parts, ". "), maxPlanItem),
		BlockedOn: []string{},
		Priority:  medallion.PriorityMedium,
		Evidence:  x.evidence(e.ID),
	})
}

// stepWord is the word "Step" before a step's number ("Step 1.2: …").
var stepWord = regexp.MustCompile(`^(?i:step)\s+([0-9])`)

// stepTitle is a step heading without its markup and the word "Step": its
// number stays ("1.2: Parse history"), since the plan and the user refer
// to steps by number ("start with Step 1.1").
func stepTitle(h string) string {
	t := strings.TrimSpace(strings.Trim(h, "*# "))
	return stepWord.ReplaceAllString(t, "$1")
}
