package curate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Model is what Tier 0 writes in meta.model.
const Model = "tier0"

// Caps on each list, so a medallion stays small enough to inject.
const (
	MaxDecisions      = 20
	MaxOpenQuestions  = 15
	MaxAvoidRepeating = 20
	MaxInvariants     = 20
	MaxEntryPoints    = 10
	MaxSubsystems     = 12
	// MaxSummaryBytes bounds summary.high_level: 300 tokens at a
	// conservative 4 bytes a token.
	MaxSummaryBytes = 300 * 4
)

// confidenceStep is what a re-observed decision gains.
const (
	confidenceStep = 0.05
	confidenceMax  = 0.99
)

// ID returns the id of the Tier 0 medallion of a scope: "med-" and a hash
// of the sorted graph nodes, so the same scope always names the same
// medallion.
func ID(scope []string) string {
	s := slices.Clone(scope)
	slices.Sort(s)
	s = slices.Compact(s)
	h := sha256.Sum256([]byte(strings.Join(s, "\x00")))
	return "med-" + hex.EncodeToString(h[:8])
}

// Apply merges items into a medallion. With existing nil it generates a
// new medallion for scope (version 0, so the store's Create makes it 1);
// otherwise it returns an updated copy of existing (existing is not
// modified) that keeps its id, created_at, version and item ids. Decisions
// and questions seen again keep their ids; decisions gain confidence. A
// decision or invariant that contradicts an older one supersedes it (the
// new decision's rationale says "supersedes D-00N (…)"); questions that
// the episode answered leave open_questions ("resolves Q-00N"). What
// leaves the active lists stays in the store's earlier versions. Every
// item touched gets an evidence entry. The result passes
// medallion.Validate.
func Apply(existing *medallion.Medallion, scope []string, items Items, now time.Time) *medallion.Medallion {
	var m *medallion.Medallion
	if existing == nil {
		nodes := slices.Clone(scope)
		slices.Sort(nodes)
		nodes = slices.Compact(nodes)
		nodes = slices.DeleteFunc(nodes, func(s string) bool { return strings.TrimSpace(s) == "" })
		m = &medallion.Medallion{
			Meta: medallion.Meta{
				MedallionID:   ID(scope),
				SchemaVersion: medallion.SchemaVersion,
				CreatedAt:     medallion.FormatTime(now),
			},
			Scope: medallion.Scope{GraphNodes: nodes, Tags: []string{"project_state"}},
		}
	} else {
		m = existing.Clone()
	}
	m.Meta.SchemaVersion = medallion.SchemaVersion
	m.Meta.Model = Model
	m.Meta.Status = medallion.StatusActive
	m.Meta.UpdatedAt = medallion.FormatTime(now)
	if m.Meta.CreatedAt == "" {
		m.Meta.CreatedAt = m.Meta.UpdatedAt
	}
	knowledge(m, items)

	a := applier{m: m, high: m.HighestIDs()}
	a.invariants(items.Invariants)
	checked := a.conventions(items.Checks)
	a.decisions(items.Decisions)
	a.laterFixes(items)
	if len(items.LeftOpen) > 0 {
		m.OpenQuestions = slices.DeleteFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool {
			return strings.HasPrefix(q.Question, leftPrefix)
		})
	}
	a.questions(append(slices.Clone(items.OpenQuestions), items.LeftOpen...), items.Closed, items.UserSpoke)
	for _, f := range items.Failures {
		if sig, ok := strings.CutPrefix(f.Question, "Unresolved: "); ok && len(f.BlockedOn) > 0 {
			a.record(failureItem, f.BlockedOn[0]+failureSep+sig, f.Evidence)
		}
	}
	for _, t := range items.AvoidRepeating {
		a.record("avoid_repeating", t.Text, t.Evidence)
	}
	m.Affordances.AvoidRepeating = a.mergeTexts(m.Affordances.AvoidRepeating, items.AvoidRepeating, MaxAvoidRepeating)
	m.Affordances.AvoidRepeating = slices.DeleteFunc(m.Affordances.AvoidRepeating, func(f string) bool {
		return breaksRule(f, m.Affordances.Invariants)
	})
	m.Affordances.RecommendedEntryPoints = mergeEntryPoints(m.Affordances.RecommendedEntryPoints, items.EntryPoints)
	for i, p := range items.EntryPoints {
		if i < len(items.EntryEvidence) {
			a.record("entry_point", p, items.EntryEvidence[i])
		}
	}
	applySubsystems(m, items.Subsystems)
	for _, s := range items.Subsystems {
		a.record("subsystem", s.Name, s.Evidence)
	}
	if len(checked) > 0 {
		a.notes = append(a.notes, "Checked with "+strings.Join(checked, ", ")+".")
	}
	m.Summary.HighLevel = summary(m, items, a.notes)
	a.trimEvidence()
	m.Normalize()
	return m
}

// applier carries one Apply's state: the highest item ids ever used (so a
// removed id is never reused) and the notes for the summary.
type applier struct {
	m     *medallion.Medallion
	high  map[string]int // "D", "Q" → highest number seen
	notes []string
	// sims and claims hold what similar and contradicts work out of each
	// statement: every new item is compared with every kept one, and a
	// long episode brings many (a backfill spent a third of its
	// checkpoints' time redoing it).
	sims   map[string]simText
	claims map[string]*claim
}

// sim is newSimText(s), worked out once per applier.
func (a *applier) sim(s string) simText { return memo(&a.sims, s, newSimText) }

// claim is newClaim(s), worked out once per applier.
func (a *applier) claim(s string) *claim { return memo(&a.claims, s, newClaim) }

// memo returns (*m)[k], computing it with f the first time, the map made
// on first use.
func memo[K comparable, V any](m *map[K]V, k K, f func(K) V) V {
	if v, ok := (*m)[k]; ok {
		return v
	}
	if *m == nil {
		*m = map[K]V{}
	}
	v := f(k)
	(*m)[k] = v
	return v
}

// maxEventIDs bounds the event ids one evidence entry keeps (the newest).
const maxEventIDs = 20

// record adds evidence for an item, merging it into the entry for the same
// item, text and session and moving that entry to the end (the newest);
// it returns the event ids the entry now holds.
func (a *applier) record(item, text string, ev Evidence) []string {
	if len(ev.EventIDs) == 0 && ev.SessionID == "" {
		return nil
	}
	e := medallion.Evidence{Item: item, Text: text, SessionID: ev.SessionID, EventIDs: slices.Clone(ev.EventIDs)}
	if i := slices.IndexFunc(a.m.Evidence, func(o medallion.Evidence) bool {
		return o.Item == item && o.Text == text && o.SessionID == ev.SessionID
	}); i >= 0 {
		old := a.m.Evidence[i]
		ids := slices.Clone(old.EventIDs)
		for _, id := range ev.EventIDs {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if len(ids) > maxEventIDs {
			ids = ids[len(ids)-maxEventIDs:]
		}
		e.EventIDs = ids
		a.m.Evidence = slices.Delete(a.m.Evidence, i, i+1)
	}
	if e.EventIDs == nil {
		e.EventIDs = []string{}
	}
	a.m.Evidence = append(a.m.Evidence, e)
	return e.EventIDs
}

// trimEvidence keeps the newest medallion.MaxEvidence entries, but always
// the one naming the highest decision and question id: HighestIDs reads them
// there, so ids stay unique over the medallion's whole history.
func (a *applier) trimEvidence() {
	ev := a.m.Evidence
	if len(ev) <= medallion.MaxEvidence {
		return
	}
	var pinned []medallion.Evidence
	for _, prefix := range []string{"D", "Q"} {
		id := fmt.Sprintf("%s-%03d", prefix, a.high[prefix])
		if a.high[prefix] == 0 {
			continue
		}
		newest := slices.IndexFunc(ev[len(ev)-medallion.MaxEvidence:], func(e medallion.Evidence) bool { return e.Item == id })
		if newest < 0 {
			pinned = append(pinned, medallion.Evidence{Item: id, EventIDs: []string{}})
		}
	}
	a.m.Evidence = append(pinned, ev[len(ev)-(medallion.MaxEvidence-len(pinned)):]...)
}

// next returns a new "<prefix>-NNN" id above every id used before.
func (a *applier) next(prefix string) string {
	a.high[prefix]++
	return fmt.Sprintf("%s-%03d", prefix, a.high[prefix])
}

// supersede removes the active decisions and invariants newer contradicts
// and returns the "supersedes D-00N (<statement>)" references of the
// decisions removed.
func (a *applier) supersede(newer string) []string {
	var refs []string
	n := a.claim(newer)
	// A pinned item is the user's to change: a curator's newer statement
	// neither removes it nor claims to supersede it.
	a.m.Decisions = slices.DeleteFunc(a.m.Decisions, func(d medallion.Decision) bool {
		if !a.m.IsPinned(d.ID, "") && a.claim(d.Statement).contradictedBy(n) {
			refs = append(refs, "supersedes "+d.ID+" ("+d.Statement+")")
			return true
		}
		return false
	})
	a.m.Affordances.Invariants = slices.DeleteFunc(a.m.Affordances.Invariants, func(s string) bool {
		return !a.m.IsPinned("invariant", s) && a.claim(s).contradictedBy(n)
	})
	return refs
}

// invariants adds the user's rules; a rule that contradicts an older
// decision supersedes it, and the summary says so.
func (a *applier) invariants(ts []Text) {
	for _, t := range ts {
		if tn := a.sim(t.Text); !slices.ContainsFunc(a.m.Affordances.Invariants, func(s string) bool { return a.sim(s).similar(tn) }) {
			for _, ref := range a.supersede(t.Text) {
				a.notes = append(a.notes, "The user's rule \""+t.Text+"\" "+ref+".")
			}
		}
		a.record("invariant", t.Text, t.Evidence)
	}
	a.m.Affordances.Invariants = a.mergeTexts(a.m.Affordances.Invariants, ts, MaxInvariants)
}

func (a *applier) decisions(ds []Decision) {
	m := a.m
	for _, d := range ds {
		if i := slices.IndexFunc(m.Decisions, func(e medallion.Decision) bool { return sameCommit(e.Statement, d.Statement) }); i >= 0 {
			// The commit redone (amended, retried past a hook): the
			// latest one is what landed; its message is kept when the
			// latest was seen without its call.
			if len(d.Statement) >= len(m.Decisions[i].Statement) {
				m.Decisions[i].Statement = d.Statement
			}
			m.Decisions[i].Rationale = d.Rationale
			a.record(m.Decisions[i].ID, "", d.Evidence)
			continue
		}
		dn := a.sim(d.Statement)
		if i := slices.IndexFunc(m.Decisions, func(e medallion.Decision) bool { return a.sim(e.Statement).similar(dn) }); i >= 0 {
			m.Decisions[i].Confidence = min(confidenceMax, max(m.Decisions[i].Confidence, 0)+confidenceStep)
			a.record(m.Decisions[i].ID, "", d.Evidence)
			continue
		}
		rationale := d.Rationale
		if refs := a.supersede(d.Statement); len(refs) > 0 {
			rationale = strings.TrimSpace(rationale + " This " + strings.Join(refs, "; ") + ".")
		}
		id := a.next("D")
		m.Decisions = append(m.Decisions, medallion.Decision{
			ID: id, Statement: d.Statement, Rationale: rationale, Confidence: d.Confidence,
		})
		a.record(id, "", d.Evidence)
	}
	// Over the cap, the least confident go first; among equals the oldest.
	for len(m.Decisions) > MaxDecisions {
		drop := 0
		for i, d := range m.Decisions {
			if d.Confidence < m.Decisions[drop].Confidence {
				drop = i
			}
		}
		m.Decisions = slices.Delete(m.Decisions, drop, drop+1)
	}
}

// laterFixes turns the unresolved errors of earlier checkpoints into known
// fixes when this episode ran the same call successfully (or, for a hook,
// succeeded at a command with no objection since): the error was fixed by
// what led to that success.
func (a *applier) laterFixes(items Items) {
	m := a.m
	var fixes []Text
	m.OpenQuestions = slices.DeleteFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool {
		sig, ok := strings.CutPrefix(q.Question, "Unresolved: ")
		if !ok || len(q.BlockedOn) == 0 {
			return false
		}
		if slices.ContainsFunc(items.OpenQuestions, func(n Question) bool { return similar(n.Question, q.Question) }) {
			return false // failed again
		}
		f, ok := fixOf(sig, q.BlockedOn[0], items)
		if ok {
			fixes = append(fixes, f)
			a.notes = append(a.notes, "Done: fixed "+sig+" (resolves "+q.ID+").")
		}
		return ok
	})
	// The failures of calls that are no checks, kept in the evidence
	// (failureItem) instead of as open questions.
	m.Evidence = slices.DeleteFunc(m.Evidence, func(e medallion.Evidence) bool {
		blockedOn, sig, ok := strings.Cut(e.Text, failureSep)
		if e.Item != failureItem || !ok {
			return false
		}
		f, ok := fixOf(sig, blockedOn, items)
		if ok {
			fixes = append(fixes, f)
			a.notes = append(a.notes, "Done: fixed "+sig+".")
		}
		return ok
	})
	for _, f := range fixes {
		a.record("avoid_repeating", f.Text, f.Evidence)
	}
	m.Affordances.AvoidRepeating = a.mergeTexts(m.Affordances.AvoidRepeating, fixes, MaxAvoidRepeating)
}

// fixOf is the known fix of an earlier checkpoint's failure sig of the
// call blockedOn that this episode shows: the same call succeeding, or the
// same check failing with another error after edits (what was changed got
// past this one).
func fixOf(sig, blockedOn string, items Items) (Text, bool) {
	key := blockedKey(blockedOn)
	if i := slices.IndexFunc(items.Successes, func(s Success) bool { return s.Subject == key }); i >= 0 {
		s := items.Successes[i]
		return Text{Text: "when " + sig + ": " + s.Remedy, Confidence: confidenceFix, Evidence: s.Evidence}, true
	}
	if j := slices.IndexFunc(items.Moved, func(mv Moved) bool { return mv.Subject == key && !similar(mv.Signature, sig) }); j >= 0 {
		mv := items.Moved[j]
		return Text{Text: "when " + sig + ": " + mv.Remedy, Confidence: confidenceFix, Evidence: mv.Evidence}, true
	}
	return Text{}, false
}

// failureItem names the evidence entries that keep a failure of a call
// that is no check (Items.Failures) until a later success makes it a known
// fix; their text is the call and the signature, joined by failureSep.
const (
	failureItem = "failure"
	failureSep  = "\n"
)

var priorityRank = map[medallion.Priority]int{medallion.PriorityLow: 0, medallion.PriorityMedium: 1, medallion.PriorityHigh: 2}

// questions closes the questions the episode answered (the summary says
// "resolves Q-00N") and adds or refreshes the open ones.
func (a *applier) questions(qs []Question, closed []string, userSpoke bool) {
	m := a.m
	if userSpoke {
		// The user spoke after the agent's question: answered.
		m.OpenQuestions = slices.DeleteFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool {
			return strings.HasPrefix(q.Question, askedPrefix)
		})
	}
	m.OpenQuestions = slices.DeleteFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool {
		i := slices.IndexFunc(closed, func(c string) bool { return similar(c, q.Question) })
		if i < 0 {
			return false
		}
		done := strings.TrimPrefix(closed[i], "Unresolved: ")
		if done != closed[i] {
			done = "fixed " + done
		}
		a.notes = append(a.notes, "Done: "+done+" (resolves "+q.ID+").")
		return true
	})
	for _, q := range qs {
		if i := slices.IndexFunc(m.OpenQuestions, func(e medallion.OpenQuestion) bool { return similar(e.Question, q.Question) }); i >= 0 {
			// The latest todo list says how urgent it is now.
			m.OpenQuestions[i].Priority = q.Priority
			if len(q.BlockedOn) > 0 {
				m.OpenQuestions[i].BlockedOn = slices.Clone(q.BlockedOn)
			}
			a.record(m.OpenQuestions[i].ID, "", q.Evidence)
			continue
		}
		id := a.next("Q")
		m.OpenQuestions = append(m.OpenQuestions, medallion.OpenQuestion{
			ID: id, Question: q.Question, BlockedOn: slices.Clone(q.BlockedOn), Priority: q.Priority,
		})
		a.record(id, "", q.Evidence)
	}
	// Over the cap, the lowest priority go first; among equals the oldest.
	for len(m.OpenQuestions) > MaxOpenQuestions {
		drop := 0
		for i, q := range m.OpenQuestions {
			if priorityRank[q.Priority] < priorityRank[m.OpenQuestions[drop].Priority] {
				drop = i
			}
		}
		m.OpenQuestions = slices.Delete(m.OpenQuestions, drop, drop+1)
	}
}

// knowledge widens the knowledge bounds to the episode's event times.
func knowledge(m *medallion.Medallion, items Items) {
	if items.MinTime.IsZero() {
		return
	}
	if t, err := medallion.ParseTime(m.Meta.KnowledgeMinTS); err != nil || items.MinTime.Before(t) {
		m.Meta.KnowledgeMinTS = medallion.FormatTime(items.MinTime)
	}
	if t, err := medallion.ParseTime(m.Meta.KnowledgeMaxTS); err != nil || items.MaxTime.After(t) {
		m.Meta.KnowledgeMaxTS = medallion.FormatTime(items.MaxTime)
	}
}

// mergeTexts appends new texts, moving a text seen again to the end (the
// most recent), and drops the oldest over the cap.
func (a *applier) mergeTexts(old []string, add []Text, limit int) []string {
	out := slices.Clone(old)
	for _, t := range add {
		tn := a.sim(t.Text)
		if i := slices.IndexFunc(out, func(s string) bool { return a.sim(s).similar(tn) }); i >= 0 {
			s := out[i]
			out = append(slices.Delete(out, i, i+1), s)
			continue
		}
		out = append(out, t.Text)
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}

// mergeEntryPoints puts this episode's most used files first, then the
// earlier ones.
func mergeEntryPoints(old, add []string) []string {
	out := slices.Clone(add)
	for _, p := range old {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) > MaxEntryPoints {
		out = out[:MaxEntryPoints]
	}
	return out
}

func applySubsystems(m *medallion.Medallion, subs []Subsystem) {
	for _, s := range subs {
		i := slices.IndexFunc(m.Summary.Subsystems, func(e medallion.Subsystem) bool { return e.Name == s.Name })
		ns := medallion.Subsystem{Name: s.Name, Status: s.Status, Notes: s.Notes}
		if i >= 0 {
			old := m.Summary.Subsystems[i]
			if s.Status == medallion.SubsystemUnknown {
				// Reading a directory says nothing new about its state.
				ns.Status = old.Status
			}
			m.Summary.Subsystems = slices.Delete(m.Summary.Subsystems, i, i+1)
		}
		// Most recently touched last.
		m.Summary.Subsystems = append(m.Summary.Subsystems, ns)
	}
	// Over the cap, the oldest not in progress go first, then the oldest.
	for len(m.Summary.Subsystems) > MaxSubsystems {
		drop := slices.IndexFunc(m.Summary.Subsystems, func(s medallion.Subsystem) bool {
			return s.Status != medallion.SubsystemInProgress
		})
		if drop < 0 {
			drop = 0
		}
		m.Summary.Subsystems = slices.Delete(m.Summary.Subsystems, drop, drop+1)
	}
}

// summary writes summary.high_level from the episode's progress (the
// agent's final report, completed todos, the latest compaction summary,
// what was resolved or superseded) and the medallion's current state, most
// recent first, within MaxSummaryBytes. Each part is its own line, so that
// a load shows it as one. Counts of the medallion's items and its scope are
// left out: a load already lists the items under their headings and names
// the scope in its preamble, and every byte they took was a byte of report
// the next session could not read. The scope stands in only when there is
// nothing else to say.
func summary(m *medallion.Medallion, items Items, notes []string) string {
	var parts []string
	if len(items.Current) > 0 {
		parts = append(parts, "In progress: "+strings.Join(items.Current, "; ")+".")
	}
	for i, r := range items.Report {
		if i == 0 {
			r = "Latest report: " + r
		}
		parts = append(parts, r)
	}
	parts = append(parts, notes...)
	if len(items.Progress) > 0 {
		parts = append(parts, "Recently completed: "+strings.Join(items.Progress, "; ")+".")
	}
	if items.Compaction != "" {
		parts = append(parts, "Progress so far: "+items.Compaction)
	}
	var active []string
	for _, s := range m.Summary.Subsystems {
		if s.Status == medallion.SubsystemInProgress {
			active = append(active, s.Name)
		}
	}
	if len(active) > 0 {
		parts = append(parts, "Being changed: "+strings.Join(active, ", ")+".")
	}
	if len(parts) == 0 {
		scope := strings.Join(m.Scope.GraphNodes, ", ")
		if scope == "" {
			scope = strings.Join(m.Scope.Tags, ", ")
		}
		parts = append(parts, "Scope: "+scope+".")
	}
	// Whole lines of prose are kept while they fit, the last one clipped.
	room := MaxSummaryBytes
	var kept []string
	for _, p := range parts {
		p = strings.Join(strings.Fields(p), " ")
		if room <= len("…")+1 {
			break
		}
		if len(p)+1 > room {
			p = clip(p, room-1)
		}
		kept = append(kept, p)
		room -= len(p) + 1
	}
	return strings.Join(kept, "\n")
}
