package curate

import (
	"iter"
	"regexp"
	"slices"
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
// scope, method, where to put things) become decisions. What decides
// nothing is left out: questions, approvals ("ok, let's implement this"),
// status remarks ("I put everything into one commit"), the steps of the
// user's own instruction list and pasted material (see act).

// maxDirective bounds one item taken from a prompt; a longer prompt is
// split at sentence ends into several items, at most maxDirectives
// requests and preferences and maxRules rules: a prompt that spells out
// how the work must be done ("never X. keep Y. only Z.") restricts it in
// each sentence, and a rule cut for count is a rule the next session
// breaks, while a long request is mostly the task at hand.
const (
	maxDirective  = 280
	maxDirectives = 3
	maxRules      = 8
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

// The rationales of decisions taken from the user's words. They are short
// on purpose: the session is already in the medallion's evidence, and every
// token of a stock phrase is a token a load cannot spend on a decision.
const (
	rationaleUserRequest    = medallion.RationaleUserRequest
	rationaleUserPreference = medallion.RationaleUserPreference
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
		for _, c := range chunks(stripImages(e.Text)) {
			switch c.act {
			case actRule:
				it.Invariants = append(it.Invariants, Text{Text: c.text, Confidence: confidenceStrong, Evidence: x.evidence(e.ID)})
			case actPreference:
				it.Decisions = append(it.Decisions, Decision{
					Statement: c.text, Rationale: rationaleUserPreference,
					Confidence: confidencePreference, Evidence: x.evidence(e.ID),
				})
			case actRequest:
				it.Decisions = append(it.Decisions, Decision{
					Statement: c.text, Rationale: rationaleUserRequest,
					Confidence: confidenceRequest, Evidence: x.evidence(e.ID),
				})
			}
		}
	}
}

// act is what one sentence of a user prompt does. Three acts are kept: a
// rule restricts how the work is done (an invariant); a preference and a
// request state what was chosen (decisions). The others decide nothing a
// later session must respect: a question asks; a report is a status
// remark (what the user did, sees or thinks) or a hedged idea; an
// approval agrees to what the agent proposed, whose content is in the
// agent's words, not the user's; a step is one action of the user's own
// instruction list, done in this session; chatter is an acknowledgement
// or the user's state of mind.
type act int

const (
	actDrop   act = iota // a question, an approval, a step, chatter
	actReport            // kept only as the lead-in of the kept sentence right after it
	actRequest
	actPreference
	actRule
)

// sentence is one sentence of a user prompt; step marks a sentence of a
// numbered step ("2. …", "step 2: …").
type sentence struct {
	text string
	step bool
}

// classify says what a sentence does. The order matters: a question or an
// approval is never a rule whatever words it holds ("does the back end not
// have it?"); a step is a rule only by an explicit rule word ("never",
// "always", "must"); a statement with a rule cue is a rule ("we don't
// control that process"); without one, a statement that reports decides
// nothing.
func classify(s sentence) act {
	// Its opening and subject words, split once: each test reads them.
	ws, cs := opening(s.text), content(s.text)
	if question(s.text, ws) || chatter(s.text, cs) || approval(ws, cs) {
		return actDrop
	}
	switch c := strength(s.text); {
	case c == strong:
		return actRule
	case c == preference:
		return actPreference
	case s.step:
		return actDrop
	}
	if hasAny(ws, ruleCues) {
		return actRule
	}
	if reports(ws) {
		return actReport
	}
	if len(cs) < minRequestWords {
		// A request of two words ("check again", "show tools") says too
		// little to guide a later session.
		return actDrop
	}
	return actRequest
}

// phrase is a cue of one or more words (as words splits them), matched at
// word boundaries.
type phrase []string

func cues(phrases ...string) []phrase {
	out := make([]phrase, len(phrases))
	for i, p := range phrases {
		out[i] = strings.Fields(p)
	}
	return out
}

// ruleCues mark a rule or a correction rather than a request: a
// prohibition, an obligation, a necessity, a verdict, a denial of what the
// agent took for true, a restriction of what the work may do.
var ruleCues = cues("don't", "dont", "do not", "never", "must", "mustn't", "shouldn't", "should not",
	"not allowed", "not acceptable", "not accepable", "make sure", "no need", "avoid", "important", "crucial",
	"critical", "essential", "mandatory", "bad idea", "better not", "not valid", "it's not", "its not", "is not",
	"there is no", "there are no", "only", "until", "before", "max", "at most", "without", "instead", "keep",
	"always", "stop", "not")

// hasAny reports whether ws holds one of the cues. A negation the user
// says of themselves ("I don't need …", "I do not see …") is a report of
// their state, unless it states a wish ("I don't want …").
func hasAny(ws []string, cs []phrase) bool {
	for i := range ws {
		for _, c := range cs {
			if i+len(c) > len(ws) || !slices.Equal(ws[i:i+len(c)], c) {
				continue
			}
			if i > 0 && ws[i-1] == "i" && (c[0] == "don't" || c[0] == "dont" || c[0] == "do" || c[0] == "not") &&
				!(i+len(c) < len(ws) && wishes[ws[i+len(c)]]) {
				continue
			}
			return true
		}
	}
	return false
}

// wishes after "I don't" make a rule of the user's own negation.
var wishes = map[string]bool{"want": true, "like": true, "think": true}

// leadWords open a sentence without saying anything: interjections,
// acknowledgements and connectives ("ok so", "hmm, still …", "and also").
var leadWords = map[string]bool{
	"ok": true, "okay": true, "so": true, "well": true, "yeah": true, "yes": true, "yep": true, "sure": true,
	"great": true, "good": true, "nice": true, "cool": true, "perfect": true, "thanks": true, "alright": true,
	"right": true, "and": true, "also": true, "but": true, "then": true, "now": true, "just": true, "please": true,
	"pls": true, "plz": true, "still": true, "already": true, "actually": true, "really": true, "anyway": true,
	"however": true, "btw": true, "hey": true, "wait": true, "lol": true,
}

// stretched matches drawn-out interjections: "hmmm", "uuum", "ahh", "ohh".
var stretched = regexp.MustCompile(`^(?:h+m+|u+m+|a+h+|o+h+|u+h+|e+r+m*)$`)

// opening is a sentence's words (words in contradict.go) without the lead
// words that open it, and without a polite "can you"/"could we" before a
// request without a question mark (the mark makes it a question).
func opening(s string) []string {
	ws := clauseWords(s)
	for {
		switch {
		case len(ws) > 0 && (ws[0] == "," || leadWords[ws[0]] || stretched.MatchString(ws[0])):
			ws = ws[1:]
		case len(ws) > 2 && politeModals[ws[0]] && (ws[1] == "you" || ws[1] == "we"):
			ws = ws[2:]
		case len(ws) > 2 && (ws[0] == "looks" || ws[0] == "seems") && ws[1] == "like":
			ws = ws[2:] // "looks like I …" tells what the user found
		case asks(ws) && slices.Contains(ws, ","):
			ws = ws[slices.Index(ws, ",")+1:]
		default:
			return ws
		}
	}
}

// clauseWords is a sentence's words (words in contradict.go), with a ","
// where a clause ends.
func clauseWords(s string) []string {
	var ws []string
	for i, part := range clauses(s) {
		if i > 0 {
			ws = append(ws, ",")
		}
		for _, w := range words(part) {
			if w = clean(w); w != "" {
				ws = append(ws, w)
			}
		}
	}
	return ws
}

// clauses yields the clauses of a sentence, numbered: the text between
// the ends of its clauses, a comma or colon before a space, a run of
// dashes between spaces (the regexp `,\s|:\s|\s[-–—]+\s` splitting it,
// found byte by byte).
func clauses(s string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		n, beg := 0, 0
		for i := 0; i < len(s); i++ {
			end := clauseEnd(s, i)
			if end < 0 {
				continue
			}
			if !yield(n, s[beg:i]) {
				return
			}
			n, beg, i = n+1, end, end-1
		}
		yield(n, s[beg:])
	}
}

// clauseEnd returns the end of the clause separator at s[i], or -1.
func clauseEnd(s string, i int) int {
	switch c := s[i]; {
	case c == ',' || c == ':':
		if i+1 < len(s) && reSpace(s[i+1]) {
			return i + 2
		}
	case reSpace(c):
		j := i + 1
		for j < len(s) {
			if s[j] == '-' {
				j++
				continue
			}
			if !strings.HasPrefix(s[j:], "–") && !strings.HasPrefix(s[j:], "—") {
				break
			}
			j += len("–")
		}
		if j > i+1 && j < len(s) && reSpace(s[j]) {
			return j + 1
		}
	}
	return -1
}

// reSpace reports whether c is a space as a regexp's \s means it.
func reSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

var politeModals = map[string]bool{"can": true, "could": true, "would": true, "will": true}

// whWords open a question. "when" and "where" also open a clause ("when I
// refresh, …"), so they are not among them.
var whWords = map[string]bool{"what": true, "why": true, "how": true, "which": true, "who": true, "whom": true,
	"whose": true, "any": true, "anything": true}

// inverted are the auxiliaries that open a question before their subject
// ("does it …", "is there …", "did we not …").
var inverted = map[string]bool{"is": true, "are": true, "was": true, "were": true, "does": true, "did": true,
	"shall": true, "should": true, "isn't": true, "aren't": true, "doesn't": true, "didn't": true, "wasn't": true,
	"shouldn't": true, "has": true, "hasn't": true, "haven't": true}

// pronouns are subjects; "do"/"have" before one ask ("do you …"), before a
// verb or noun they direct ("do it", "have a look").
var pronouns = map[string]bool{"i": true, "we": true, "you": true, "they": true, "it": true, "he": true,
	"she": true, "this": true, "that": true, "these": true, "those": true, "there": true}

// question reports a sentence that asks rather than tells: it ends with a
// question mark, or opens with a question word or an inverted auxiliary
// ("does it make sense to have it combined") and says nothing else. An
// unmarked question followed by another clause is judged by that clause
// ("did we not go through this, you don't have access to docker here").
// ws are the sentence's opening words (opening).
func question(s string, ws []string) bool {
	if strings.HasSuffix(strings.TrimRight(s, " *_)\"'`"), "?") {
		return true
	}
	return asks(ws) && !slices.Contains(ws, ",")
}

// asks reports words that open a question.
func asks(ws []string) bool {
	if len(ws) == 0 {
		return false
	}
	if whWords[ws[0]] || inverted[ws[0]] {
		return true
	}
	return (ws[0] == "do" || ws[0] == "have" || politeModals[ws[0]]) && len(ws) > 1 && pronouns[ws[1]]
}

// firstPerson subjects make a statement about the user: what they did,
// see or think ("I put everything into one commit", "I've reviewed it").
var firstPerson = map[string]bool{"i": true, "i'm": true, "im": true, "i've": true, "ive": true}

// clauseOpeners open a clause before the main one ("when I refresh the
// app, the uuid is displayed"; "if it is missing - add it"): the main
// clause says what the sentence does.
var clauseOpeners = map[string]bool{
	"if": true, "when": true, "whenever": true, "once": true, "after": true, "since": true, "because": true,
	"given": true, "as": true, "while": true, "with": true, "for": true, "in": true, "on": true, "at": true,
	"from": true, "though": true, "although": true, "where": true,
}

// directiveCues make a statement direct the work: "let's", "we should",
// "there is a need to", "I want", "I need you to", "we'll".
var directiveCues = cues("let's", "lets", "let us", "should", "must", "need to", "needs to", "need you",
	"have to", "has to", "want", "would like", "i'd like", "we'd like", "prefer", "make sure", "ensure", "better",
	"please", "we'll", "we will", "you'll", "you will")

// hedgeCues weigh an option rather than take it: a hedged sentence directs
// nothing ("we might want to improve this in future").
var hedgeCues = cues("maybe", "might", "perhaps", "possibly", "probably", "i guess", "i wonder", "not sure")

// reports says whether a sentence is a status remark rather than a
// directive: the user tells what they did, see or think ("I put everything
// into one commit", "I can't get past the login screen", "still getting
// 500 errors"), with no
// directive cue ("I want", "I think we should"); or it hedges ("we might
// want to improve this in future"). A leading clause is skipped for the
// main one ("when I refresh the app, I still see the id").
func reports(ws []string) bool {
	if len(ws) == 0 {
		return false
	}
	if hasAny(ws, hedgeCues) {
		return true
	}
	if hasAny(ws, directiveCues) {
		return false
	}
	if clauseOpeners[ws[0]] {
		if i := slices.Index(ws, ","); i > 0 {
			return reports(ws[i+1:])
		}
		return false
	}
	return firstPerson[ws[0]] || experiences[ws[0]]
}

// experiences open a report whose subject, the user, is left out: "still
// seeing the id in the top bar", "getting 500 errors on upload".
var experiences = map[string]bool{"seeing": true, "getting": true, "noticing": true, "experiencing": true,
	"hitting": true, "facing": true}

// chatterOpeners open sentences about the user's state of mind, whatever
// cue words follow ("I don't know why …").
var chatterOpeners = []string{"i don't know", "i dont know", "i'm not sure", "im not sure", "not sure", "i wonder",
	"you can ask", "feel free"}

// acks are acknowledgements: a sentence of little more is a reply.
var acks = map[string]bool{"looks": true, "good": true, "great": true, "thanks": true, "thank": true, "perfect": true,
	"nice": true, "cool": true, "lgtm": true, "okay": true, "ok": true, "yes": true, "yeah": true, "sure": true,
	"fine": true, "awesome": true, "go": true, "ahead": true, "continue": true, "proceed": true}

// chatter reports a sentence about the user's state of mind or a bare
// acknowledgement; cs are its subject words (content).
func chatter(s string, cs map[string]bool) bool {
	l := strings.ReplaceAll(strings.ToLower(s), "\u2019", "'")
	for _, c := range chatterOpeners {
		if strings.HasPrefix(l, c) {
			return true
		}
	}
	n := 0
	for w := range cs {
		if !acks[w] {
			n++
		}
	}
	return n < minContentWords
}

// approvalWords are all an approval says: it goes ahead ("implement",
// "ship", "try") with what the agent proposed ("this", "them", "the plan",
// "option 2"), whose content is in the agent's words.
var approvalWords = map[string]bool{
	"implement": true, "do": true, "go": true, "ahead": true, "proceed": true, "continue": true, "ship": true,
	"apply": true, "execute": true, "start": true, "try": true, "commit": true, "push": true, "merge": true,
	"finish": true, "with": true, "on": true, "now": true, "then": true, "that": true, "this": true, "them": true,
	"these": true, "those": true, "everything": true, "all": true, "both": true, "same": true, "above": true,
	"plan": true, "option": true, "approach": true, "suggestion": true, "proposal": true, "changes": true,
	"fix": true, "fixes": true, "one": true, "way": true, "idea": true, "sounds": true, "agreed": true, "agree": true,
	"yep": true, "alright": true, "right": true, "so": true, "well": true, "just": true, "lets": true,
}

// approval reports a sentence that only agrees to go on: every subject word
// is an acknowledgement, a go-ahead, a pointer back or a number, or it
// opens on a go-ahead for what the agent proposed. ws and cs are the
// sentence's opening and subject words (opening, content).
func approval(ws []string, cs map[string]bool) bool {
	// "go ahead with the regression test", "proceed with the migration":
	// whatever follows names what the agent proposed.
	if len(ws) > 1 && (ws[0] == "go" && ws[1] == "ahead" || (ws[0] == "proceed" || ws[0] == "continue") && ws[1] == "with") {
		return true
	}
	for w := range cs {
		if !acks[w] && !approvalWords[w] && !stretched.MatchString(w) && strings.Trim(w, "0123456789") != "" {
			return false
		}
	}
	return true
}

type chunk struct {
	text string
	act  act
}

// chunks splits a prompt into items of whole sentences of the same act,
// dropping questions, approvals, steps and chatter. A report is kept only
// as the lead-in of the kept sentence right after it, which it explains
// ("The import fails on a missing file. Fix it and make sure the tests
// pass.").
func chunks(text string) []chunk {
	var out []chunk
	var cur strings.Builder
	kind := actDrop
	lead := "" // the report right before the sentence at hand
	flush := func() {
		if cur.Len() > 0 && taken(out, kind == actRule) < limitOf(kind) {
			out = append(out, chunk{text: clip(cur.String(), maxDirective), act: kind})
		}
		cur.Reset()
	}
	for _, s := range userSentences(text) {
		s.text = strings.Join(strings.Fields(s.text), " ")
		a := classify(s)
		if a == actDrop || a == actReport {
			lead = ""
			if a == actReport {
				lead = s.text
			}
			continue
		}
		if lead != "" {
			s.text = lead + " " + s.text
			lead = ""
		}
		if cur.Len() > 0 && (a != kind || cur.Len()+1+len(s.text) > maxDirective) {
			flush()
		}
		kind = a
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(s.text)
	}
	flush()
	return out
}

// offerCues open a sentence that asks the user or offers the next step.
var offerCues = []string{"if you", "want me", "should i", "shall i", "let me know", "would you", "do you want",
	"ready to", "paste ", "send me", "tell me"}

// taken counts the chunks of out that are rules (rule) or not.
func taken(out []chunk, rule bool) int {
	n := 0
	for _, c := range out {
		if (c.act == actRule) == rule {
			n++
		}
	}
	return n
}

// limitOf is how many chunks of act one prompt gives.
func limitOf(a act) int {
	if a == actRule {
		return maxRules
	}
	return maxDirectives
}

// lastQuestion reports the question or offer the agent ended the episode
// on when the user has not answered it (no prompt came after it), as an
// open question; and whether the user spoke in the episode, which answers
// the questions earlier checkpoints left open.
func (x *extractor) lastQuestion(it *Items) {
	for i := range x.ep.Events {
		if genuine(&x.ep.Events[i].Event) {
			it.UserSpoke = true
			break
		}
	}
	e := x.finalMessage()
	if e == nil {
		return
	}
	// Only the final paragraph: the agent's last words decide.
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
}

// finalMessage is the agent's last message of the episode when no prompt
// of the user's came after it: its last words, not yet answered. Nil when
// the episode ends on the user's prompt or holds no agent message.
func (x *extractor) finalMessage() *transcript.Event {
	for i := len(x.ep.Events) - 1; i >= 0; i-- {
		e := &x.ep.Events[i].Event
		if genuine(e) {
			return nil
		}
		if e.Kind == transcript.KindAssistantMessage {
			return e
		}
	}
	return nil
}

// askedPrefix marks the open questions that wait on the user's answer.
const askedPrefix = "Asked the user: "

// stripImages removes the placeholders agents put for pasted images
// ("[Image #1]", "[image: image/png, 3 KB]") and those a redacted
// transcript holds for the user's text ("[REDACTED_TEXT len=86 sha=…]"):
// they carry no words.
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
		if !strings.HasPrefix(inner, "image #") && !strings.HasPrefix(inner, "image: ") && !strings.HasPrefix(inner, "pasted text") &&
			!strings.HasPrefix(inner, "redacted_") {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// stepMarker opens a numbered step of the user's own instructions: "2.",
// "3)", "step 2:", "Step 4 -".
var stepMarker = regexp.MustCompile(`^(?i:step\s*\d+[a-z]?\s*[:.)-]?|\d+[.)])\s+`)

// Lines of pasted material, not the user's own words: a quote, a heading,
// a table row, a markup tag, a stack frame ("at f (x.js:3)", a browser
// console's "f @ x.js:3", "x.js:3 Warning: …") or a log line ("2026-01-02 …", "[App] …"), a
// label set in emphasis (a review bot's "_⚠️ Potential issue_"). The mark
// of text the adapter cut out of a long prompt is skipped too
// (transcript.IsElision).
var (
	pastedLine = regexp.MustCompile(`^(?:>|#{1,6}\s|\||</?[A-Za-z][\w-]*[^>]*>|at \S+ \(|at https?:|at \S+:\d+|\[?\d{4}-\d\d-\d\d[T ]\d|\[\d\d:\d\d|\[[A-Za-z][\w.-]*\] |\S+ @ \S+:\d+|\d*[\w.-]+\.[a-z]{1,4}:\d+ )`)
	// sourceRef is a place in a source file ("chunk-36j.js:11570",
	// "@ app.tsx:12:5"): a line with two of them is a pasted stack or
	// console log, whatever words surround them.
	sourceRef  = regexp.MustCompile(`[\w.-]+\.[a-z]{1,4}:\d+`)
	emphasized = regexp.MustCompile(`^(?:\*\*|__|_)[^*_]+(?:\*\*|__|_)\W*$`)
	// openTag is a markup tag alone on its line: what follows, to its
	// closing tag, is pasted ("<details>", "<context>").
	openTag = regexp.MustCompile(`^<([A-Za-z][\w-]*)[^>/]*>$`)
)

// The first bytes of what the patterns anchored at a line's start match
// (the long s, U+017F, folds to "s" in stepMarker), and the bytes a line
// needs for pastedLine's other forms and for sourceRef: each regexp runs
// only on a line that can match it, few do.
const (
	stepHeads   = "s0123456789\xc5"
	pastedHeads = ">#|<a[0123456789"
)

// openTagName is the name of openTag on line t, or "".
func openTagName(t string) string {
	if !strings.HasPrefix(t, "<") || !strings.HasSuffix(t, ">") {
		return ""
	}
	if m := openTag.FindStringSubmatch(t); m != nil {
		return m[1]
	}
	return ""
}

// pasted reports whether line t, not empty, is pasted material: a
// pastedLine, an emphasized label or a line with two sourceRefs. Where
// pastedLine matches other than at its heads, and each sourceRef, it
// matches a ':'.
func pasted(t string) bool {
	colon := strings.IndexByte(t, ':') >= 0
	return (colon || strings.IndexByte(pastedHeads, t[0]) >= 0) && pastedLine.MatchString(t) ||
		(t[0] == '*' || t[0] == '_') && emphasized.MatchString(t) ||
		colon && len(sourceRef.FindAllStringIndex(t, 2)) == 2
}

// userSentences splits a prompt into the sentences the user wrote: fenced
// code, quotes, markup blocks and other pasted lines are skipped, and the
// sentences of a numbered step are marked.
func userSentences(text string) []sentence {
	var out []sentence
	inFence, closing := false, ""
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "```"):
			inFence = !inFence
			continue
		case inFence:
			continue
		case closing != "":
			if strings.Contains(t, closing) {
				closing = ""
			}
			continue
		}
		if tag := openTagName(t); tag != "" {
			closing = "</" + tag + ">"
			continue
		}
		if t == "" || pasted(t) || transcript.IsElision(t) {
			continue
		}
		t = strings.TrimLeft(t, "-*+ \t")
		step := opensWith(t, stepHeads) && stepMarker.MatchString(t)
		if step {
			t = stepMarker.ReplaceAllString(t, "")
		}
		for _, s := range lineSentences(t) {
			out = append(out, sentence{text: s, step: step})
		}
	}
	return out
}
