package curate

import (
	"slices"
	"strings"
	"unicode"
)

// Update semantics (seed 000 §8): a new decision or invariant that negates
// or replaces an old one on the same subject supersedes it. Two rules, both
// about the words, not the sessions:
//
//   - opposite polarity, same subject: "use the cache" vs "never use the
//     cache" (content words nearly the same, one side negated);
//   - replacement: "use X instead of Y" (or "X rather than Y", "X, not Y")
//     supersedes an affirmative old statement about Y that does not
//     mention X.

// negations make a statement negative.
var negations = map[string]bool{
	"don't": true, "dont": true, "not": true, "never": true, "no": true, "stop": true, "avoid": true,
	"shouldn't": true, "mustn't": true, "can't": true, "cannot": true, "won't": true, "doesn't": true,
	"isn't": true, "aren't": true, "without": true, "nor": true,
}

// cueWords carry the statement's force, not its subject.
var cueWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "for": true,
	"and": true, "or": true, "it": true, "is": true, "be": true, "we": true, "you": true, "i": true,
	"please": true, "always": true, "use": true, "using": true, "should": true, "must": true, "do": true,
	"let's": true, "lets": true, "prefer": true, "instead": true, "rather": true, "than": true,
	"approved": true, "plan": true, "any": true, "more": true, "anymore": true, "longer": true,
}

// words lower-cases s into words of letters, digits and apostrophes
// (so "don't" stays one word); curly apostrophes count as straight ones.
func words(s string) []string {
	if ws, ok := asciiFields(s, wordChars); ok {
		return ws // no curly apostrophes in ASCII
	}
	s = strings.ReplaceAll(strings.ToLower(s), "\u2019", "'")
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '_' || r == '.' || r == '/' || r == '-')
	})
}

func clean(w string) string { return strings.Trim(w, "'.-/") }

// negative reports whether a statement is negated.
func negative(s string) bool {
	ws := words(s)
	for i, w := range ws {
		w = clean(w)
		if negations[w] {
			return true
		}
		if w == "do" && i+1 < len(ws) && clean(ws[i+1]) == "not" {
			return true
		}
	}
	return false
}

// content returns a statement's subject words: everything but negations
// and cue words.
func content(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words(s) {
		w = clean(w)
		if w == "" || negations[w] || cueWords[w] {
			continue
		}
		out[w] = true
	}
	return out
}

func overlap(a, b map[string]bool) int {
	n := 0
	for w := range a {
		if b[w] {
			n++
		}
	}
	return n
}

// replacement splits "X instead of Y", "X rather than Y" and "X, not Y".
func replacement(s string) (x, y string, ok bool) {
	l := strings.ToLower(s)
	for _, sep := range []string{" instead of ", " rather than ", ", not "} {
		if i := strings.Index(l, sep); i > 0 {
			return s[:i], s[i+len(sep):], true
		}
	}
	return "", "", false
}

// contradictThreshold is the Jaccard similarity of subject words above
// which statements of opposite polarity are about the same thing.
const contradictThreshold = 0.6

// contradicts reports whether newer negates or replaces older.
func contradicts(older, newer string) bool {
	return newClaim(older).contradictedBy(newClaim(newer))
}

// claim is a statement as contradicts reads it, worked out once where one
// statement meets many (applier.claim).
type claim struct {
	negative bool
	content  map[string]bool
	// replaces: the statement is "y instead of x"; x and y are the
	// content of each side.
	replaces bool
	x, y     map[string]bool
}

func newClaim(s string) *claim {
	c := &claim{negative: negative(s), content: content(s)}
	if x, y, ok := replacement(s); ok {
		c.replaces, c.x, c.y = true, content(x), content(y)
	}
	return c
}

// contradictedBy is contradicts(older, newer) for older c.
func (c *claim) contradictedBy(newer *claim) bool {
	if newer.replaces {
		if len(newer.y) > 0 && !c.negative && overlap(c.content, newer.y)*2 >= len(newer.y) && overlap(c.content, newer.x) == 0 {
			return true
		}
	}
	if c.negative == newer.negative {
		return false
	}
	co, cn := c.content, newer.content
	if len(co) == 0 || len(cn) == 0 {
		return false
	}
	inter := overlap(co, cn)
	return float64(inter)/float64(len(co)+len(cn)-inter) >= contradictThreshold
}

// A known fix that does what a rule forbids ("edit internal/pb/score.pb.go"
// under "never edit generated files") teaches the next session to break
// the rule: the user's word wins and the fix is dropped. A rule forbids
// edits when it negates an editing verb; what it forbids is the words after
// the verb, up to the end of the clause.

// editVerbs name a change to files.
var editVerbs = map[string]bool{"edit": true, "edits": true, "editing": true, "modify": true, "modifying": true,
	"change": true, "changing": true, "touch": true, "touching": true, "write": true, "writing": true,
	"hand-edit": true, "update": true, "updating": true}

// forbiddenEdits returns the object words of the edits rule forbids, or
// nil when it forbids none.
func forbiddenEdits(rule string) []string {
	clause, _, _ := strings.Cut(strings.ToLower(rule), ";")
	ws := words(clause)
	for i, w := range ws {
		if !editVerbs[w] || i == 0 || !slices.ContainsFunc(ws[max(0, i-3):i], func(n string) bool { return negations[n] }) {
			continue
		}
		var obj []string
		for _, o := range ws[i+1:] {
			if !cueWords[o] && o != "files" && o != "file" && o != "code" && o != "any" {
				obj = append(obj, strings.Trim(o, "."))
			}
		}
		return obj
	}
	return nil
}

// generatedPath reports a path of generated code by the conventions of
// the common generators (protoc, go generate, Kubernetes, GraphQL).
func generatedPath(p string) bool {
	b := strings.ToLower(p)
	for _, s := range []string{".pb.go", "_pb2.py", ".pb.ts", "_gen.go", ".gen.", "generated", "zz_generated", ".g.dart"} {
		if strings.Contains(b, s) {
			return true
		}
	}
	return false
}

// breaksRule reports whether fix edits a file one of rules forbids editing.
func breaksRule(fix string, rules []string) bool {
	paths := fixEdits(fix)
	if len(paths) == 0 {
		return false
	}
	for _, r := range rules {
		obj := forbiddenEdits(r)
		for _, p := range paths {
			for _, o := range obj {
				if (strings.HasPrefix(o, "generated") && generatedPath(p)) || (len(o) >= 4 && strings.Contains(strings.ToLower(p), o)) {
					return true
				}
			}
		}
	}
	return false
}

// fixEdits returns the files a known fix's remedy edits ("…: edit a.go,
// b.go (gist), then …").
func fixEdits(fix string) []string {
	_, rest, ok := strings.Cut(fix, ": edit ")
	if !ok {
		return nil
	}
	for _, end := range []string{" (", ", then "} {
		rest, _, _ = strings.Cut(rest, end)
	}
	var out []string
	for _, p := range strings.Split(rest, ", ") {
		if p = strings.TrimSpace(p); p != "" && p != "…" {
			out = append(out, p)
		}
	}
	return out
}
