package curate

import (
	"slices"
	"testing"
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
