// Package render turns medallions into the save file a new agent session
// starts with: a short preamble telling the agent to treat the content as
// the current canonical state (seed 000 §9.1), then the medallions' items in
// priority order, cut to a token budget.
//
// What matters most to a session that starts cold comes first: the rules it
// must not break, the fixes it must not rediscover, the open questions that
// block work, the rest of the open questions (they are few, and a session
// that cannot see what was left open redoes or forgets it), then decisions,
// the summary, subsystems and entry points. Items are whole or absent; what is left out
// is named with the command that shows it, and the text never exceeds the
// budget as counted by Tokens.
package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/medallion"
)

// DefaultBudget is the token budget of a load that names none: enough for
// the rules, fixes, open questions and main decisions of a busy scope, small
// next to an agent's context window.
const DefaultBudget = 1500

// The output formats.
const (
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Options tune Load.
type Options struct {
	// Budget is the most tokens (by Tokens) the text may take; 0 means
	// DefaultBudget.
	Budget int
	// Format is FormatMarkdown (the default, for an agent's context) or
	// FormatJSON (the same selection as a JSON object, for tools).
	Format string
	// Review is how items a model wrote and nobody has reviewed yet
	// (medallion.ReviewPending) are shown: ReviewAuto (the default, "")
	// marks them with UnreviewedMark, ReviewRequired leaves them out,
	// ReviewOff shows them like any other. Approved items are never
	// marked; rejected ones are no longer in the medallion.
	Review string
}

// The review modes of Options.Review, as the llm block's review setting
// names them.
const (
	ReviewAuto     = "auto"
	ReviewRequired = "required"
	ReviewOff      = "off"
)

// UnreviewedMark ends the text of a pending model-made item in ReviewAuto
// mode, so that the agent reading the load can weigh it accordingly.
const UnreviewedMark = " (unreviewed)"

// Result is a rendered load.
type Result struct {
	Text string
	// Tokens is Tokens(Text); it never exceeds the budget unless the
	// items the user pinned alone do (they are never left out).
	Tokens int
	// Cut names what was left out to fit the budget, one entry per section
	// of a medallion, e.g. "4 more decisions: medallionctl show ID".
	Cut []string
}

// NoMedallionText is the whole text of a load for a scope with no medallion.
const NoMedallionText = "No medallion exists for this scope yet: nothing was saved from previous sessions."

// section is one kind of item, in priority order: a lower value is more
// important and is filled first.
type section int

// The order is the value of a line to the next session: the user's rules,
// the open work and where the work stopped (the summary), then the known
// fixes, then the decisions and the rest. A per-section floor (floor)
// keeps a later kind from being starved by an earlier one.
const (
	secRules section = iota
	secHighQuestions
	secSummary
	secFixes
	secDecisions
	secQuestions
	secSubsystems
	secEntryPoints
	numSections
)

// sectionInfo is how a section is titled in markdown and JSON and named in
// cut lines.
var sectionInfo = [numSections]struct{ title, key, noun string }{
	secRules:         {"Rules", "rules", "rules"},
	secFixes:         {"Known fixes / don't repeat", "known_fixes", "known fixes"},
	secHighQuestions: {"Open questions (high priority)", "open_questions_high", "high-priority open questions"},
	secDecisions:     {"Decisions", "decisions", "decisions"},
	secQuestions:     {"Other open questions", "open_questions", "open questions"},
	secSummary:       {"Summary", "summary", "summary paragraphs"},
	secSubsystems:    {"Subsystems", "subsystems", "subsystems"},
	secEntryPoints:   {"Entry points", "entry_points", "entry points"},
}

// item is one renderable entry: its markdown line and its JSON value.
type item struct {
	line   string // markdown, without the trailing newline
	json   any
	pinned bool // the user pinned it: always selected
}

// doc is one medallion's items by section, and which are selected.
type doc struct {
	m      *medallion.Medallion
	items  [numSections][]item
	taken  [numSections]int // items[s][:taken[s]] are selected
	pinned [numSections]int // items[s][:pinned[s]] are the pinned ones
}

// Load renders ms (most relevant first) within opts.Budget tokens.
func Load(ms []*medallion.Medallion, opts Options) Result {
	budget := opts.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	var docs []*doc
	for _, m := range ms {
		if m != nil {
			docs = append(docs, newDoc(m, opts.Review))
		}
	}
	if len(docs) == 0 {
		return fit(NoMedallionText, budget, nil)
	}
	l := &layout{docs: docs, multi: len(docs) > 1}
	// A tight budget may not hold a cut line per section, or even the
	// whole preamble: fall back to one cut line per medallion, then to the
	// short preamble, whichever first leaves room.
	for _, mode := range []struct{ compact, short bool }{{false, false}, {true, false}, {true, true}} {
		l.compact, l.short = mode.compact, mode.short
		if Tokens(l.preamble())+l.reserve() <= budget {
			break
		}
	}
	budget = l.selectItems(budget)
	if l.compact && !l.short {
		// Now that the selection is made, name the cuts section by
		// section if that still fits.
		l.compact = false
		if Tokens(l.markdown()) > budget {
			l.compact = true
		}
	}
	if opts.Format == FormatJSON {
		return l.fitJSON(budget)
	}
	return fit(l.markdown(), budget, l.cut())
}

// fit returns text as a Result, truncated in the rare case it is over
// budget (a preamble alone larger than a tiny budget).
func fit(text string, budget int, cut []string) Result {
	if Tokens(text) > budget {
		text = truncate(text, budget)
	}
	return Result{Text: text, Tokens: Tokens(text), Cut: cut}
}

// truncate cuts text at a rune boundary so that it fits budget, ending it
// with an ellipsis when there is room for one.
func truncate(text string, budget int) string {
	const ellipsis = "…"
	if budget <= Tokens(ellipsis) {
		return ""
	}
	runes := []rune(text)
	lo, hi := 0, len(runes)
	for lo < hi { // the longest prefix that fits with the ellipsis
		mid := (lo + hi + 1) / 2
		if Tokens(string(runes[:mid]))+Tokens(ellipsis) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return string(runes[:lo]) + ellipsis
}

func newDoc(m *medallion.Medallion, review string) *doc {
	d := &doc{m: m}
	// pin names the item added next, as medallion.Pin does.
	var pinItem, pinText string
	pin := func(item, text string) { pinItem, pinText = item, text }
	add := func(s section, line string, v any) {
		d.items[s] = append(d.items[s], item{line: line, json: v, pinned: pinItem != "" && m.IsPinned(pinItem, pinText)})
		pinItem = ""
	}
	// mark says whether an item is left out (ReviewRequired and pending)
	// and what follows its text: UnreviewedMark for a pending item in
	// ReviewAuto mode, else nothing.
	mark := func(reviewItem, text string) (string, bool) {
		if review == ReviewOff || !m.Pending(reviewItem, text) {
			return "", true
		}
		if review == ReviewRequired {
			return "", false
		}
		return UnreviewedMark, true
	}
	for _, lst := range []struct {
		s     section
		name  string
		items []string
	}{
		{secRules, medallion.ItemInvariant, m.Affordances.Invariants},
		{secFixes, medallion.ItemAvoidRepeating, m.Affordances.AvoidRepeating},
	} {
		for _, v := range lst.items {
			if suffix, ok := mark(lst.name, v); ok {
				pin(lst.name, v)
				add(lst.s, "- "+oneLine(v)+suffix, v+suffix)
			}
		}
	}
	for _, q := range m.OpenQuestions {
		suffix, ok := mark(q.ID, q.Question)
		if !ok {
			continue
		}
		line := fmt.Sprintf("- [%s] %s", q.ID, oneLine(q.Question))
		if len(q.BlockedOn) > 0 {
			line += " (blocked on: " + oneLine(strings.Join(q.BlockedOn, "; ")) + ")"
		}
		s := secQuestions
		if q.Priority == medallion.PriorityHigh {
			s = secHighQuestions
		} else {
			line += " (" + string(q.Priority) + ")"
		}
		q.Question += suffix
		pin(q.ID, "")
		add(s, line+suffix, q)
	}
	// The user's decisions come before the agent's weaker ones, so a tight
	// budget cuts the agent's choices first; among equals the newest come
	// first, since a later request refines or replaces an earlier one.
	ds := slices.Clone(m.Decisions)
	slices.Reverse(ds)
	slices.SortStableFunc(ds, func(a, b medallion.Decision) int { return cmp.Compare(b.Confidence, a.Confidence) })
	for _, x := range ds {
		suffix, ok := mark(x.ID, x.Statement)
		if !ok {
			continue
		}
		line := fmt.Sprintf("- [%s] %s", x.ID, oneLine(x.Statement))
		if r := oneLine(x.Rationale); r != "" {
			line += " — " + r
		}
		x.Statement += suffix
		pin(x.ID, "")
		add(secDecisions, line+suffix, x)
	}
	if h := strings.TrimSpace(m.Summary.HighLevel); h != "" {
		if suffix, ok := mark(medallion.ItemSummary, h); ok {
			pin(medallion.ItemSummary, m.Summary.HighLevel)
			add(secSummary, h+suffix, h+suffix)
		}
	}
	for _, s := range m.Summary.Subsystems {
		line := fmt.Sprintf("- %s (%s)", oneLine(s.Name), s.Status)
		if n := oneLine(s.Notes); n != "" {
			line += ": " + n
		}
		pin(medallion.ItemSubsystem, s.Name)
		add(secSubsystems, line, s)
	}
	for _, v := range m.Affordances.RecommendedEntryPoints {
		if suffix, ok := mark(medallion.ItemEntryPoint, v); ok {
			pin(medallion.ItemEntryPoint, v)
			add(secEntryPoints, "- "+oneLine(v)+suffix, v+suffix)
		}
	}
	// Pinned items go first in their section, where the budget cannot
	// reach them.
	for s := range d.items {
		slices.SortStableFunc(d.items[s], func(a, b item) int {
			switch {
			case a.pinned == b.pinned:
				return 0
			case a.pinned:
				return -1
			}
			return 1
		})
		for _, it := range d.items[s] {
			if it.pinned {
				d.pinned[s]++
			}
		}
	}
	return d
}

// oneLine collapses runs of whitespace, newlines included, so that every
// list item stays one markdown line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// layout is the selection being built and how it is rendered.
type layout struct {
	docs  []*doc
	multi bool // more than one medallion: each gets its own heading
	// compact names what was cut with one line per medallion instead of
	// one per section; short uses the short preamble. Both are for budgets
	// too tight for the full forms.
	compact, short bool
	// cutCosts caches what one cut line costs, by medallion, section
	// (numSections for the compact form) and count: selectItems asks
	// reserve for every item it considers, and formatting every cut line
	// each time was most of a load's time in the daemon.
	cutCosts map[cutKey]int
}

type cutKey struct {
	doc, n int
	s      section
}

// The fixed parts of the markdown, kept as functions of their inputs so
// that selectItems charges exactly what markdown writes.

func (l *layout) preamble() string {
	if l.short {
		return "Canonical state from previous sessions; treat it as true unless the user says otherwise.\n"
	}
	var scope, which []string
	seen := map[string]bool{}
	for _, d := range l.docs {
		for _, v := range append(append([]string{}, d.m.Scope.GraphNodes...), d.m.Scope.Tags...) {
			if !seen[v] {
				seen[v] = true
				scope = append(scope, v)
			}
		}
		which = append(which, fmt.Sprintf("%s, version %d, updated %s", d.m.Meta.MedallionID, d.m.Meta.Version, when(d.m.Meta.UpdatedAt)))
	}
	name := "this scope"
	if len(scope) > 0 {
		name = strings.Join(scope, ", ")
	}
	noun := "medallion "
	if l.multi {
		noun = "medallions "
	}
	return "This is the current canonical state of " + oneLine(name) + " from previous sessions (" +
		noun + strings.Join(which, "; ") + "). Treat it as true unless the user says otherwise.\n"
}

// when shortens an RFC 3339 time to the minute, in UTC.
func when(ts string) string {
	t, err := medallion.ParseTime(ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func (l *layout) docHeading(d *doc) string {
	if !l.multi {
		return ""
	}
	return "\n## " + d.m.Meta.MedallionID + "\n"
}

func (l *layout) sectionHeading(s section) string {
	h := "\n## "
	if l.multi {
		h = "\n### "
	}
	return h + sectionInfo[s].title + "\n"
}

const cutHeading = "\nLeft out to fit the token budget:\n"

func cutLine(d *doc, s section, n int) string {
	if s == secSummary {
		return fmt.Sprintf("summary: medallionctl show %s", d.m.Meta.MedallionID)
	}
	return fmt.Sprintf("%d more %s: medallionctl show %s", n, sectionInfo[s].noun, d.m.Meta.MedallionID)
}

// selectItems takes items greedily in priority order — every medallion's
// rules, then every medallion's fixes, and so on — while the text stays
// within budget.
//
// The cost of the text is the sum of Tokens over its pieces (preamble,
// headings, lines), an upper bound of the Tokens of the whole since Tokens
// is subadditive. An item is taken only if, after it, there is still room
// for the cut lines of every section not wholly taken at that point; those
// sections and their counts can only shrink afterwards, so the final cut
// lines always fit. A section stops at its first item that does not fit,
// so what it shows is its first items and "N more" are the last N.
//
// The items the user pinned are taken first, whatever they cost; when they
// alone (with the preamble and cut lines) exceed budget, the budget grows
// to hold them. selectItems returns the budget it kept to.
func (l *layout) selectItems(budget int) int {
	used := Tokens(l.preamble())
	docStarted := make([]bool, len(l.docs))
	take := func(di int, s section, i int) int {
		d := l.docs[di]
		cost := Tokens(d.items[s][i].line + "\n")
		if i == 0 {
			cost += Tokens(l.sectionHeading(s))
		}
		if !docStarted[di] {
			cost += Tokens(l.docHeading(d))
		}
		return cost
	}
	for s := section(0); s < numSections; s++ {
		for di, d := range l.docs {
			for i := range d.pinned[s] {
				used += take(di, s, i)
				d.taken[s]++
				docStarted[di] = true
			}
		}
	}
	budget = max(budget, used+l.reserve())
	// The first pass takes each section's first floor items, the second
	// the rest, both in priority order.
	for _, limit := range []int{floor, math.MaxInt} {
		for s := section(0); s < numSections; s++ {
			for di, d := range l.docs {
				for d.taken[s] < min(limit, len(d.items[s])) {
					cost := take(di, s, d.taken[s])
					d.taken[s]++
					if used+cost+l.reserve() > budget {
						d.taken[s]--
						break
					}
					used += cost
					docStarted[di] = true
				}
			}
		}
	}
	return budget
}

// floor is how many items of every section are taken before any section
// takes more: a long list of rules cannot push every fix and decision out.
const floor = 2

// reserve is what the cut lines of the current selection cost: the sum
// over the lines cut lists, charged as markdown writes them.
func (l *layout) reserve() int {
	n := 0
	l.eachCut(func(di int, s section, left int) {
		k := cutKey{doc: di, n: left, s: s}
		c, ok := l.cutCosts[k]
		if !ok {
			c = Tokens("- " + cutText(l.docs[di], s, left) + "\n")
			if l.cutCosts == nil {
				l.cutCosts = map[cutKey]int{}
			}
			l.cutCosts[k] = c
		}
		n += c
	})
	if n > 0 {
		n += Tokens(cutHeading)
	}
	return n
}

// cut lists what the selection leaves out: one line per section of each
// medallion, or in compact mode one per medallion.
func (l *layout) cut() []string {
	var out []string
	l.eachCut(func(di int, s section, left int) {
		out = append(out, cutText(l.docs[di], s, left))
	})
	return out
}

// eachCut calls fn for every line cut lists, in order, with the medallion's
// index, the section (numSections for a compact line) and the count left out.
func (l *layout) eachCut(fn func(di int, s section, left int)) {
	for di, d := range l.docs {
		total := 0
		for s := section(0); s < numSections; s++ {
			if left := len(d.items[s]) - d.taken[s]; left > 0 {
				total += left
				if !l.compact {
					fn(di, s, left)
				}
			}
		}
		if l.compact && total > 0 {
			fn(di, numSections, total)
		}
	}
}

// cutText is one cut line: a section's (cutLine) or, for numSections, a
// compact medallion's.
func cutText(d *doc, s section, n int) string {
	if s == numSections {
		return fmt.Sprintf("%d more items: medallionctl show %s", n, d.m.Meta.MedallionID)
	}
	return cutLine(d, s, n)
}

func (l *layout) markdown() string {
	var b strings.Builder
	b.WriteString(l.preamble())
	for _, d := range l.docs {
		started := false
		for s := section(0); s < numSections; s++ {
			if d.taken[s] == 0 {
				continue
			}
			if !started {
				b.WriteString(l.docHeading(d))
				started = true
			}
			b.WriteString(l.sectionHeading(s))
			for _, it := range d.items[s][:d.taken[s]] {
				b.WriteString(it.line)
				b.WriteByte('\n')
			}
		}
	}
	if cut := l.cut(); len(cut) > 0 {
		b.WriteString(cutHeading)
		for _, c := range cut {
			b.WriteString("- " + c + "\n")
		}
	}
	return b.String()
}

// jsonDoc is one medallion's selection in the JSON format.
type jsonDoc struct {
	MedallionID string          `json:"medallion_id"`
	Version     int             `json:"version"`
	UpdatedAt   string          `json:"updated_at"`
	Scope       medallion.Scope `json:"scope"`
	Sections    map[string]any  `json:"sections"`
}

// jsonLoad is the JSON format's top-level object.
type jsonLoad struct {
	Preamble   string    `json:"preamble"`
	Medallions []jsonDoc `json:"medallions"`
	Cut        []string  `json:"cut"`
}

func (l *layout) json() string {
	out := jsonLoad{Preamble: strings.TrimSpace(l.preamble()), Medallions: []jsonDoc{}, Cut: l.cut()}
	if out.Cut == nil {
		out.Cut = []string{}
	}
	for _, d := range l.docs {
		jd := jsonDoc{MedallionID: d.m.Meta.MedallionID, Version: d.m.Meta.Version,
			UpdatedAt: d.m.Meta.UpdatedAt, Scope: d.m.Scope, Sections: map[string]any{}}
		for s := section(0); s < numSections; s++ {
			if d.taken[s] == 0 {
				continue
			}
			if s == secSummary {
				jd.Sections[sectionInfo[s].key] = d.items[s][0].json
				continue
			}
			vs := make([]any, d.taken[s])
			for i, it := range d.items[s][:d.taken[s]] {
				vs[i] = it.json
			}
			jd.Sections[sectionInfo[s].key] = vs
		}
		out.Medallions = append(out.Medallions, jd)
	}
	b, err := json.Marshal(out)
	if err != nil {
		// Only strings, numbers and medallion types: cannot fail.
		panic(fmt.Sprintf("render: marshal load: %v", err))
	}
	return string(b)
}

// fitJSON renders the markdown selection as JSON and, since JSON quoting
// costs more than markdown, gives back the lowest-priority items until it
// fits the budget.
func (l *layout) fitJSON(budget int) Result {
	for {
		text := l.json()
		if Tokens(text) <= budget {
			return Result{Text: text, Tokens: Tokens(text), Cut: l.cut()}
		}
		if !l.dropLast() {
			if l.anyPinned() {
				// Pinned items are shown over any budget.
				return Result{Text: text, Tokens: Tokens(text), Cut: l.cut()}
			}
			break
		}
	}
	// Not even the preamble and cut list fit: an empty object is still
	// valid JSON, and the cut list says where to look.
	cut := l.cut()
	return Result{Text: "{}", Tokens: Tokens("{}"), Cut: cut}
}

// anyPinned reports whether a pinned item is selected (they always are).
func (l *layout) anyPinned() bool {
	for _, d := range l.docs {
		for s := range d.pinned {
			if d.pinned[s] > 0 {
				return true
			}
		}
	}
	return false
}

// dropLast unselects the last selected item of the lowest-priority section
// that has one not pinned; it reports false when there is none.
func (l *layout) dropLast() bool {
	for s := numSections - 1; s >= 0; s-- {
		for i := len(l.docs) - 1; i >= 0; i-- {
			if d := l.docs[i]; d.taken[s] > d.pinned[s] {
				d.taken[s]--
				return true
			}
		}
	}
	return false
}
