package medallion

// EachText calls fn with a pointer to every free-text field of m: what a
// person or a model wrote (summary, subsystems, decisions, questions,
// affordances, evidence text), where a secret pasted into a session can
// end up. Identifiers, timestamps, scope and evidence ids are left out:
// they are structure, and indexes and references depend on them.
func (m *Medallion) EachText(fn func(*string)) {
	fn(&m.Summary.HighLevel)
	for i := range m.Summary.Subsystems {
		fn(&m.Summary.Subsystems[i].Name)
		fn(&m.Summary.Subsystems[i].Notes)
	}
	for i := range m.Decisions {
		fn(&m.Decisions[i].Statement)
		fn(&m.Decisions[i].Rationale)
	}
	for i := range m.OpenQuestions {
		fn(&m.OpenQuestions[i].Question)
		for j := range m.OpenQuestions[i].BlockedOn {
			fn(&m.OpenQuestions[i].BlockedOn[j])
		}
	}
	for _, list := range [][]string{m.Affordances.RecommendedEntryPoints, m.Affordances.AvoidRepeating, m.Affordances.Invariants} {
		for i := range list {
			fn(&list[i])
		}
	}
	for i := range m.Evidence {
		fn(&m.Evidence[i].Text)
	}
	// A review entry names a list item by its text: redacted the same way
	// as the item, it still names it.
	for i := range m.Review {
		fn(&m.Review[i].Text)
	}
	// So does a pin.
	for i := range m.Pinned {
		fn(&m.Pinned[i].Text)
	}
}
