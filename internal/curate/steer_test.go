package curate

import (
	"slices"
	"testing"
)

// TestUserMessageClasses: what a user message does decides what it
// becomes. A question, a pasted review, an approval, a status remark and a
// step of the user's own instruction list are neither decisions nor rules;
// real constraints and decisions still are. The fixtures are our own.
func TestUserMessageClasses(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		want   []chunk // nil: nothing kept
	}{
		{"a question with a negation is no constraint",
			"so if the cache is cold then this falls apart, right?", nil},
		{"an unmarked question is no decision",
			"does the importer not also read the header row", nil},
		{"a question opening a statement leaves the statement",
			"did we not settle this already, you don't have write access to the bucket",
			[]chunk{{"did we not settle this already, you don't have write access to the bucket", actRule}}},
		{"an approval with no content",
			"ok, let's implement this", nil},
		{"a go-ahead",
			"great, go ahead and ship them", nil},
		{"a go-ahead naming the agent's proposal",
			"Go ahead with the regression test.", nil},
		{"a status remark",
			"I put everything into one commit.", nil},
		{"a status remark with its subject left out",
			"hmmm, still seeing the session id in the header after the reload", nil},
		{"a problem seen is no request",
			"getting 500 errors on upload and resolve calls", nil},
		{"the user's own state is no rule",
			"ahh ok looks like I don't need the token for the metrics endpoint", nil},
		{"a step of the user's instructions is no rule or decision",
			"step 2: keep going with the parser refactor until the tests pass", nil},
		{"numbered steps are no decisions",
			"1. review the session store\n2. search the logs for the retry errors", nil},
		{"a pasted review from a bot",
			"> **Potential issue** the handler does not close the body\n_⚠️ Potential issue_\n<details>\n<summary>Prompt for AI agents</summary>\nIn src/a.ts around lines 10 - 20, always close the body.\n</details>",
			nil},
		{"a hedged idea is no decision",
			"1 does seem like a decent path, though we might want to cache it in future.", nil},
		{"a constraint",
			"Never push directly to main.",
			[]chunk{{"Never push directly to main.", actRule}}},
		{"a correction of a fact",
			"it's not a JSONL file, it is one JSON object.",
			[]chunk{{"it's not a JSONL file, it is one JSON object.", actRule}}},
		{"a rule in a step still counts when stated outright",
			"3. never edit generated files",
			[]chunk{{"never edit generated files", actRule}}},
		{"a decision",
			"store the sync cursor in the metrics file and extend its JSON.",
			[]chunk{{"store the sync cursor in the metrics file and extend its JSON.", actRequest}}},
		{"a status remark leads into the request it explains",
			"I think the session id and the conversation id are the same. let's set the conversation id from the session id",
			[]chunk{{"I think the session id and the conversation id are the same. let's set the conversation id from the session id", actRequest}}},
		{"a preference",
			"I'd prefer table-driven tests here.",
			[]chunk{{"I'd prefer table-driven tests here.", actPreference}}},
		{"a polite request without a question mark is a request",
			"can you move the retry loop into the client package.",
			[]chunk{{"can you move the retry loop into the client package.", actRequest}}},
		{"redacted placeholders carry no words",
			stripImages("[REDACTED_TEXT len=86 sha=2239bcba]"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chunks(tt.prompt); !slices.Equal(got, tt.want) {
				t.Errorf("chunks(%q) = %+v, want %+v", tt.prompt, got, tt.want)
			}
		})
	}
}
