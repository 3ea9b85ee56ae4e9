package curate

import (
	"fmt"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// realisticEpisode builds a 1,000-event episode shaped like a coding
// session: prompts with rules, reads and edits across a few packages,
// failing and passing test runs, a blocking hook, todo updates and the
// agent's narration.
func realisticEpisode() *builder { return realisticEpisodeOf(1000) }

// realisticEpisodeOf is realisticEpisode with n events.
func realisticEpisodeOf(n int) *builder {
	var b builder
	for i := 0; len(b.events) < n; i++ {
		pkg := fmt.Sprintf("/repo/internal/pkg%d", i%7)
		switch i % 10 {
		case 0:
			b.prompt(fmt.Sprintf("Fix the flaky test in pkg%d. Don't touch the generated files, and keep the public API stable.", i%7))
		case 1, 2, 3:
			b.say("Let me look at the code to understand how this works before changing anything.")
			b.run(fmt.Sprintf("r%d", i), "Read", "", []string{pkg + "/a.go"}, true, "package x\n\nfunc A() {}\n")
		case 4:
			b.run(fmt.Sprintf("t%d", i), "Bash", "go test ./internal/...", nil, false,
				"--- FAIL: TestA (0.00s)\n    a_test.go:12: got 1, want 2\nFAIL\nexit status 1")
		case 5:
			b.run(fmt.Sprintf("e%d", i), "Edit", "", []string{pkg + "/a.go"}, true, "The file has been updated.")
		case 6:
			b.run(fmt.Sprintf("t%d", i), "Bash", "go test ./internal/...", nil, true, "ok  \tgithub.com/acme/x\t0.01s")
		case 7:
			b.todos(
				transcript.Todo{Content: fmt.Sprintf("Fix pkg%d", i%7), Status: "completed"},
				transcript.Todo{Content: fmt.Sprintf("Fix pkg%d", (i+1)%7), Status: "in_progress"},
				transcript.Todo{Content: "Update the changelog", Status: "pending"},
			)
		case 8:
			b.add(transcript.Event{Kind: transcript.KindUserPrompt, Subtype: "hook", Boilerplate: true,
				Text: "Stop hook feedback:\n# Quality checks\nCannot exit with unstaged changes"})
			b.run(fmt.Sprintf("g%d", i), "Bash", "git commit -am wip", nil, true, "[main abc] wip")
		case 9:
			b.add(transcript.Event{Kind: transcript.KindReasoning, Text: "The test depends on map order; sort the keys."})
			b.say("Fixed: the test sorted the keys. Want me to look at the next package?")
		}
	}
	b.events = b.events[:n]
	return &b
}

// BenchmarkExtractLength measures Tier 0's extraction as an episode grows
// (a backfill checkpoints whole files at once): its cost per event should
// not grow with the episode's length.
func BenchmarkExtractLength(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		ep := realisticEpisodeOf(n).episode()
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			for b.Loop() {
				Extract(ep)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/event")
		})
	}
}

// BenchmarkCurate measures Tier 0 curation of a 1,000-event episode:
// Extract, then Apply onto the medallion of earlier checkpoints (target:
// at most 20 ms).
func BenchmarkCurate(b *testing.B) {
	ep := realisticEpisode().episode()
	existing := Apply(nil, ep.Scope, Extract(ep), t0)
	existing.Meta.Version = 1
	b.ReportAllocs()
	b.ResetTimer()
	var m *medallion.Medallion
	for b.Loop() {
		m = Apply(existing, ep.Scope, Extract(ep), t0)
	}
	if err := m.Validate(); err != nil {
		b.Fatal(err)
	}
}
