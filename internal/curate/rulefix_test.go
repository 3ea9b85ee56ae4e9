package curate

import (
	"slices"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

// TestFixThatBreaksARule: a known fix that edits what the user's rule
// forbids editing is dropped, whether the rule came first or later; other
// fixes stay. Our own fixtures.
func TestFixThatBreaksARule(t *testing.T) {
	generated := "when --- FAIL: TestExport (0.00s): edit internal/pb/score.pb.go, internal/midi/export.go (TempoBpm uint32), then `go test ./internal/midi/...` succeeds"
	vendored := "when undefined: yaml.Node: edit vendor/gopkg.in/yaml.v3/node.go, then `go build ./...` succeeds"
	fine := "when undefined: midi.Tempo: edit internal/midi/tempo.go, then `go build ./...` succeeds"
	rules := []string{"no, never edit generated files; change the .proto and run make gen instead", "don't modify anything in vendor"}
	for _, tt := range []struct {
		fix  string
		want bool
	}{{generated, true}, {vendored, true}, {fine, false}, {"don't retry `make deploy` unchanged: it failed 2 times with 403", false}} {
		if got := breaksRule(tt.fix, rules); got != tt.want {
			t.Errorf("breaksRule(%q) = %v, want %v", tt.fix, got, tt.want)
		}
	}
	if got := breaksRule(generated, []string{"always edit the generated files by hand"}); got {
		t.Error("a rule that asks for the edit forbids nothing")
	}

	// Through Apply: the rule arrives after the fix.
	m := Apply(nil, []string{"repo:muse"}, Items{AvoidRepeating: []Text{{Text: generated}, {Text: fine}}}, t0)
	m = Apply(m, []string{"repo:muse"}, Items{Invariants: []Text{{Text: rules[0]}}}, t0)
	if got, want := m.Affordances.AvoidRepeating, []string{fine}; !slices.Equal(got, want) {
		t.Errorf("known fixes %q, want %q", got, want)
	}
}

// TestPinnedNotSuperseded: a newer statement that contradicts a pinned
// decision neither removes it nor says it supersedes it.
func TestPinnedNotSuperseded(t *testing.T) {
	scope := []string{"repo:muse"}
	m := Apply(nil, scope, Items{Decisions: []Decision{{Statement: "Prefer bbolt for storage", Rationale: "user request", Confidence: 0.6}}}, t0)
	m.Pinned = append(m.Pinned, medallion.Pin{Item: m.Decisions[0].ID})
	m = Apply(m, scope, Items{Decisions: []Decision{{Statement: "Prefer Badger instead of bbolt for storage", Rationale: "user request", Confidence: 0.6}}}, t0)
	if len(m.Decisions) != 2 {
		t.Fatalf("decisions %+v, want the pinned one and the new one", m.Decisions)
	}
	for _, d := range m.Decisions {
		if strings.Contains(d.Rationale, "supersedes") {
			t.Errorf("%s claims to supersede the pinned decision: %q", d.ID, d.Rationale)
		}
	}
	if strings.Contains(m.Summary.HighLevel, "supersedes") {
		t.Errorf("summary %q", m.Summary.HighLevel)
	}
}
