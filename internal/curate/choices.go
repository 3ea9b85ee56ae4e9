package curate

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/transcript"
)

// Agent choices: most decisions a next session must respect are made by
// the agent and stated in its messages ("I'll use X instead of Y", "store
// it in Z because …"), not only in its final report. A sentence of an
// assistant message (not its reasoning) with a strong choice cue becomes a
// decision of lower confidence than the user's word; questions, hedges and
// progress narration are left out.

const (
	// confidenceChoice is below every user-stated item, so the medallion's
	// decision cap drops an agent choice first.
	confidenceChoice = 0.5
	// maxChoices bounds the agent choices taken from one episode.
	maxChoices = 2
	// minChoiceWords is the fewest words a choice sentence needs to carry
	// its subject.
	minChoiceWords = 6
)

// choiceCue is a phrase that marks a stated choice, with its weight.
type choiceCue struct {
	phrase string
	weight int
}

// agentChoiceCues are weighed: an explicit decision outranks a plain
// intention.
var agentChoiceCues = []choiceCue{
	{"decided to", 3}, {"i chose", 3}, {"we chose", 3}, {"going with", 3}, {"the approach is", 3},
	{"instead of", 2}, {"rather than", 2}, {"switched to", 2}, {"switch to", 2}, {"plan is to", 2},
	{"i'll use", 2}, {"we'll use", 2}, {"will store", 2}, {"will track", 2}, {"opted", 2},
}

// hedges mark a sentence that weighs an option rather than takes it, or
// narrates the next step.
var hedges = []string{
	"maybe", "might", "could", "perhaps", "let me", "i'm going to", "now i'll", "i'll run", "i'll check",
	"i'll read", "i'll look", "in the next", "confirm", "track all", "should i", "do you", "would you", "if you",
	// Narration of the look around, and of what a run showed: "I'm
	// checking how X is derived …", "the test now fails with 0 instead of
	// 2", "this means X would call Y instead of Z".
	"i'm checking", "i'm reading", "i'm looking", "i'm searching", "i'm verifying", "i'm doing", "i'm inspecting",
	"i'm tracing", "i'm confirming", "checking how", "fails with", "failing", "this means", "that means",
}

// narration opens a sentence on what the agent is doing or does next ("I'm
// adding the test at the module level rather than …", "Now use the email
// instead of …"), or on a guess ("This is very likely …"): the choice, if
// any, shows in the edits and the final report.
var narration = regexp.MustCompile(`^(?:(?:i'm|i am|we're|we are|now i'm) \w+ing\b|now |next,? |this is (?:very )?likely\b|likely\b)`)

// choiceWeight scores one sentence of an assistant message: zero when it
// is no choice.
func choiceWeight(s string) int {
	if strings.HasSuffix(s, "?") || strings.ContainsAny(s, "|*") || fewerWords(s, minChoiceWords) {
		return 0
	}
	// The cues first: most sentences have none, and then the hedges and
	// the narration pattern have nothing to cancel.
	w := cueWeight(s)
	if w == 0 {
		return 0
	}
	l := strings.ReplaceAll(strings.ToLower(s), "\u2019", "'")
	for _, h := range hedges {
		if strings.Contains(l, h) {
			return 0
		}
	}
	if narration.MatchString(l) {
		return 0
	}
	return w
}

// cueWeight is the weight of the strongest of agentChoiceCues that s holds
// lowered, its curly apostrophes straight. The cues are found by weight,
// each set in one pass over s that folds the case of its ASCII letters,
// rather than in a lowered copy of s once per cue: choiceWeight weighs
// every sentence of every assistant message, and most hold none. Only a
// sentence with a letter beyond ASCII that lowers to an ASCII one
// (lowersToASCII) is lowered first.
func cueWeight(s string) int {
	if lowersToASCII(s) {
		s = strings.ToLower(s)
	}
	for _, c := range cueFinders {
		if c.words.in(s) {
			return c.weight
		}
	}
	return 0
}

// cueFinders find agentChoiceCues, one finder per weight, the heaviest
// first; each cue with an apostrophe is also found with a curly one.
var cueFinders = func() []weighedCues {
	byWeight := map[int][]string{}
	for _, c := range agentChoiceCues {
		byWeight[c.weight] = append(byWeight[c.weight], apostrophes(c.phrase)...)
	}
	var out []weighedCues
	for _, w := range slices.Backward(slices.Sorted(maps.Keys(byWeight))) {
		out = append(out, weighedCues{w, newWordFinder(true, byWeight[w]...)})
	}
	return out
}()

// weighedCues are the cues of one weight.
type weighedCues struct {
	weight int
	words  *wordFinder
}

// apostrophes returns phrase in every spelling of its apostrophes,
// straight and curly.
func apostrophes(phrase string) []string {
	before, after, ok := strings.Cut(phrase, "'")
	if !ok {
		return []string{phrase}
	}
	var out []string
	for _, rest := range apostrophes(after) {
		out = append(out, before+"'"+rest, before+"\u2019"+rest)
	}
	return out
}

// fewerWords reports whether s has fewer than n words (as strings.Fields
// counts them), without splitting it.
func fewerWords(s string, n int) bool {
	for range strings.FieldsSeq(s) {
		if n--; n == 0 {
			return false
		}
	}
	return true
}

// rationaleOf returns the "because/so that/since" clause of a sentence.
func rationaleOf(s string) string {
	l := strings.ToLower(s)
	for _, c := range []string{" because ", " so that ", " since "} {
		if i := strings.Index(l, c); i >= 0 {
			r := strings.TrimSpace(s[i+1:])
			return strings.ToUpper(r[:1]) + r[1:]
		}
	}
	return ""
}

// choices turns the strongest choice sentences of the agent's messages
// into decisions, the latest first among equals.
func (x *extractor) choices(it *Items) {
	type cand struct {
		text, id string
		weight   int
		at       int
	}
	var cs []cand
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if e.Kind != transcript.KindAssistantMessage {
			continue
		}
		for _, s := range sentences(e.Text) {
			if w := choiceWeight(s); w > 0 {
				cs = append(cs, cand{text: s, id: e.ID, weight: w, at: i})
			}
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.weight != b.weight {
			return b.weight - a.weight
		}
		return b.at - a.at
	})
	for _, c := range cs[:min(len(cs), maxChoices)] {
		r := rationaleOf(c.text)
		if r == "" {
			r = rationaleAgentChoice
		}
		it.Decisions = append(it.Decisions, Decision{
			Statement: clip(c.text, maxStatement), Rationale: clip(r, maxStatement),
			Confidence: confidenceChoice, Evidence: x.evidence(c.id),
		})
	}
}
