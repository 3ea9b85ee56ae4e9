package curate

import (
	"strings"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Steering: what the user typed is the most valuable thing a save file
// carries (the labels' first category). A genuine user prompt — not a
// harness message, a sub-agent's prompt or a compaction summary — is kept
// in the user's own words when it carries substance: rules and
// corrections ("don't", "never", "must", "no, …", "it's not …") become
// invariants, other requests that restrict the work (task statements,
// scope, method, where to put things) become decisions. Short replies
// ("yes", "go on") and plain questions are chatter.

// maxDirective bounds one item taken from a prompt; a longer prompt is
// split at sentence ends into several items, at most maxDirectives.
const (
	maxDirective  = 280
	maxDirectives = 3
	// minContentWords is how many subject words a sentence needs to be
	// more than a reply.
	minContentWords = 2
	// minRequestWords is how many subject words a request (a sentence
	// with no rule cue) needs to become a decision.
	minRequestWords = 3
)

const confidenceRequest = 0.6

// genuine reports whether e is something the user typed.
func genuine(e *transcript.Event) bool {
	return e.Kind == transcript.KindUserPrompt && !e.Boilerplate && e.Subtype != transcript.SubtypeSubagentPrompt
}

// ruleCues mark a sentence as a rule or correction rather than a request.
var ruleCues = []string{
	"don't", "dont", "do not", "never", "must", "not allowed", "not acceptable", "not accepable", "important",
	"make sure", "no need", "stop ", "avoid", "instead", "it's not", "its not", "is not", "there is no",
	"there are no", "not valid", "shouldn't", "should not", "only ", "keep ", "until", "before ", "max ",
	"at most", "without", "always", "no,", "wrong", "bad idea", "not ",
}

// The rationales of decisions taken from the user's words. They are short
// on purpose: the session is already in the medallion's evidence, and every
// token of a stock phrase is a token a load cannot spend on a decision.
const (
	rationaleUserRequest    = "user request"
	rationaleUserPreference = "user preference"
	rationaleApprovedPlan   = "user-approved plan"
	rationaleAgentChoice    = "agent's choice"
)

// directives turns the user's prompts into invariants (rules and
// corrections) and decisions (preferences and requests).
func (x *extractor) directives(it *Items) {
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if !genuine(e) {
			continue
		}
		for _, c := range x.chunks(stripImages(e.Text)) {
			switch c.cue {
			case strong:
				it.Invariants = append(it.Invariants, Text{Text: c.text, Confidence: confidenceStrong, Evidence: x.evidence(e.ID)})
			case preference:
				it.Decisions = append(it.Decisions, Decision{
					Statement: c.text, Rationale: rationaleUserPreference,
					Confidence: confidencePreference, Evidence: x.evidence(e.ID),
				})
			default:
				it.Decisions = append(it.Decisions, Decision{
					Statement: c.text, Rationale: rationaleUserRequest,
					Confidence: confidenceRequest, Evidence: x.evidence(e.ID),
				})
			}
		}
	}
}

// classify says whether a sentence is a rule or correction (strong), a
// preference, or a request (none).
func classify(text string) cue {
	if c := strength(text); c != none {
		return c
	}
	l := " " + strings.ReplaceAll(strings.ToLower(text), "\u2019", "'") + " "
	for _, c := range ruleCues {
		if strings.Contains(l, " "+c) {
			return strong
		}
	}
	return none
}

// questionOpeners open a question, with or without its question mark
// ("does it make sense to have it combined").
var questionOpeners = []string{"does ", "do ", "is ", "are ", "can ", "could ", "should ", "would ", "will ",
	"what ", "why ", "how ", "where ", "when ", "which ", "who ", "shall "}

// question reports a sentence that asks rather than tells.
func question(s string) bool {
	if strings.HasSuffix(s, "?") {
		return true
	}
	l := strings.ToLower(strings.TrimLeft(s, "*_-> "))
	for _, q := range questionOpeners {
		if strings.HasPrefix(l, q) {
			return true
		}
	}
	return false
}

// chatterOpeners open sentences about the user's state of mind, whatever
// cue words follow ("I don't know why …").
var chatterOpeners = []string{"i don't know", "i dont know", "i'm not sure", "im not sure", "not sure", "i wonder",
	"you can ask", "feel free"}

// acks are acknowledgements: a sentence of little more is a reply.
var acks = map[string]bool{"looks": true, "good": true, "great": true, "thanks": true, "thank": true, "perfect": true,
	"nice": true, "cool": true, "lgtm": true, "okay": true, "ok": true, "yes": true, "yeah": true, "sure": true,
	"fine": true, "awesome": true, "go": true, "ahead": true, "continue": true, "proceed": true}

// chatter reports a sentence about the user's state of mind or a bare
// acknowledgement.
func chatter(s string) bool {
	l := strings.ReplaceAll(strings.ToLower(s), "\u2019", "'")
	for _, c := range chatterOpeners {
		if strings.HasPrefix(l, c) {
			return true
		}
	}
	n := 0
	for w := range content(s) {
		if !acks[w] {
			n++
		}
	}
	return n < minContentWords
}

type chunk struct {
	text string
	cue  cue
}

// chunks splits a prompt into items of whole sentences of the same kind,
// dropping the sentences that are chatter (too few subject words, or a
// bare question).
func (x *extractor) chunks(text string) []chunk {
	var out []chunk
	var cur strings.Builder
	kind := none
	flush := func() {
		if cur.Len() > 0 && len(out) < maxDirectives {
			out = append(out, chunk{text: clip(cur.String(), maxDirective), cue: kind})
		}
		cur.Reset()
	}
	for _, s := range sentences(text) {
		s = strings.Join(strings.Fields(s), " ")
		k := classify(s)
		words := len(content(s))
		if chatter(s) || words < minContentWords {
			continue
		}
		if k == none && (question(s) || words < minRequestWords) {
			// A question asks, it does not decide; a request of two
			// words ("check again", "show tools") says too little to
			// guide a later session.
			continue
		}
		if cur.Len() > 0 && (k != kind || cur.Len()+1+len(s) > maxDirective) {
			flush()
		}
		kind = k
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(s)
	}
	flush()
	return out
}

// offerCues open a sentence that asks the user or offers the next step.
var offerCues = []string{"if you", "want me", "should i", "shall i", "let me know", "would you", "do you want",
	"ready to", "paste ", "send me", "tell me"}

// lastQuestion reports the question or offer the agent ended the episode
// on when the user has not answered it (no prompt came after it), as an
// open question; and whether the user spoke in the episode, which answers
// the questions earlier checkpoints left open.
func (x *extractor) lastQuestion(it *Items) {
	for i := len(x.ep.Events) - 1; i >= 0; i-- {
		e := &x.ep.Events[i].Event
		if genuine(e) {
			it.UserSpoke = true
			return
		}
		if e.Kind != transcript.KindAssistantMessage {
			continue
		}
		// Only the final message: the agent's last words decide.
		paras := strings.Split(strings.TrimSpace(e.Text), "\n\n")
		last := strings.Join(strings.Fields(paras[len(paras)-1]), " ")
		l := strings.ToLower(strings.TrimLeft(last, "*_-> "))
		asks := strings.HasSuffix(strings.TrimRight(last, "*_ "), "?")
		for _, c := range offerCues {
			asks = asks || strings.HasPrefix(l, c)
		}
		if asks && len(content(last)) >= minContentWords {
			it.OpenQuestions = append(it.OpenQuestions, Question{
				Question: askedPrefix + clip(last, maxStatement), BlockedOn: []string{"the user's answer"},
				// The agent's last words waiting on the user come first in
				// the load: the next session has to pick them up.
				Priority: medallion.PriorityHigh, Evidence: x.evidence(e.ID),
			})
		}
		for j := i - 1; j >= 0; j-- {
			if genuine(&x.ep.Events[j].Event) {
				it.UserSpoke = true
				break
			}
		}
		return
	}
}

// askedPrefix marks the open questions that wait on the user's answer.
const askedPrefix = "Asked the user: "

// stripImages removes the placeholders agents put for pasted images
// ("[Image #1]", "[image: image/png, 3 KB]"): they carry no words.
func stripImages(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '[')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			break
		}
		inner := strings.ToLower(s[i+1 : i+j])
		b.WriteString(s[:i])
		if !strings.HasPrefix(inner, "image #") && !strings.HasPrefix(inner, "image: ") && !strings.HasPrefix(inner, "pasted text") {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}
