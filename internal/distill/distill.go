// Package distill is Tier 1 curation: an OpenAI-compatible model distils a
// session's digest into the scope's medallion (seed 000 §7.1.2 and §8).
//
// The model never writes a medallion. It reads the current medallion, with
// handles for its items, and a digest of new events, with a handle per line,
// and returns a Patch: add, revise, drop or resolve items, each add citing
// digest handles. Code validates the patch against the schema and its
// meaning, gives one repair turn that quotes the problems, and applies what
// holds under the caps: ids, created_at, version and model stay the code's,
// handles become event ids in the medallion's evidence, and every item the
// model wrote is marked for review. Anything less than a valid patch for
// every part of the digest leaves the medallion untouched: nothing partial.
package distill

import (
	"context"
	"errors"
	"fmt"

	"github.com/medallionhq/medallion/internal/llm"
	"github.com/medallionhq/medallion/internal/medallion"
)

// Completer is the model: it answers a conversation with one message held
// to a JSON schema. *llm.Client implements it.
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (llm.Reply, error)
}

// Distiller runs Tier 1 over a digest.
type Distiller struct {
	LLM Completer
	// Model names the model in meta.model and in review sources.
	Model string
	// MaxInputTokens bounds one call's prompt (estimated); a longer digest
	// becomes several calls in order. Zero means DefaultMaxInputTokens.
	MaxInputTokens int
	// MaxReplyTokens caps the model's answer; zero means 4,096.
	MaxReplyTokens int
	// Redact scrubs every text the model wrote before it is stored; nil
	// stores them as written.
	Redact func(string) string
}

// DefaultMaxInputTokens fits the context of small local models (8k) with
// room for the reply.
const DefaultMaxInputTokens = 12000

// Result says what a Distill did.
type Result struct {
	Calls        int
	Repairs      int
	InputTokens  int
	OutputTokens int
	Applied      Applied
}

// ErrInvalidReply is returned when the model's answer, and its repair,
// could not be used.
var ErrInvalidReply = errors.New("model reply invalid after one repair")

// promptOverhead is the tokens of everything but the digest in a prompt:
// the system prompt, the schema and the current medallion's share.
func (d *Distiller) digestBudget(m *medallion.Medallion, scope []string) int {
	limit := d.MaxInputTokens
	if limit <= 0 {
		limit = DefaultMaxInputTokens
	}
	overhead := Tokens(systemPrompt) + Tokens(string(Schema())) + Tokens(userPrompt(m, scope, nil, 1, 1))
	return max(limit-overhead, 1000)
}

// Distill applies the digest to a copy of m, one call per chunk (plus at
// most one repair each), and returns the copy. m is not modified. On any
// error the caller keeps m: nothing of a partial run is returned.
func (d *Distiller) Distill(ctx context.Context, m *medallion.Medallion, scope []string, entries []Entry) (*medallion.Medallion, Result, error) {
	var res Result
	out := m.Clone()
	if len(entries) == 0 {
		return out, res, nil
	}
	source := "tier1:" + d.Model
	chunks := Chunks(entries, d.digestBudget(m, scope))
	for i, chunk := range chunks {
		p, err := d.call(ctx, out, scope, chunk, i+1, len(chunks), &res)
		if err != nil {
			return nil, res, fmt.Errorf("distill part %d of %d: %w", i+1, len(chunks), err)
		}
		a := apply(out, newView(out, chunk), p, source, d.Redact)
		res.Applied.Added += a.Added
		res.Applied.Revised += a.Revised
		res.Applied.Dropped += a.Dropped
		res.Applied.Resolved += a.Resolved
		res.Applied.Refused += a.Refused
	}
	out.Meta.Model = d.Model
	out.Normalize()
	if err := out.Validate(); err != nil {
		// apply keeps every rule Validate checks; reaching this is a bug,
		// and storing nothing is the safe answer.
		return nil, res, fmt.Errorf("distilled medallion invalid: %w", err)
	}
	return out, res, nil
}

// call asks the model for one chunk's patch: one request and, if the
// reply is unusable, one repair turn quoting what was wrong.
func (d *Distiller) call(ctx context.Context, m *medallion.Medallion, scope []string, chunk []Entry, part, parts int, res *Result) (*Patch, error) {
	maxReply := d.MaxReplyTokens
	if maxReply <= 0 {
		maxReply = 4096
	}
	req := llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: systemPrompt},
			{Role: "user", Content: userPrompt(m, scope, chunk, part, parts)},
		},
		SchemaName: "medallion_patch",
		Schema:     Schema(),
		MaxTokens:  maxReply,
	}
	for attempt := 0; ; attempt++ {
		reply, err := d.LLM.Complete(ctx, req)
		res.Calls++
		res.InputTokens += reply.PromptTokens
		res.OutputTokens += reply.CompletionTokens
		if err != nil {
			return nil, err
		}
		p, problems := parse(reply.Content)
		if p != nil {
			return p, nil
		}
		if attempt == 1 {
			return nil, fmt.Errorf("%w: %s", ErrInvalidReply, problems[0])
		}
		res.Repairs++
		req.Messages = append(req.Messages,
			llm.Message{Role: "assistant", Content: clip(reply.Content, 8000)},
			llm.Message{Role: "user", Content: repairPrompt(problems)})
	}
}
