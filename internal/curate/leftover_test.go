package curate

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLeftOver: the agent's own list of what is left, at the end of its
// final message, becomes open work; a newer list replaces it. Our own
// fixtures.
func TestLeftOver(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"a heading and a list",
			"Done: the importer reads the data dir.\n\n**Next steps:**\n1. Document the data dir in the README\n2. Add a test for a missing file\n",
			[]string{"Document the data dir in the README", "Add a test for a missing file"}},
		{"a markdown heading, bullets, text after",
			"## Known limitations\n\n- Retries are not persisted across restarts\n- ok\n\nThat is all for now.",
			[]string{"Retries are not persisted across restarts"}},
		{"inline",
			"All tests pass.\nNext step: run the migration against staging before the release.",
			[]string{"run the migration against staging before the release."}},
		{"no list", "All tests pass and the branch is pushed.", nil},
		{"a mention is no list", "The next steps are up to you, the plan covers them.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := leftItems(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("leftItems = %q, want %q", got, tt.want)
			}
		})
	}

	scope := []string{"repo:importer"}
	var b builder
	b.prompt("make the importer read from the configured data dir")
	b.say("Done.\n\nNext steps:\n- Document the data dir in the README\n- Add a test for a missing file")
	m := Apply(nil, scope, Extract(b.episode()), t0)
	var b2 builder
	b2.prompt("go on with the README")
	b2.say("The README documents the data dir now.\n\nRemaining:\n- Add a test for a missing file")
	for j := range b2.events {
		b2.events[j].Event.ID = "ep2-" + b2.events[j].Event.ID
	}
	m = Apply(m, scope, Extract(b2.episode()), t0.Add(time.Minute))
	var left []string
	for _, q := range m.OpenQuestions {
		if strings.HasPrefix(q.Question, leftPrefix) {
			left = append(left, q.Question)
		}
	}
	if want := []string{leftPrefix + "Add a test for a missing file"}; !slices.Equal(left, want) {
		t.Errorf("left for later = %q, want %q", left, want)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
}
