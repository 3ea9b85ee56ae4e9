package distill

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Caps on the lists Tier 1 writes into; the same as Tier 0's, so a model
// cannot grow a medallion past what the load budget can carry.
const (
	maxDecisions   = 20
	maxQuestions   = 15
	maxListItems   = 20
	maxEntryPoints = 10
	maxSubsystems  = 12
	maxSummary     = 300 * 4
)

// Applied counts what a patch did, and what it asked for that was refused.
type Applied struct {
	Added, Revised, Dropped, Resolved int
	// Refused counts operations that named no existing item, cited no
	// evidence handle of the digest, repeated an item the user rejected,
	// or would have exceeded a cap.
	Refused int
}

// view is one prompt's numbering: list items and evidence handles as the
// model saw them.
type view struct {
	invariants, avoid, entries []string // I-n, A-n, P-n → text
	handles                    []Entry  // E-n → entry (1-based)
	// ids are the decision and question ids the model saw: only those
	// can be revised, dropped or resolved, never an item this same patch
	// added (whose id the model cannot know).
	ids map[string]bool
}

func newView(m *medallion.Medallion, entries []Entry) view {
	ids := map[string]bool{}
	for _, d := range m.Decisions {
		ids[d.ID] = true
	}
	for _, q := range m.OpenQuestions {
		ids[q.ID] = true
	}
	return view{
		ids:        ids,
		invariants: slices.Clone(m.Affordances.Invariants),
		avoid:      slices.Clone(m.Affordances.AvoidRepeating),
		entries:    slices.Clone(m.Affordances.RecommendedEntryPoints),
		handles:    entries,
	}
}

// evidence maps handles to the entries they name; unknown handles are
// left out.
func (v view) evidence(handles []string) []Entry {
	var out []Entry
	for _, h := range handles {
		if n, ok := handleNum(h, "E"); ok && n <= len(v.handles) {
			out = append(out, v.handles[n-1])
		}
	}
	return out
}

// applier carries one patch application.
type applier struct {
	m      *medallion.Medallion
	patch  *Patch
	v      view
	source string
	redact func(string) string
	res    Applied
}

// text is a model-written text as stored: redacted (a model may repeat a
// secret the redactor missed in the digest, or invent one), then clipped.
func (a *applier) text(s string, n int) string {
	if a.redact != nil {
		s = a.redact(s)
	}
	return clip(s, n)
}

// apply writes p into m (a copy the caller owns). Ops on unknown targets,
// adds without evidence from the digest, and items the user rejected are
// refused and counted; the rest is applied under the caps.
func apply(m *medallion.Medallion, v view, p *Patch, source string, redact func(string) string) Applied {
	a := applier{m: m, patch: p, v: v, source: source, redact: redact}
	if s := strings.TrimSpace(p.Summary); s != "" && m.IsPinned(medallion.ItemSummary, m.Summary.HighLevel) {
		a.res.Refused++ // the user pinned the summary
	} else if s != "" {
		m.Summary.HighLevel = a.text(s, maxSummary)
		// The summary has no id: its review entry names it by its text.
		a.review(medallion.ItemSummary, m.Summary.HighLevel)
	}
	for _, d := range p.Decisions {
		a.decision(d)
	}
	for _, q := range p.OpenQuestions {
		a.question(q)
	}
	a.list("invariant", &m.Affordances.Invariants, v.invariants, "I", p.Invariants, maxListItems)
	a.list("avoid_repeating", &m.Affordances.AvoidRepeating, v.avoid, "A", p.AvoidRepeating, maxListItems)
	a.list("entry_point", &m.Affordances.RecommendedEntryPoints, v.entries, "P", p.EntryPoints, maxEntryPoints)
	for _, s := range p.Subsystems {
		a.subsystem(s)
	}
	a.trim()
	return a.res
}

func (a *applier) decision(op DecisionOp) {
	i := -1
	if id := strings.TrimSpace(op.ID); a.v.ids[id] {
		i = slices.IndexFunc(a.m.Decisions, func(d medallion.Decision) bool { return d.ID == id })
	}
	if i >= 0 && a.m.IsPinned(a.m.Decisions[i].ID, "") {
		a.res.Refused++ // the user pinned it: no model changes it
		return
	}
	switch op.Op {
	case "drop":
		if i < 0 || a.losesUserWords(a.m.Decisions[i]) {
			a.res.Refused++
			return
		}
		a.m.Decisions = slices.Delete(a.m.Decisions, i, i+1)
		a.res.Dropped++
	case "revise", "add":
		ev := a.v.evidence(op.Evidence)
		text := a.text(op.Statement, maxItemBytes)
		if len(ev) == 0 || a.rejected(text) || (op.Op == "revise" && i < 0) {
			a.res.Refused++
			return
		}
		d := medallion.Decision{Statement: text, Rationale: a.text(op.Rationale, maxItemBytes), Confidence: confidences[op.Confidence]}
		if op.Op == "revise" {
			d.ID = a.m.Decisions[i].ID
			a.m.Decisions[i] = d
			a.res.Revised++
		} else {
			if j := slices.IndexFunc(a.m.Decisions, func(o medallion.Decision) bool { return same(o.Statement, text) }); j >= 0 {
				a.res.Refused++
				return
			}
			d.ID = a.nextID("D")
			a.m.Decisions = append(a.m.Decisions, d)
			a.res.Added++
		}
		a.review(d.ID, text)
		a.evidenceFor(d.ID, "", ev)
	default:
		a.res.Refused++
	}
}

func (a *applier) question(op QuestionOp) {
	i := -1
	if id := strings.TrimSpace(op.ID); a.v.ids[id] {
		i = slices.IndexFunc(a.m.OpenQuestions, func(q medallion.OpenQuestion) bool { return q.ID == id })
	}
	if i >= 0 && a.m.IsPinned(a.m.OpenQuestions[i].ID, "") {
		a.res.Refused++ // the user pinned it
		return
	}
	switch op.Op {
	case "drop", "resolve":
		if i < 0 {
			a.res.Refused++
			return
		}
		a.m.OpenQuestions = slices.Delete(a.m.OpenQuestions, i, i+1)
		if op.Op == "resolve" {
			a.res.Resolved++
		} else {
			a.res.Dropped++
		}
	case "add":
		ev := a.v.evidence(op.Evidence)
		text := a.text(op.Question, maxItemBytes)
		if len(ev) == 0 || a.rejected(text) ||
			slices.ContainsFunc(a.m.OpenQuestions, func(q medallion.OpenQuestion) bool { return same(q.Question, text) }) {
			a.res.Refused++
			return
		}
		blocked := []string{}
		for _, b := range op.BlockedOn {
			if b = a.text(b, 200); b != "" {
				blocked = append(blocked, b)
			}
		}
		q := medallion.OpenQuestion{ID: a.nextID("Q"), Question: text, BlockedOn: blocked, Priority: medallion.Priority(op.Priority)}
		a.m.OpenQuestions = append(a.m.OpenQuestions, q)
		a.res.Added++
		a.review(q.ID, text)
		a.evidenceFor(q.ID, "", ev)
	default:
		a.res.Refused++
	}
}

// list applies ops to one text list. Drops name the item by the handle
// the model saw (prefix-n into seen); adds must cite evidence.
func (a *applier) list(item string, dst *[]string, seen []string, prefix string, ops []ListOp, limit int) {
	var drop []string
	for _, op := range ops {
		switch op.Op {
		case "drop":
			n, ok := handleNum(op.Ref, prefix+"-")
			if !ok || n > len(seen) || a.m.IsPinned(item, seen[n-1]) {
				a.res.Refused++
				continue
			}
			drop = append(drop, seen[n-1])
		case "add":
			ev := a.v.evidence(op.Evidence)
			text := a.text(op.Text, maxItemBytes)
			if len(ev) == 0 || a.rejected(text) || slices.ContainsFunc(*dst, func(s string) bool { return same(s, text) }) {
				a.res.Refused++
				continue
			}
			*dst = append(*dst, text)
			a.res.Added++
			a.review(item, text)
			a.evidenceFor(item, text, ev)
		default:
			a.res.Refused++
		}
	}
	for _, d := range drop {
		if i := slices.Index(*dst, d); i >= 0 {
			*dst = slices.Delete(*dst, i, i+1)
			a.res.Dropped++
		}
	}
	// Over the cap, the oldest items that no model wrote go first: the
	// model saw them and chose to keep its own.
	for len(*dst) > limit {
		i := slices.IndexFunc(*dst, func(s string) bool { return !a.fromModel(item, s) })
		if i < 0 {
			i = 0
		}
		*dst = slices.Delete(*dst, i, i+1)
	}
}

func (a *applier) subsystem(op SubsysOp) {
	name := a.text(op.Name, 200)
	s := medallion.Subsystem{Name: name, Status: medallion.SubsystemStatus(op.Status), Notes: a.text(op.Notes, maxItemBytes)}
	if i := slices.IndexFunc(a.m.Summary.Subsystems, func(o medallion.Subsystem) bool { return strings.EqualFold(o.Name, name) }); i >= 0 {
		a.m.Summary.Subsystems[i] = s
		a.res.Revised++
		return
	}
	a.m.Summary.Subsystems = append(a.m.Summary.Subsystems, s)
	a.res.Added++
}

// trim holds the caps on decisions, questions and subsystems, dropping the
// oldest items that no model wrote first.
func (a *applier) trim() {
	for len(a.m.Decisions) > maxDecisions {
		i := slices.IndexFunc(a.m.Decisions, func(d medallion.Decision) bool { return !a.fromModel(d.ID, "") })
		a.m.Decisions = slices.Delete(a.m.Decisions, max(i, 0), max(i, 0)+1)
	}
	for len(a.m.OpenQuestions) > maxQuestions {
		i := slices.IndexFunc(a.m.OpenQuestions, func(q medallion.OpenQuestion) bool { return !a.fromModel(q.ID, "") })
		a.m.OpenQuestions = slices.Delete(a.m.OpenQuestions, max(i, 0), max(i, 0)+1)
	}
	if n := len(a.m.Summary.Subsystems); n > maxSubsystems {
		a.m.Summary.Subsystems = a.m.Summary.Subsystems[n-maxSubsystems:]
	}
	// Review entries of items no longer in the medallion are dropped,
	// except rejections, which keep the item from coming back.
	live := a.liveItems()
	a.m.Review = slices.DeleteFunc(a.m.Review, func(r medallion.Review) bool {
		return r.State != medallion.ReviewRejected && !live(r)
	})
	if n := len(a.m.Review); n > medallion.MaxReview {
		a.m.Review = a.m.Review[n-medallion.MaxReview:]
	}
	if n := len(a.m.Evidence); n > medallion.MaxEvidence {
		a.m.Evidence = a.m.Evidence[n-medallion.MaxEvidence:]
	}
}

// liveItems reports whether a review entry's item is still in the
// medallion.
func (a *applier) liveItems() func(medallion.Review) bool {
	ids := map[string]bool{}
	for _, d := range a.m.Decisions {
		ids[d.ID] = true
	}
	for _, q := range a.m.OpenQuestions {
		ids[q.ID] = true
	}
	lists := map[string][]string{
		"invariant": a.m.Affordances.Invariants, "avoid_repeating": a.m.Affordances.AvoidRepeating,
		"entry_point": a.m.Affordances.RecommendedEntryPoints,
	}
	return func(r medallion.Review) bool {
		if r.Item == medallion.ItemSummary {
			return r.Text == a.m.Summary.HighLevel
		}
		if l, ok := lists[r.Item]; ok {
			return slices.Contains(l, r.Text)
		}
		return ids[r.Item]
	}
}

// review marks an item as the model's, pending the user's review. A
// revised item's earlier entry is replaced.
func (a *applier) review(item, text string) {
	a.m.Review = slices.DeleteFunc(a.m.Review, func(r medallion.Review) bool {
		return r.Item == item && r.State != medallion.ReviewRejected && (r.Text == text || isID(item) || item == medallion.ItemSummary)
	})
	a.m.Review = append(a.m.Review, medallion.Review{Item: item, Text: text, Source: a.source, State: medallion.ReviewPending})
}

func (a *applier) fromModel(item, text string) bool {
	return slices.ContainsFunc(a.m.Review, func(r medallion.Review) bool {
		return r.Item == item && r.State != medallion.ReviewRejected && (text == "" || r.Text == text)
	})
}

// rejected reports whether the user rejected an item with this text, or
// forgot one (medallionctl forget).
func (a *applier) rejected(text string) bool {
	return a.m.WasForgotten("", text, nil) || slices.ContainsFunc(a.m.Review, func(r medallion.Review) bool {
		return r.State == medallion.ReviewRejected && same(r.Text, text)
	})
}

// evidenceFor records the events behind an item, one entry per session.
func (a *applier) evidenceFor(item, text string, ev []Entry) {
	bySession := map[string][]string{}
	var order []string
	for _, e := range ev {
		if _, ok := bySession[e.SessionID]; !ok {
			order = append(order, e.SessionID)
		}
		bySession[e.SessionID] = append(bySession[e.SessionID], e.EventIDs...)
	}
	for _, sid := range order {
		ids := slices.Compact(bySession[sid])
		if len(ids) > 20 {
			ids = ids[len(ids)-20:]
		}
		a.m.Evidence = append(a.m.Evidence, medallion.Evidence{Item: item, Text: text, SessionID: sid, EventIDs: ids})
	}
}

// nextID returns the next free id with prefix: one past the highest ever
// used in the medallion (its items, evidence and review), so a removed id
// is never given to a different item.
func (a *applier) nextID(prefix string) string {
	high := a.m.HighestIDs()[prefix]
	for id := range a.v.ids { // dropped by this patch, still never reused
		if n, ok := handleNum(id, prefix+"-"); ok && n > high {
			high = n
		}
	}
	return fmt.Sprintf("%s-%03d", prefix, high+1)
}

func isID(item string) bool {
	_, d := handleNum(item, "D-")
	_, q := handleNum(item, "Q-")
	return d || q
}

// same compares two item texts loosely: case and spacing aside.
// keptWords is the share of a user-quoting decision's words that an item
// the patch adds must hold for a drop of it to count as a move.
const keptWords = 0.6

// losesUserWords reports a drop of a decision Tier 0 took from the user's
// own words (a request, a preference) that the same patch does not move:
// no invariant or decision it adds keeps most of those words. The prompt
// asks the model to move a misfiled instruction to the invariants in the
// user's words; measured on the labelled sessions, its drops lost a fifth
// of the user's constraints Tier 0 had kept (89 -> 72 %).
func (a *applier) losesUserWords(d medallion.Decision) bool {
	if d.Rationale != medallion.RationaleUserRequest && d.Rationale != medallion.RationaleUserPreference {
		return false
	}
	for _, op := range a.patch.Invariants {
		if op.Op == "add" && holdsWords(op.Text, d.Statement) {
			return false
		}
	}
	for _, op := range a.patch.Decisions {
		if (op.Op == "add" || op.Op == "revise") && holdsWords(op.Statement, d.Statement) {
			return false
		}
	}
	return true
}

// holdsWords reports whether text holds at least keptWords of the words of
// quote (of three letters or more, case aside).
func holdsWords(text, quote string) bool {
	have := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), notWordRune) {
		have[w] = true
	}
	n, kept := 0, 0
	for _, w := range strings.FieldsFunc(strings.ToLower(quote), notWordRune) {
		if len(w) < 3 {
			continue
		}
		n++
		if have[w] {
			kept++
		}
	}
	return n > 0 && float64(kept) >= keptWords*float64(n)
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

func same(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// clip bounds a model-written text to n bytes on a rune boundary, on one
// line, without control characters.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)), " ")
	if len(s) <= n {
		return s
	}
	return strings.TrimSpace(runeHead(s, n)) + "…"
}
