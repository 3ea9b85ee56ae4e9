// Package redact removes secrets from transcript text before it is stored
// or sent to an LLM: the product promises that a secret found in a
// transcript never reaches disk or a model.
//
// A secret is replaced in place by "[REDACTED:<kind>]", keeping the text
// around it: the name of a NAME=value assignment stays
// ("API_TOKEN=[REDACTED:secret-assignment]") and so do the scheme, user and
// host of a URL ("https://user:[REDACTED:url-password]@host/path"), so that
// what an agent did stays readable.
//
// Every transcript event goes through here, so the common case — no secret
// at all — must cost little: String makes one pass over the bytes with a
// byte-class table, looks at a token only where it starts, at a '=' or ':'
// and at "://", and returns its argument without allocating when nothing
// matched. No regular expression runs over the text unless the user added
// patterns of their own.
//
// The rules prefer recall on well-known key formats (a key with a known
// prefix is redacted wherever it appears) and precision on code: names such
// as token_count, placeholders such as ${TOKEN} or <your-token>, git commit
// ids, UUIDs, digests and paths are left alone.
package redact

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultEntropyThreshold is the Shannon entropy, in bits per character,
// above which a long mixed token counts as a secret (for tokens of 32
// characters or more; shorter tokens need a little less, since their
// entropy is bounded by log2 of their length).
const DefaultEntropyThreshold = 4.0

// Kinds of secret, as they appear in "[REDACTED:<kind>]".
const (
	KindAWSAccessKey     = "aws-access-key"
	KindAWSSecretKey     = "aws-secret-key"
	KindOpenAIKey        = "openai-key"
	KindAnthropicKey     = "anthropic-key"
	KindGoogleAPIKey     = "google-api-key"
	KindGoogleOAuth      = "google-oauth-secret"
	KindGitHubToken      = "github-token"
	KindGitLabToken      = "gitlab-token"
	KindSlackToken       = "slack-token"
	KindSlackWebhook     = "slack-webhook"
	KindStripeKey        = "stripe-key"
	KindNPMToken         = "npm-token"
	KindHuggingFace      = "huggingface-token"
	KindJWT              = "jwt"
	KindPrivateKey       = "private-key"
	KindURLPassword      = "url-password"
	KindSecretAssignment = "secret-assignment"
	KindBearerToken      = "bearer-token"
	KindBasicAuth        = "basic-auth"
	KindHighEntropy      = "high-entropy"
	// KindCustom names matches of a user pattern that has no kind of its own.
	KindCustom = "custom"
)

// markerPrefix starts every replacement; text that already carries it is
// treated as a placeholder, which keeps String idempotent.
const markerPrefix = "[REDACTED:"

// Pattern is an extra rule supplied by the user.
type Pattern struct {
	// Kind names the secret in the replacement; KindCustom when empty.
	// Lower-case letters, digits and '-' only.
	Kind string
	// Regexp is in RE2 syntax. When it has a capture group only the first
	// group is replaced (so `password=(\S+)` keeps the name); otherwise the
	// whole match is.
	Regexp string
}

// Options configures a Redactor. The zero value gives the default rules.
type Options struct {
	// Patterns are run in addition to the built-in rules. Each is a regular
	// expression run over the whole text, so every pattern costs a pass:
	// keep them few and anchored on a literal.
	Patterns []Pattern
	// EntropyThreshold overrides DefaultEntropyThreshold when positive.
	EntropyThreshold float64
	// DisableEntropy turns off the high-entropy rule, leaving only the
	// rules for known formats and labelled secrets.
	DisableEntropy bool
}

type pattern struct {
	kind string
	re   *regexp.Regexp
}

// Redactor redacts secrets. It is safe for concurrent use.
type Redactor struct {
	patterns  []pattern
	threshold float64
	entropy   bool
	count     atomic.Uint64
	kinds     sync.Map // kind → *atomic.Uint64, the count per kind
}

// Default is the Redactor with the built-in rules that String uses.
var Default = mustNew(Options{})

func mustNew(opts Options) *Redactor {
	r, err := New(opts)
	if err != nil {
		panic(err)
	}
	return r
}

// New returns a Redactor with the built-in rules and opts. It fails when a
// pattern does not compile or has an unusable kind.
func New(opts Options) (*Redactor, error) {
	r := &Redactor{threshold: DefaultEntropyThreshold, entropy: !opts.DisableEntropy}
	if opts.EntropyThreshold > 0 {
		r.threshold = opts.EntropyThreshold
	}
	for i, p := range opts.Patterns {
		kind := p.Kind
		if kind == "" {
			kind = KindCustom
		}
		if !validKind(kind) {
			return nil, fmt.Errorf("redact pattern %d: kind %q: use lower-case letters, digits and '-'", i, p.Kind)
		}
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return nil, fmt.Errorf("redact pattern %d (%s): %w", i, kind, err)
		}
		r.patterns = append(r.patterns, pattern{kind: kind, re: re})
	}
	return r, nil
}

func validKind(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return k != ""
}

// String redacts s with the Default redactor. It returns s itself, without
// allocating, when s holds no secret.
func String(s string) string {
	out, _ := Default.Redact(s)
	return out
}

// Scrub returns s with every secret replaced, without counting them: for
// a second copy of text whose secrets were counted when it was redacted
// (a parser's saved state keeps a pending call's command and paths).
func (r *Redactor) Scrub(s string) string {
	spans := r.find(s)
	if len(spans) == 0 {
		return s
	}
	return replace(s, spans)
}

// Redact returns s with every secret replaced, and how many were replaced.
// When none was, it returns s itself without allocating.
func (r *Redactor) Redact(s string) (string, int) {
	spans := r.find(s)
	if len(spans) == 0 {
		return s, 0
	}
	r.count.Add(uint64(len(spans)))
	for _, sp := range spans {
		c, ok := r.kinds.Load(sp.kind)
		if !ok {
			c, _ = r.kinds.LoadOrStore(sp.kind, new(atomic.Uint64))
		}
		c.(*atomic.Uint64).Add(1)
	}
	return replace(s, spans), len(spans)
}

// CountsByKind reports how many secrets of each kind r has replaced since
// it was created; the counts add up to Count.
func (r *Redactor) CountsByKind() map[string]uint64 {
	out := map[string]uint64{}
	r.kinds.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return out
}

// Count reports how many secrets r has replaced since it was created.
func (r *Redactor) Count() uint64 {
	return r.count.Load()
}

// span is a byte range of the input to replace by the marker of kind.
type span struct {
	start, end int
	kind       string
}

// find returns the sorted, disjoint spans to redact in s; nil, without
// allocating, when there are none.
func (r *Redactor) find(s string) []span {
	sc := scanner{s: s, entropy: r.entropy, threshold: r.threshold}
	sc.scan()
	spans := merge(sc.spans, extraSpans(s))
	if len(r.patterns) == 0 {
		return spans
	}
	return merge(spans, r.patternSpans(s))
}

func (r *Redactor) patternSpans(s string) []span {
	var out []span
	for _, p := range r.patterns {
		for _, m := range p.re.FindAllStringSubmatchIndex(s, -1) {
			start, end := m[0], m[1]
			if len(m) >= 4 && m[2] >= 0 {
				start, end = m[2], m[3]
			}
			if end > start {
				out = append(out, span{start: start, end: end, kind: p.kind})
			}
		}
	}
	return out
}

// merge combines the built-in spans with the pattern spans. Overlapping
// spans are joined, never cut: a secret must not leak at a seam.
func merge(a, b []span) []span {
	if len(b) == 0 {
		return a
	}
	all := append(append(make([]span, 0, len(a)+len(b)), a...), b...)
	slices.SortFunc(all, func(x, y span) int { return x.start - y.start })
	out := all[:1]
	for _, sp := range all[1:] {
		last := &out[len(out)-1]
		if sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

func replace(s string, spans []span) string {
	var b strings.Builder
	b.Grow(len(s) + len(spans)*len(markerPrefix+"secret-assignment]"))
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp.start])
		b.WriteString(markerPrefix)
		b.WriteString(sp.kind)
		b.WriteByte(']')
		prev = sp.end
	}
	b.WriteString(s[prev:])
	return b.String()
}
