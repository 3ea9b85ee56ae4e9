package curate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// builder makes events with sequential ids and times.
type builder struct{ events []episode.BufferedEvent }

func (b *builder) add(e transcript.Event) string {
	n := len(b.events) + 1
	e.ID = fmt.Sprintf("e%02d", n)
	e.SessionID = "s1"
	e.Agent = transcript.AgentClaudeCode
	e.CWD = "/repo"
	e.Time = t0.Add(time.Duration(n) * time.Second)
	b.events = append(b.events, episode.BufferedEvent{Seq: uint64(n), Event: e})
	return e.ID
}

func (b *builder) prompt(text string) string {
	return b.add(transcript.Event{Kind: transcript.KindUserPrompt, Text: text})
}

func (b *builder) say(text string) string {
	return b.add(transcript.Event{Kind: transcript.KindAssistantMessage, Text: text})
}

// run adds a call and its result.
func (b *builder) run(id, tool, command string, paths []string, ok bool, text string) string {
	b.add(transcript.Event{Kind: transcript.KindToolCall, Tool: tool, ToolCallID: id, Command: command, FilePaths: paths})
	return b.add(transcript.Event{Kind: transcript.KindToolResult, Tool: tool, ToolCallID: id, OK: ptr(ok), Text: text})
}

func (b *builder) todos(todos ...transcript.Todo) string {
	return b.add(transcript.Event{Kind: transcript.KindPlanUpdate, Subtype: transcript.SubtypeTodos, Tool: "TodoWrite", Todos: todos})
}

func (b *builder) episode() checkpoint.Episode {
	return checkpoint.Episode{SessionID: "s1", Scope: []string{"repo:muse"}, Agent: transcript.AgentClaudeCode,
		Events: b.events, Context: episode.Derive(b.events)}
}

func texts(ts []Text) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Text)
	}
	return out
}

func questions(qs []Question) []string {
	out := []string{}
	for _, q := range qs {
		out = append(out, string(q.Priority)+" "+q.Question)
	}
	return out
}

// longRules are the sentences of one prompt that restricts the work in
// each: together they fill more than maxDirectives items.
var longRules = []string{
	"Never write to the generated config file by hand, it is rebuilt from the schema on every release build.",
	"Don't add a new third-party dependency for this, the standard library has everything the parser needs.",
	"Keep the public API of the parse package unchanged, two other teams import it from their services.",
	"Avoid global state in the parser, the daemon runs one parser per watched folder at the same time.",
	"Only touch files under internal/parse and its tests, the rest of the tree belongs to another change.",
	"Do not skip the race detector when you run the tests, the last regression was a data race in the parser.",
	"Never log the raw input lines, they can hold the user's secrets before redaction has run on them.",
	"Always keep the error messages naming the file and the line, the users grep the daemon log for them.",
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name  string
		build func(b *builder)
		check func(t *testing.T, it Items)
	}{
		{
			// A prompt that spells out how the work must be done keeps
			// every rule, past the cap on the requests of one prompt.
			name: "every rule of a long prompt is kept",
			build: func(b *builder) {
				b.prompt(strings.Join(longRules, " "))
			},
			check: func(t *testing.T, it Items) {
				all := strings.Join(texts(it.Invariants), " ")
				for _, r := range longRules {
					if !strings.Contains(all, r) {
						t.Errorf("rule %q lost; invariants = %q", r, texts(it.Invariants))
					}
				}
			},
		},
		{
			// The prompt Claude Code writes for a plan approved into a
			// cleared context is the agent's plan, not the user's rules:
			// it is an approved plan, and its goal is a decision.
			name: "an approved plan handed to a new context is no rule",
			build: func(b *builder) {
				b.add(transcript.Event{Kind: transcript.KindUserPrompt, Subtype: transcript.SubtypeApprovedPlan, Boilerplate: true,
					Text: "Implement the following plan:\n\n# Plan: One source of truth for settings\n\n**Goal**: settings.toml becomes " +
						"the only source of truth; the env file is generated from it.\n\n## Changes\n\n- Never edit .env by hand after this.\n"})
			},
			check: func(t *testing.T, it Items) {
				if len(it.Invariants) != 0 {
					t.Errorf("the plan became rules: %q", texts(it.Invariants))
				}
				var got []string
				for _, d := range it.Decisions {
					got = append(got, d.Statement+" — "+d.Rationale)
				}
				want := []string{"Approved plan: Plan: One source of truth for settings — user-approved plan",
					"settings.toml becomes the only source of truth; the env file is generated from it. — user-approved plan"}
				if !slices.Equal(got, want) {
					t.Errorf("decisions = %q, want %q", got, want)
				}
			},
		},
		{
			// The same check failing then passing with nothing done in
			// between teaches nothing: no fix, and nothing left open.
			name: "a rerun that passes is no fix",
			build: func(b *builder) {
				b.run("c1", "Bash", "mix dialyzer", nil, false, "lib/a.ex:3:pattern_match The pattern can never match the type.")
				b.run("c2", "Bash", "mix dialyzer --format short", nil, true, "done (passed successfully)")
			},
			check: func(t *testing.T, it Items) {
				if len(it.AvoidRepeating)+len(it.OpenQuestions) != 0 {
					t.Errorf("avoid_repeating = %q, open = %q, want none", texts(it.AvoidRepeating), questions(it.OpenQuestions))
				}
			},
		},
		{
			// A browser console or a server log pasted into a prompt is
			// material, not the user's words; the user's own sentence
			// around it still counts.
			name: "a pasted console log decides nothing",
			build: func(b *builder) {
				b.prompt("The tree view breaks the page, switch it to the headless tree component.\n" +
					"[App] Not an active job, trying database\n" +
					"printWarning @ chunk-36jrqfj4.js:2338\n" +
					"reconcileChildrenArray @ chunk-36jrqfj4.js:11570\n" +
					"chunk-z33mq3ks.js:31200 Uncaught ContextError: useContext returned undefined for the provider\n" +
					"    at chunk-z33mq3ks.js:35565:56\n" +
					"…[70858 bytes elided]…\n")
			},
			check: func(t *testing.T, it Items) {
				var got []string
				for _, d := range it.Decisions {
					got = append(got, d.Statement)
				}
				want := []string{"The tree view breaks the page, switch it to the headless tree component."}
				if !slices.Equal(got, want) || len(it.Invariants) != 0 {
					t.Errorf("decisions = %q, invariants = %q, want only %q", got, texts(it.Invariants), want)
				}
			},
		},
		{
			name: "error then fix of the same command",
			build: func(b *builder) {
				b.run("c1", "Bash", "go test ./...", nil, false, "Exit code 1\n<tool_use_error>pkg/a.go:3: undefined: Foo</tool_use_error>\nFAIL")
				b.run("c2", "Edit", "", []string{"/repo/pkg/a.go"}, true, "ok")
				b.run("c3", "Bash", "go  test ./...", nil, true, "ok")
			},
			check: func(t *testing.T, it Items) {
				want := []string{"when pkg/a.go:3: undefined: Foo: edit pkg/a.go, then `go test ./...` succeeds"}
				if got := texts(it.AvoidRepeating); !slices.Equal(got, want) {
					t.Errorf("avoid_repeating = %q, want %q", got, want)
				}
				if ev := it.AvoidRepeating[0].Evidence; ev.SessionID != "s1" || !slices.Equal(ev.EventIDs, []string{"e02", "e06"}) {
					t.Errorf("evidence = %+v", ev)
				}
				if len(it.OpenQuestions) != 0 {
					t.Errorf("a fixed error left questions %q", questions(it.OpenQuestions))
				}
			},
		},
		{
			// A tool that is no shell command (a write, a browser tool)
			// failing and then succeeding is a step of the session: no
			// known fix, nothing open.
			name: "a tool's retry is no fix",
			build: func(b *builder) {
				b.run("c1", "Write", "", []string{"/repo/x.go"}, false, "permission denied")
				b.run("c2", "Write", "", []string{"/repo/x.go"}, true, "ok")
				b.run("c3", "mcp__playwright__browser_click", "", nil, false, "### Error\nTimeoutError: locator.click: Timeout 5000ms exceeded.")
			},
			check: func(t *testing.T, it Items) {
				if len(it.AvoidRepeating) != 0 || len(it.OpenQuestions) != 0 {
					t.Errorf("avoid_repeating = %q, open = %+v, want none", texts(it.AvoidRepeating), it.OpenQuestions)
				}
			},
		},
		{
			// Typoed paths, missed globs, edits whose old text was not
			// found and git's no-op refusals are retries, not knowledge.
			name: "trivial retries are no fixes",
			build: func(b *builder) {
				b.run("c1", "Read", "", []string{"/repo/x.go"}, false, "File does not exist.")
				b.run("c2", "Read", "", []string{"/repo/x.go"}, true, "package x")
				b.run("c3", "Bash", "ls /repo/nope", nil, false, "ls: cannot access '/repo/nope': No such file or directory")
				b.run("c4", "Edit", "", []string{"/repo/x.go"}, false, "String to replace not found in file.")
				// git refusing a no-op or a first push without upstream.
				b.run("c5", "Bash", "git commit -m wip", nil, false, "Exit code 1\nOn branch main\nnothing to commit, working tree clean")
				b.run("c6", "Bash", "git push", nil, false, "fatal: The current branch x has no upstream branch.")
				b.run("c7", "Bash", "git push -u origin x", nil, true, "branch 'x' set up to track 'origin/x'.")
			},
			check: func(t *testing.T, it Items) {
				if len(it.AvoidRepeating)+len(it.OpenQuestions) != 0 {
					t.Errorf("items from trivial retries: %q %q", texts(it.AvoidRepeating), questions(it.OpenQuestions))
				}
			},
		},
		{
			name: "failure hidden by a pipe, then fixed",
			build: func(b *builder) {
				b.run("c1", "Bash", "mix test | tail -5", nil, true, "Finished in 0.3 seconds\n11 tests, 4 failures")
				b.run("c2", "Edit", "", []string{"/repo/lib/a.ex"}, true, "ok")
				b.run("c3", "Bash", "mix test | tail -5", nil, true, "11 tests, 0 failures")
			},
			check: func(t *testing.T, it Items) {
				want := []string{"when 11 tests, 4 failures: edit lib/a.ex, then `mix test` succeeds"}
				if got := texts(it.AvoidRepeating); !slices.Equal(got, want) {
					t.Errorf("avoid_repeating = %q, want %q", got, want)
				}
			},
		},
		{
			name: "a blocking stop hook fixed by the work after it",
			build: func(b *builder) {
				b.add(transcript.Event{Kind: transcript.KindUserPrompt, Subtype: "hook", Boilerplate: true,
					Text: "Stop hook feedback:\n[stop.sh]: # Running Quality Checks...\n\nCannot exit with unstaged changes"})
				b.run("c1", "Bash", "git commit -am fix", nil, true, "[main 1234] fix")
			},
			check: func(t *testing.T, it Items) {
				want := []string{"when Cannot exit with unstaged changes: `git commit -am fix` succeeds"}
				if got := texts(it.AvoidRepeating); !slices.Equal(got, want) {
					t.Errorf("avoid_repeating = %q, want %q", got, want)
				}
			},
		},
		{
			name: "a written plan with no work after it stays open, as one item naming its open sections",
			build: func(b *builder) {
				b.prompt("Prepare a step by step plan, no code yet.")
				b.say("## Phase 1: Core\n### Step 1.1: Add the interface\n- [ ] write types\n- [ ] write tests\n## Phase 2: Claude\n### Step 2.1: Parse history\n- [ ] find /clear\n## Notes\nNothing to do here.")
			},
			check: func(t *testing.T, it Items) {
				want := []string{"medium Not started: Phase 1: Core — 1.1: Add the interface. Phase 2: Claude — 2.1: Parse history"}
				if got := questions(it.OpenQuestions); !slices.Equal(got, want) {
					t.Errorf("questions = %q, want %q", got, want)
				}
			},
		},
		{
			name: "the agent's last question stays open",
			build: func(b *builder) {
				b.prompt("Design the session lifecycle first, don't write code.")
				b.say("Here is the spec.\n\nReady to start with Phase 1, Step 1.1?")
			},
			check: func(t *testing.T, it Items) {
				want := []string{"high Asked the user: Ready to start with Phase 1, Step 1.1?"}
				if got := questions(it.OpenQuestions); !slices.Equal(got, want) || !it.UserSpoke {
					t.Errorf("questions = %q (user spoke %v), want %q", got, it.UserSpoke, want)
				}
			},
		},
		{
			name: "unresolved error",
			build: func(b *builder) {
				b.run("c1", "Bash", "make lint", nil, false, "\n  lint: 3 problems found  \n")
				b.run("c2", "Bash", "ls", nil, true, "a b")
			},
			check: func(t *testing.T, it Items) {
				if len(it.OpenQuestions) != 1 {
					t.Fatalf("questions = %q, want one", questions(it.OpenQuestions))
				}
				q := it.OpenQuestions[0]
				if q.Question != "Unresolved: lint: 3 problems found" || q.Priority != medallion.PriorityHigh ||
					!slices.Equal(q.BlockedOn, []string{"`make lint`"}) {
					t.Errorf("question = %+v", q)
				}
				if len(it.AvoidRepeating) != 0 {
					t.Errorf("avoid_repeating = %q", texts(it.AvoidRepeating))
				}
			},
		},
		{
			name: "a hook error is the project's, a stream error is not",
			build: func(b *builder) {
				b.add(transcript.Event{Kind: transcript.KindError, Subtype: "error", Text: "stream disconnected: rate limit reached"})
				b.add(transcript.Event{Kind: transcript.KindError, Subtype: transcript.SubtypeHookError, Text: "Fix the lint issues before stopping"})
			},
			check: func(t *testing.T, it Items) {
				want := []string{"high Unresolved: Fix the lint issues before stopping"}
				if got := questions(it.OpenQuestions); !slices.Equal(got, want) {
					t.Errorf("questions = %q, want %q", got, want)
				}
			},
		},
		{
			name: "a rejected call is no error",
			build: func(b *builder) {
				b.add(transcript.Event{Kind: transcript.KindToolCall, Tool: "Bash", ToolCallID: "c1", Command: "rm -rf /"})
				b.add(transcript.Event{Kind: transcript.KindToolResult, Tool: "Bash", ToolCallID: "c1", OK: ptr(false),
					Subtype: transcript.SubtypeRejected, Text: "The user doesn't want to proceed"})
			},
			check: func(t *testing.T, it Items) {
				if len(it.OpenQuestions) != 0 || len(it.AvoidRepeating) != 0 {
					t.Errorf("items from a rejection: %+v", it)
				}
			},
		},
		{
			name: "corrections and preferences in the user's words",
			build: func(b *builder) {
				b.prompt("Looks good. Never commit directly to main! Also I'd prefer table-driven tests here.")
				b.prompt("No, use the stream writer instead of buffering.")
				b.add(transcript.Event{Kind: transcript.KindUserPrompt, Boilerplate: true, Text: "Never mind this reminder; always use X"})
			},
			check: func(t *testing.T, it Items) {
				wantInv := []string{"Never commit directly to main!", "No, use the stream writer instead of buffering."}
				if got := texts(it.Invariants); !slices.Equal(got, wantInv) {
					t.Errorf("invariants = %q, want %q", got, wantInv)
				}
				if it.Invariants[0].Confidence != 0.9 || it.Invariants[0].Evidence.EventIDs[0] != "e01" {
					t.Errorf("invariant = %+v", it.Invariants[0])
				}
				if len(it.Decisions) != 1 || it.Decisions[0].Statement != "Also I'd prefer table-driven tests here." ||
					it.Decisions[0].Confidence != 0.7 {
					t.Errorf("decisions = %+v", it.Decisions)
				}
			},
		},
		{
			name: "chatter makes no item",
			build: func(b *builder) {
				b.prompt("Can you look at why the build is slow? I don't know why this fails sometimes.")
				// A question without its mark, a two-word request and a
				// courtesy are no decisions either.
				b.prompt("does it make sense to have it combined")
				b.prompt("check again")
				b.prompt("You can ask me questions if you need clarification.")
				b.say("Let me explore the repository. I think we should always be careful.")
				b.add(transcript.Event{Kind: transcript.KindReasoning, Text: "Never assume; prefer reading code."})
				b.run("c1", "Bash", "ls", nil, true, "README.md")
			},
			check: func(t *testing.T, it Items) {
				if len(it.Invariants)+len(it.Decisions)+len(it.OpenQuestions)+len(it.AvoidRepeating) != 0 {
					t.Errorf("chatter became items: %+v", it)
				}
			},
		},
		{
			name: "latest todo list and approved plan",
			build: func(b *builder) {
				b.todos(transcript.Todo{Content: "old item", Status: "pending"})
				b.todos(
					transcript.Todo{Content: "Write the parser", Status: "completed"},
					transcript.Todo{Content: "Wire the daemon", Status: "in_progress"},
					transcript.Todo{Content: "Add metrics", Status: "pending"},
					transcript.Todo{Content: "Add docs", Status: "pending"},
					transcript.Todo{Content: "Benchmark", Status: "pending"},
				)
				b.add(transcript.Event{Kind: transcript.KindPlanUpdate, Subtype: transcript.SubtypePlan, Tool: "ExitPlanMode",
					ToolCallID: "p1", Text: "\n# Split the store into two layers\n\nDetails…"})
				b.add(transcript.Event{Kind: transcript.KindToolResult, Tool: "ExitPlanMode", ToolCallID: "p1", OK: ptr(true)})
				b.add(transcript.Event{Kind: transcript.KindPlanUpdate, Subtype: transcript.SubtypePlan, Tool: "ExitPlanMode",
					ToolCallID: "p2", Text: "A rejected plan"})
				b.add(transcript.Event{Kind: transcript.KindToolResult, Tool: "ExitPlanMode", ToolCallID: "p2", OK: ptr(false), Subtype: transcript.SubtypeRejected})
			},
			check: func(t *testing.T, it Items) {
				want := []string{"high Wire the daemon", "medium Add metrics", "medium Add docs", "low Benchmark"}
				if got := questions(it.OpenQuestions); !slices.Equal(got, want) {
					t.Errorf("questions = %q, want %q", got, want)
				}
				if !slices.Equal(it.Progress, []string{"Write the parser"}) {
					t.Errorf("progress = %q", it.Progress)
				}
				if len(it.Decisions) != 1 || it.Decisions[0].Statement != "Approved plan: Split the store into two layers" {
					t.Errorf("decisions = %+v", it.Decisions)
				}
			},
		},
		{
			// A folder only read is no subsystem; its files can still be
			// entry points.
			name: "files give subsystems and entry points",
			build: func(b *builder) {
				b.run("c1", "Read", "", []string{"/repo/internal/store/badger.go"}, true, "")
				b.run("c2", "Read", "", []string{"/repo/internal/store/badger.go"}, true, "")
				b.run("c3", "Edit", "", []string{"/repo/internal/curate/apply.go"}, true, "")
				b.run("c4", "Read", "", []string{"/repo/README.md"}, true, "")
				// Where a search looked is no entry point.
				b.run("c5", "Grep", "", []string{"/repo/lib"}, true, "")
				b.run("c6", "Glob", "", []string{"/repo"}, true, "")
			},
			check: func(t *testing.T, it Items) {
				got := []string{}
				for _, s := range it.Subsystems {
					got = append(got, s.Name+"="+string(s.Status))
				}
				want := []string{"internal/curate=in_progress"}
				if !slices.Equal(got, want) {
					t.Errorf("subsystems = %q, want %q", got, want)
				}
				wantEP := []string{"internal/store/badger.go", "internal/curate/apply.go", "README.md"}
				if !slices.Equal(it.EntryPoints, wantEP) {
					t.Errorf("entry points = %q, want %q", it.EntryPoints, wantEP)
				}
			},
		},
		{
			name: "near-duplicates merge",
			build: func(b *builder) {
				b.prompt("Never commit directly to main.")
				b.prompt("never commit directly to MAIN!!")
			},
			check: func(t *testing.T, it Items) {
				if len(it.Invariants) != 1 || len(it.Invariants[0].Evidence.EventIDs) != 2 {
					t.Errorf("invariants = %+v", it.Invariants)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b builder
			tt.build(&b)
			tt.check(t, Extract(b.episode()))
		})
	}
}

func TestApplyGenerateThenUpdate(t *testing.T) {
	var b builder
	b.prompt("Never commit directly to main. I prefer small commits.")
	b.todos(
		transcript.Todo{Content: "Wire the daemon", Status: "in_progress"},
		transcript.Todo{Content: "Add metrics", Status: "pending"},
	)
	b.run("c1", "Bash", "make lint", nil, false, "lint: 3 problems")
	first := Apply(nil, []string{"repo:muse"}, Extract(b.episode()), t0)
	if err := first.Validate(); err != nil {
		t.Fatalf("generated medallion invalid: %v", err)
	}
	if first.Meta.MedallionID != ID([]string{"repo:muse"}) || first.Meta.Version != 0 || first.Meta.Model != "tier0" ||
		first.Meta.Status != medallion.StatusActive || first.Meta.KnowledgeMinTS == "" {
		t.Errorf("meta = %+v", first.Meta)
	}
	qid := map[string]string{}
	for _, q := range first.OpenQuestions {
		qid[q.Question] = q.ID
	}
	if len(qid) != 3 || qid["Wire the daemon"] == "" {
		t.Fatalf("questions = %+v", first.OpenQuestions)
	}

	// The next episode completes the in-progress todo, fixes the lint
	// error and repeats the preference.
	var b2 builder
	b2.prompt("i prefer small commits")
	b2.todos(
		transcript.Todo{Content: "Wire the daemon", Status: "completed"},
		transcript.Todo{Content: "Add metrics", Status: "in_progress"},
		transcript.Todo{Content: "Write docs", Status: "pending"},
	)
	b2.run("c1", "Bash", "make lint", nil, false, "lint: 3 problems")
	b2.run("c2", "Bash", "make lint", nil, true, "")
	first.Meta.Version = 1 // as the store would return it
	before := first.Clone()
	before.Normalize()
	later := t0.Add(time.Hour)
	second := Apply(first, []string{"repo:muse"}, Extract(b2.episode()), later)
	if err := second.Validate(); err != nil {
		t.Fatalf("updated medallion invalid: %v", err)
	}
	if !equalJSON(t, first, before) {
		t.Error("Apply modified the existing medallion")
	}
	if second.Meta.MedallionID != first.Meta.MedallionID || second.Meta.CreatedAt != first.Meta.CreatedAt ||
		second.Meta.Version != 1 || second.Meta.UpdatedAt != medallion.FormatTime(later) {
		t.Errorf("meta = %+v", second.Meta)
	}
	got := map[string]medallion.OpenQuestion{}
	for _, q := range second.OpenQuestions {
		got[q.Question] = q
	}
	if _, ok := got["Wire the daemon"]; ok {
		t.Error("a completed todo kept its question")
	}
	if _, ok := got["Unresolved: lint: 3 problems"]; ok {
		t.Error("a fixed error kept its question")
	}
	if q := got["Add metrics"]; q.ID != qid["Add metrics"] || q.Priority != medallion.PriorityHigh {
		t.Errorf("re-observed question = %+v, want id %s and high priority", q, qid["Add metrics"])
	}
	if q := got["Write docs"]; q.ID != "Q-004" {
		t.Errorf("new question = %+v, want Q-004", q)
	}
	if len(second.Decisions) != 1 || second.Decisions[0].ID != "D-001" || second.Decisions[0].Confidence != 0.75 {
		t.Errorf("decisions = %+v, want D-001 at 0.75", second.Decisions)
	}
	if !slices.Equal(second.Affordances.AvoidRepeating, []string{"when lint: 3 problems: `make lint` succeeds"}) {
		t.Errorf("avoid_repeating = %q", second.Affordances.AvoidRepeating)
	}
	if !strings.Contains(second.Summary.HighLevel, "Recently completed: Wire the daemon") {
		t.Errorf("summary = %q", second.Summary.HighLevel)
	}
}

func TestApplyCaps(t *testing.T) {
	var it Items
	for i := range 40 {
		w := fmt.Sprintf("alpha%d beta%d gamma%d", i, i, i)
		it.AvoidRepeating = append(it.AvoidRepeating, Text{Text: "when " + w})
		it.Invariants = append(it.Invariants, Text{Text: "never " + w})
		it.Decisions = append(it.Decisions, Decision{Statement: "prefer " + w, Confidence: 0.5 + float64(i%5)/10})
		it.OpenQuestions = append(it.OpenQuestions, Question{Question: "do " + w, Priority: medallion.Priorities[i%3]})
		it.Subsystems = append(it.Subsystems, Subsystem{Name: "dir" + fmt.Sprint(i), Status: medallion.SubsystemUnknown})
		it.EntryPoints = append(it.EntryPoints, fmt.Sprintf("f%d.go", i))
		it.Progress = append(it.Progress, strings.Repeat("long progress line ", 10))
	}
	m := Apply(nil, []string{"repo:muse", "module:cli"}, it, t0)
	if err := m.Validate(); err != nil {
		t.Fatalf("invalid: %v", err)
	}
	caps := []struct {
		name string
		n    int
		max  int
	}{
		{"decisions", len(m.Decisions), MaxDecisions},
		{"open_questions", len(m.OpenQuestions), MaxOpenQuestions},
		{"avoid_repeating", len(m.Affordances.AvoidRepeating), MaxAvoidRepeating},
		{"invariants", len(m.Affordances.Invariants), MaxInvariants},
		{"entry_points", len(m.Affordances.RecommendedEntryPoints), MaxEntryPoints},
		{"subsystems", len(m.Summary.Subsystems), MaxSubsystems},
		{"summary bytes", len(m.Summary.HighLevel), MaxSummaryBytes},
	}
	for _, c := range caps {
		if c.n > c.max {
			t.Errorf("%s: %d over the cap %d", c.name, c.n, c.max)
		}
	}
	for _, d := range m.Decisions {
		if d.Confidence < 0.7 {
			t.Errorf("kept a low-confidence decision %+v over higher ones", d)
		}
	}
	for _, q := range m.OpenQuestions {
		if q.Priority == medallion.PriorityLow {
			t.Errorf("kept a low-priority question %+v", q)
		}
	}
	if m.Affordances.AvoidRepeating[0] != "when alpha20 beta20 gamma20" {
		t.Errorf("oldest kept = %q, want the 21st", m.Affordances.AvoidRepeating[0])
	}
	if !slices.Equal(m.Scope.GraphNodes, []string{"module:cli", "repo:muse"}) || m.Meta.MedallionID != ID([]string{"repo:muse", "module:cli"}) {
		t.Errorf("scope %q id %s", m.Scope.GraphNodes, m.Meta.MedallionID)
	}
}

func TestSimilar(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"Never commit to main.", "never  commit to MAIN", true},
		{"use tabs for indentation in go files", "use tabs for indentation in all go files", true},
		{"use tabs", "use spaces", false},
		{"", "x", false},
		// At the size exit's edge: 4 of 5 words is a Jaccard of exactly
		// 0.8, 3 of 4 is under it; 8 of 10 both ways round.
		{"alpha beta gamma delta", "alpha beta gamma delta epsilon", true},
		{"alpha beta gamma", "alpha beta gamma delta", false},
		{"a1 a2 a3 a4 a5 a6 a7 a8 a9 a10", "a1 a2 a3 a4 a5 a6 a7 a8", true},
	}
	for _, tt := range tests {
		if got := similar(tt.a, tt.b); got != tt.want {
			t.Errorf("similar(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func equalJSON(t *testing.T, a, b *medallion.Medallion) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

// TestArtefact: what a run left behind is no entry point.
func TestArtefact(t *testing.T) {
	for p, want := range map[string]bool{
		"tests/e2e/test-results/share-chromium/error-context.md": true, "web/node_modules/x/index.js": true,
		"shot.png": true, "internal/store/badger.go": false, "docs/build.md": false,
	} {
		if got := artefact(p); got != want {
			t.Errorf("artefact(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestSignature(t *testing.T) {
	call := &transcript.Event{Kind: transcript.KindToolCall, Tool: "Bash", Command: "go test"}
	tests := []struct{ text, want string }{
		{"Exit code 1\n<tool_use_error>bad thing</tool_use_error>", "bad thing"},
		{"\n\n  got <nil>, want err\t here ", "got <nil>, want err here"},
		{"exit status 2\n", "`go test` fails"},
		{"é " + strings.Repeat("é", 100), "é " + strings.Repeat("é", 57) + "…"},
		// A header (go's "# package") or a lone word names no failure;
		// the line under it does.
		{"# example.com/muse/internal/midi\ninternal/midi/tempo_test.go:12:3: tt declared and not used",
			"internal/midi/tempo_test.go:12:3: tt declared and not used"},
		{"✔ cart keeps errors in-tree\n✖ checkout totals", "✖ checkout totals"},
		// A line that mentions an error (a browser's log, a wrapper) gives
		// way to the one that says what failed.
		{"[8421:0412/011727.808:ERROR:net/cert/trust_store.cc:807] Error parsing certificate\n  1) sessions\nAssertionError [ERR_ASSERTION]: Expected values to be strictly equal\nELIFECYCLE Test failed. See above for more details.",
			"AssertionError [ERR_ASSERTION]: Expected values to be strictly equal"},
		// A wrapper names its cause last; a traceback is known by its
		// exception.
		{"** (Mix) Could not start application otel: exited\n    ** (EXIT) an exception was raised:\n        ** (BadMapError) expected a map, got:\n\n    [exporter: {:stdout, []}]\n  (erts) :erlang.is_map_key/2",
			"** (Mix) Could not start application otel: exited … ** (BadMapError) expected a map, got: [exporter: {:stdout, []}]"},
		// A line that only points at a file says nothing of the failure.
		{"  [chromium] › cart.spec.ts:3:1 › cart totals\n    Error Context: test-results/cart-totals/error-context.md",
			"[chromium] › cart.spec.ts:3:1 › cart totals"},
		{"Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    int(\"a\")\nValueError: invalid literal for int() with base 10: 'a'",
			"ValueError: invalid literal for int() with base 10: 'a'"},
	}
	for _, tt := range tests {
		if got := signature(&transcript.Event{Text: tt.text}, call); got != tt.want {
			t.Errorf("signature(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
