package curate

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRepeatedPatterns: an attempt failing the same way twice, never
// fixed, is a dead end; a check run three times is a convention.
func TestRepeatedPatterns(t *testing.T) {
	var b builder
	b.prompt("Make the importer tests pass.")
	b.run("c1", "Bash", "go test ./internal/importer/...", nil, false, "--- FAIL: TestImport (0.00s)")
	b.run("c2", "Bash", "go test ./...", nil, false, "--- FAIL: TestImport (0.00s)")
	b.run("c3", "Bash", "curl -s http://localhost:9/health", nil, false, "curl: (7) Failed to connect")
	b.run("c4", "Bash", "make deploy", nil, false, "error: cluster unreachable")
	b.run("c5", "Bash", "make deploy", nil, false, "error: cluster unreachable")
	b.run("c6", "Bash", "go test ./...", nil, true, "ok")
	it := Extract(b.episode())
	wantAvoid := "don't retry `make deploy` unchanged: it failed 2 times with error: cluster unreachable"
	if !slices.Contains(texts(it.AvoidRepeating), wantAvoid) {
		t.Errorf("avoid_repeating = %q, want it to hold %q", texts(it.AvoidRepeating), wantAvoid)
	}
	for _, a := range texts(it.AvoidRepeating) {
		if a != wantAvoid && len(a) > 10 && a[:10] == "don't retr" {
			t.Errorf("a failure later fixed or tried once is no dead end: %q", a)
		}
	}
	if len(it.Invariants) != 0 {
		t.Errorf("one episode made conventions: %q", texts(it.Invariants))
	}
	if len(it.Checks) != 1 || it.Checks[0].Pattern != "`go test`" || len(it.Checks[0].Evidence.EventIDs) != 3 {
		t.Errorf("checks = %+v, want `go test` seen 3 times", it.Checks)
	}
}

// TestConventionAcrossCheckpoints: a check seen three times in a session,
// over checkpoints of a few events each, is named once in the summary, not
// as a rule; the runs are its evidence. A convention a medallion written
// before kept among its invariants is taken out.
func TestConventionAcrossCheckpoints(t *testing.T) {
	scope := []string{"repo:muse"}
	m := Apply(nil, scope, Items{}, t0)
	m.Affordances.Invariants = []string{conventionPrefix + "`make check`"}
	for i := range 4 {
		var b builder
		b.run(fmt.Sprintf("c%d", i), "Bash", "mix test test/a_test.exs", nil, true, "1 test, 0 failures")
		b.run(fmt.Sprintf("d%d", i), "Bash", "ls lib", nil, true, "a.ex")
		for j := range b.events {
			b.events[j].Event.ID = fmt.Sprintf("ep%d-%s", i, b.events[j].Event.ID)
		}
		m = Apply(m, scope, Extract(b.episode()), t0.Add(time.Duration(i)*time.Minute))
		if got := m.Affordances.Invariants; len(got) != 0 {
			t.Fatalf("after checkpoint %d: invariants %q, want none", i+1, got)
		}
		named := strings.Count(m.Summary.HighLevel, "Checked with `mix test`.")
		if want := min(1, max(0, i-1)); named != want {
			t.Fatalf("after checkpoint %d: summary %q names the check %d times, want %d", i+1, m.Summary.HighLevel, named, want)
		}
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
}
