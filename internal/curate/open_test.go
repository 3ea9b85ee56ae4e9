package curate

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOpenWorkIsTheProjects: an error left failing by the project's own
// check or code is open work; one of a machine tool (docker) or a
// browser tool is not, yet a later checkpoint's success of the same call
// still makes it a known fix. A line of what passed never names the
// failure. The fixtures are our own.
func TestOpenWorkIsTheProjects(t *testing.T) {
	scope := []string{"repo:shop"}
	var b builder
	b.run("t1", "Bash", "pnpm test", nil, false, "✔ cart keeps errors in-tree\n✖ checkout totals\nAssertionError: expected 3 to equal 4")
	b.run("d1", "Bash", "docker compose up -d", nil, false, "Cannot connect to the Docker daemon at unix:///var/run/docker.sock")
	b.run("p1", "mcp__playwright__browser_click", "", nil, false, "### Error\n- Console: 2 errors, 0 warnings")
	m := Apply(nil, scope, Extract(b.episode()), t0)

	var open []string
	for _, q := range m.OpenQuestions {
		open = append(open, q.Question)
	}
	if len(open) != 1 || strings.Contains(open[0], "✔") || !strings.Contains(open[0], "expected 3 to equal 4") {
		t.Fatalf("open questions %q, want only the failing test, named by its failure", open)
	}

	// The next checkpoint: docker comes up.
	var b2 builder
	b2.run("d2", "Bash", "docker compose up -d", nil, true, "Container shop-db Started")
	for j := range b2.events {
		b2.events[j].Event.ID = "ep2-" + b2.events[j].Event.ID
	}
	m = Apply(m, scope, Extract(b2.episode()), t0.Add(time.Minute))
	if !slices.ContainsFunc(m.Affordances.AvoidRepeating, func(s string) bool {
		return strings.Contains(s, "Cannot connect to the Docker daemon") && strings.Contains(s, "docker compose")
	}) {
		t.Errorf("known fixes %q lack docker's", m.Affordances.AvoidRepeating)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
}
