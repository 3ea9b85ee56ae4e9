package curate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
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
// and questions seen again keep their ids; decisions gain confidence. The
// result passes medallion.Validate.
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

	applyDecisions(m, items.Decisions)
	applyQuestions(m, items.OpenQuestions, items.Closed)
	m.Affordances.AvoidRepeating = mergeTexts(m.Affordances.AvoidRepeating, items.AvoidRepeating, MaxAvoidRepeating)
	m.Affordances.Invariants = mergeTexts(m.Affordances.Invariants, items.Invariants, MaxInvariants)
	m.Affordances.RecommendedEntryPoints = mergeEntryPoints(m.Affordances.RecommendedEntryPoints, items.EntryPoints)
	applySubsystems(m, items.Subsystems)
	m.Summary.HighLevel = summary(m, items)
	m.Normalize()
	return m
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

// nextID returns the next free "<prefix>-NNN" after the highest in ids.
func nextID(prefix string, ids []string) string {
	high := 0
	for _, id := range ids {
		if n, err := strconv.Atoi(strings.TrimPrefix(id, prefix+"-")); err == nil && strings.HasPrefix(id, prefix+"-") && n > high {
			high = n
		}
	}
	return fmt.Sprintf("%s-%03d", prefix, high+1)
}

func applyDecisions(m *medallion.Medallion, ds []Decision) {
	for _, d := range ds {
		i := slices.IndexFunc(m.Decisions, func(e medallion.Decision) bool { return similar(e.Statement, d.Statement) })
		if i >= 0 {
			m.Decisions[i].Confidence = min(confidenceMax, max(m.Decisions[i].Confidence, 0)+confidenceStep)
			continue
		}
		ids := make([]string, len(m.Decisions))
		for k, e := range m.Decisions {
			ids[k] = e.ID
		}
		m.Decisions = append(m.Decisions, medallion.Decision{
			ID: nextID("D", ids), Statement: d.Statement, Rationale: d.Rationale, Confidence: d.Confidence,
		})
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

var priorityRank = map[medallion.Priority]int{medallion.PriorityLow: 0, medallion.PriorityMedium: 1, medallion.PriorityHigh: 2}

func applyQuestions(m *medallion.Medallion, qs []Question, closed []string) {
	m.OpenQuestions = slices.DeleteFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool {
		return slices.ContainsFunc(closed, func(c string) bool { return similar(c, q.Question) })
	})
	for _, q := range qs {
		i := slices.IndexFunc(m.OpenQuestions, func(e medallion.OpenQuestion) bool { return similar(e.Question, q.Question) })
		if i >= 0 {
			// The latest todo list says how urgent it is now.
			m.OpenQuestions[i].Priority = q.Priority
			if len(q.BlockedOn) > 0 {
				m.OpenQuestions[i].BlockedOn = slices.Clone(q.BlockedOn)
			}
			continue
		}
		ids := make([]string, len(m.OpenQuestions))
		for k, e := range m.OpenQuestions {
			ids[k] = e.ID
		}
		m.OpenQuestions = append(m.OpenQuestions, medallion.OpenQuestion{
			ID: nextID("Q", ids), Question: q.Question, BlockedOn: slices.Clone(q.BlockedOn), Priority: q.Priority,
		})
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

// mergeTexts appends new texts, moving a text seen again to the end (the
// most recent), and drops the oldest over the cap.
func mergeTexts(old []string, add []Text, limit int) []string {
	out := slices.Clone(old)
	for _, t := range add {
		if i := slices.IndexFunc(out, func(s string) bool { return similar(s, t.Text) }); i >= 0 {
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

// summary writes summary.high_level from the scope, the episode's progress
// and the medallion's current state, within MaxSummaryBytes.
func summary(m *medallion.Medallion, items Items) string {
	var parts []string
	scope := strings.Join(m.Scope.GraphNodes, ", ")
	if scope == "" {
		scope = strings.Join(m.Scope.Tags, ", ")
	}
	parts = append(parts, "Scope: "+scope+".")
	if len(items.Progress) > 0 {
		parts = append(parts, "Recently completed: "+strings.Join(items.Progress, "; ")+".")
	}
	if len(items.Current) > 0 {
		parts = append(parts, "In progress: "+strings.Join(items.Current, "; ")+".")
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
	parts = append(parts, fmt.Sprintf("%d open questions, %d decisions, %d known fixes, %d invariants.",
		len(m.OpenQuestions), len(m.Decisions), len(m.Affordances.AvoidRepeating), len(m.Affordances.Invariants)))
	// The fixed counts go last but must survive the cut: clip the prose
	// before them.
	tail := parts[len(parts)-1]
	head := strings.Join(parts[:len(parts)-1], " ")
	return clip(head, MaxSummaryBytes-len(tail)-1) + " " + tail
}
