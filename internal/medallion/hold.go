package medallion

import (
	"encoding/hex"
	"reflect"
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/shasum"
)

// ItemSubsystem names a subsystem (by its name) in Pin.Item and
// Forgotten.Item; the other names are those of Review.Item.
const ItemSubsystem = "subsystem"

// ItemLists names every list whose items are addressed by position
// ("subsystem:2"): the affordance lists and the subsystems.
var ItemLists = append(slices.Clone(ReviewLists), ItemSubsystem)

// MaxPinned and MaxForgotten bound Medallion.Pinned and Medallion.Forgotten;
// the oldest forgotten entries go first.
const (
	MaxPinned    = 100
	MaxForgotten = 200
)

// Pin names one item the user pinned: no curator changes or removes it,
// and the load never leaves it out to fit its budget. Item is a decision
// or question id, or a list name (ReviewLists, ItemSubsystem) or
// ItemSummary with Text the item's text (a subsystem's name).
type Pin struct {
	Item string `json:"item" jsonschema:"D-001, Q-002, or one of invariant, avoid_repeating, entry_point, subsystem, summary"`
	Text string `json:"text,omitempty" jsonschema:"the item text for list items, a subsystem's name, the summary; empty for decisions and questions"`
}

// Forgotten is an item the user removed ("medallionctl forget"). It keeps
// no text, only a fingerprint of it and the events it was taken from, so
// that no curator brings the item back from the same evidence while the
// medallion does not repeat what the user wanted gone.
type Forgotten struct {
	Kind        string   `json:"kind" jsonschema:"what the item was: decision, open_question, invariant, avoid_repeating, entry_point, subsystem or summary"`
	Fingerprint string   `json:"fingerprint" jsonschema:"Fingerprint of the item's text"`
	EventIDs    []string `json:"event_ids,omitempty" jsonschema:"the events the item was taken from"`
}

// The kinds of item, as Forgotten.Kind (and the API) name them: these two,
// the ItemLists and ItemSummary.
const (
	KindDecision = "decision"
	KindQuestion = "open_question"
)

// Fingerprint identifies an item's text, case and spacing aside: the same
// words extracted again from the same events give the same fingerprint.
func Fingerprint(text string) string {
	norm := strings.ToLower(strings.Join(strings.Fields(text), " "))
	h := shasum.Sum256([]byte(norm))
	return hex.EncodeToString(h[:8])
}

// byID reports whether an item name is a decision or question id rather
// than a list name (or the summary).
func byID(item string) bool { return item != ItemSummary && !slices.Contains(ItemLists, item) }

// PinIndex returns the index in m.Pinned of an item's pin, or -1. item and
// text name it as in Pin (text is ignored for ids).
func (m *Medallion) PinIndex(item, text string) int {
	text = strings.TrimSpace(text)
	return slices.IndexFunc(m.Pinned, func(p Pin) bool {
		return p.Item == item && (byID(item) || strings.TrimSpace(p.Text) == text)
	})
}

// IsPinned reports whether the user pinned the item named by item and text.
func (m *Medallion) IsPinned(item, text string) bool { return m.PinIndex(item, text) >= 0 }

// Forget records that the user removed an item of kind (see Forgotten)
// named item (its id, or its list name) with text: the text's fingerprint
// and the events of the item's evidence. A pin on it goes.
func (m *Medallion) Forget(kind, item, text string) {
	m.remember(Forgotten{Kind: kind, Fingerprint: Fingerprint(text), EventIDs: m.EventsOf(item, text)})
	if i := m.PinIndex(item, text); i >= 0 {
		m.Pinned = slices.Delete(m.Pinned, i, i+1)
	}
}

// ForgetWording records that the user replaced the text of an item of
// kind: the old words are forgotten, the item (and its evidence) is not,
// so a curator does not extract the old wording again beside the user's.
func (m *Medallion) ForgetWording(kind, text string) {
	m.remember(Forgotten{Kind: kind, Fingerprint: Fingerprint(text)})
}

func (m *Medallion) remember(f Forgotten) {
	m.Forgotten = append(m.Forgotten, f)
	if n := len(m.Forgotten); n > MaxForgotten {
		m.Forgotten = slices.Delete(m.Forgotten, 0, n-MaxForgotten)
	}
}

// EventsOf returns the event ids of an item's evidence entries, without
// repeats: by id for decisions and questions, by list name and text for
// the rest.
func (m *Medallion) EventsOf(item, text string) []string {
	var out []string
	for _, e := range m.Evidence {
		if e.Item != item || (!byID(item) && strings.TrimSpace(e.Text) != strings.TrimSpace(text)) {
			continue
		}
		for _, id := range e.EventIDs {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// Unforget drops what Forget recorded for text, when the user writes that
// text into an item again: their own words are no longer forgotten.
func (m *Medallion) Unforget(text string) {
	fp := Fingerprint(text)
	m.Forgotten = slices.DeleteFunc(m.Forgotten, func(f Forgotten) bool { return f.Fingerprint == fp })
}

// WasForgotten reports whether an item of kind (see Forgotten) with this
// text, taken from these events, is one the user forgot: its text has a
// forgotten fingerprint, or it was taken from nothing but the events of a
// forgotten item of the same kind.
func (m *Medallion) WasForgotten(kind, text string, events []string) bool {
	fp := Fingerprint(text)
	for _, f := range m.Forgotten {
		if f.Fingerprint == fp {
			return true
		}
		if len(events) > 0 && f.Kind == kind && len(f.EventIDs) > 0 &&
			!slices.ContainsFunc(events, func(id string) bool { return !slices.Contains(f.EventIDs, id) }) {
			return true
		}
	}
	return false
}

// KeepUserHolds makes next, what a curator made of prev (nil for a new
// medallion), keep what the user said about prev's items: every item
// pinned in prev is in next as it is in prev (put back where a curator
// removed it, its old self where a curator changed it), and every item new
// in next that the user forgot is taken out again, with its evidence and
// review entries. next carries prev's pins and forgotten entries. It
// returns how many items it put back and took out.
func KeepUserHolds(prev, next *Medallion) (restored, removed int) {
	if prev == nil {
		return 0, 0
	}
	next.Pinned = slices.Clone(prev.Pinned)
	next.Forgotten = slices.Clone(prev.Forgotten)
	for _, p := range prev.Pinned {
		if restorePin(prev, next, p) {
			restored++
		}
	}
	removed += dropForgotten(next, KindDecision, &next.Decisions, prev.Decisions,
		func(d Decision) (string, string) { return d.ID, d.Statement })
	removed += dropForgotten(next, KindQuestion, &next.OpenQuestions, prev.OpenQuestions,
		func(q OpenQuestion) (string, string) { return q.ID, q.Question })
	removed += dropForgotten(next, ItemSubsystem, &next.Summary.Subsystems, prev.Summary.Subsystems,
		func(s Subsystem) (string, string) { return ItemSubsystem, s.Name })
	for _, name := range ReviewLists {
		removed += dropForgotten(next, name, next.List(name), *prev.List(name),
			func(s string) (string, string) { return name, s })
	}
	if h := next.Summary.HighLevel; h != prev.Summary.HighLevel && strings.TrimSpace(h) != "" && next.WasForgotten(ItemSummary, h, nil) {
		next.Summary.HighLevel = prev.Summary.HighLevel
		removed++
	}
	return restored, removed
}

// restorePin puts prev's pinned item p back into next as it is in prev,
// and reports whether next had lost or changed it.
func restorePin(prev, next *Medallion, p Pin) bool {
	switch {
	case p.Item == ItemSummary:
		if next.Summary.HighLevel == prev.Summary.HighLevel {
			return false
		}
		next.Summary.HighLevel = prev.Summary.HighLevel
		return true
	case p.Item == ItemSubsystem:
		same := func(s Subsystem) bool { return strings.TrimSpace(s.Name) == strings.TrimSpace(p.Text) }
		return restore(&next.Summary.Subsystems, prev.Summary.Subsystems, same)
	case slices.Contains(ReviewLists, p.Item):
		same := func(s string) bool { return strings.TrimSpace(s) == strings.TrimSpace(p.Text) }
		return restore(next.List(p.Item), *prev.List(p.Item), same)
	}
	if restore(&next.Decisions, prev.Decisions, func(d Decision) bool { return d.ID == p.Item }) {
		return true
	}
	return restore(&next.OpenQuestions, prev.OpenQuestions, func(q OpenQuestion) bool { return q.ID == p.Item })
}

// restore puts the element of old that is picks back into cur as old has
// it: over cur's changed copy, or at its old position (or the end) when
// cur lost it. It reports whether cur changed.
func restore[T any](cur *[]T, old []T, is func(T) bool) bool {
	i := slices.IndexFunc(old, is)
	if i < 0 {
		return false
	}
	if j := slices.IndexFunc(*cur, is); j >= 0 {
		if reflect.DeepEqual((*cur)[j], old[i]) {
			return false
		}
		(*cur)[j] = old[i]
		return true
	}
	*cur = slices.Insert(*cur, min(i, len(*cur)), old[i])
	return true
}

// dropForgotten takes out of *cur the items that old did not hold and
// that the user forgot (WasForgotten), with their evidence and review
// entries; name gives an item's evidence name and text. It returns how
// many it took out.
func dropForgotten[T any](m *Medallion, kind string, cur *[]T, old []T, name func(T) (string, string)) int {
	n := 0
	*cur = slices.DeleteFunc(*cur, func(v T) bool {
		item, text := name(v)
		if slices.ContainsFunc(old, func(o T) bool { oi, ot := name(o); return oi == item && ot == text }) {
			return false
		}
		if !m.WasForgotten(kind, text, m.EventsOf(item, text)) {
			return false
		}
		m.DropTraces(item, text)
		n++
		return true
	})
	return n
}

// DropTraces removes the evidence and review entries of an item (named as
// in Pin) that left m.
func (m *Medallion) DropTraces(item, text string) {
	is := func(i, t string) bool {
		return i == item && (byID(item) || strings.TrimSpace(t) == strings.TrimSpace(text))
	}
	m.Evidence = slices.DeleteFunc(m.Evidence, func(e Evidence) bool { return is(e.Item, e.Text) })
	m.Review = slices.DeleteFunc(m.Review, func(r Review) bool { return is(r.Item, r.Text) })
}
