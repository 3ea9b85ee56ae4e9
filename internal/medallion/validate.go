package medallion

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on identifiers, chosen so that ids and scope entries fit in store
// index keys and URL paths without escaping surprises.
const (
	MaxIDLen    = 128
	MaxScopeLen = 256
)

// Problem is one invalid field, named by its JSON path (e.g. "decisions[2].confidence").
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (p Problem) String() string { return p.Field + ": " + p.Message }

// ValidationError lists every problem found in a medallion.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "invalid medallion: " + strings.Join(parts, "; ")
}

type checker struct{ problems []Problem }

func (c *checker) addf(field, format string, args ...any) {
	c.problems = append(c.problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Validate checks m against medallion.v1 and returns a *ValidationError naming
// every bad field, or nil.
func (m *Medallion) Validate() error {
	var c checker
	c.meta(&m.Meta)
	c.scope(&m.Scope)
	c.summary(&m.Summary)
	c.decisions(m.Decisions)
	c.questions(m.OpenQuestions)
	c.texts("affordances.recommended_entry_points", m.Affordances.RecommendedEntryPoints)
	c.texts("affordances.avoid_repeating", m.Affordances.AvoidRepeating)
	c.texts("affordances.invariants", m.Affordances.Invariants)
	c.evidence(m.Evidence)
	c.review(m.Review)
	c.holds(m.Pinned, m.Forgotten)
	if len(c.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: c.problems}
}

// ValidID reports whether id may be used as a medallion id.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for _, r := range id {
		if !(r < utf8.RuneSelf && (r == '.' || r == '_' || r == ':' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

func (c *checker) meta(m *Meta) {
	switch {
	case m.MedallionID == "":
		c.addf("meta.medallion_id", "required")
	case !ValidID(m.MedallionID):
		c.addf("meta.medallion_id", "must be 1-%d ASCII letters, digits or . _ : - (got %q)", MaxIDLen, m.MedallionID)
	}
	if m.SchemaVersion != SchemaVersion {
		if m.SchemaVersion == "" {
			c.addf("meta.schema_version", "required (%q)", SchemaVersion)
		} else {
			c.addf("meta.schema_version", "must be %q (got %q)", SchemaVersion, m.SchemaVersion)
		}
	}
	created := c.time("meta.created_at", m.CreatedAt, true)
	updated := c.time("meta.updated_at", m.UpdatedAt, true)
	if created != nil && updated != nil && updated.Before(*created) {
		c.addf("meta.updated_at", "must not be before created_at")
	}
	kmin := c.time("meta.knowledge_min_ts", m.KnowledgeMinTS, false)
	kmax := c.time("meta.knowledge_max_ts", m.KnowledgeMaxTS, false)
	if kmin != nil && kmax != nil && kmax.Before(*kmin) {
		c.addf("meta.knowledge_max_ts", "must not be before knowledge_min_ts")
	}
	c.enum("meta.status", string(m.Status), enumStrings(Statuses))
	if m.Version < 0 {
		c.addf("meta.version", "must not be negative (got %d)", m.Version)
	}
}

func (c *checker) time(field, s string, required bool) *time.Time {
	if s == "" {
		if required {
			c.addf(field, "required (RFC 3339, e.g. 2025-11-17T09:30:00Z)")
		}
		return nil
	}
	t, err := ParseTime(s)
	if err != nil {
		c.addf(field, "must be an RFC 3339 timestamp such as 2025-11-17T09:30:00Z (got %q)", s)
		return nil
	}
	return &t
}

func (c *checker) scope(s *Scope) {
	if len(s.GraphNodes) == 0 && len(s.Tags) == 0 {
		c.addf("scope", "needs at least one graph node or tag")
	}
	c.scopeList("scope.graph_nodes", s.GraphNodes)
	c.scopeList("scope.tags", s.Tags)
}

func (c *checker) scopeList(field string, list []string) {
	seen := make(map[string]bool, len(list))
	for i, v := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case strings.TrimSpace(v) == "":
			c.addf(f, "must not be empty")
		case len(v) > MaxScopeLen:
			c.addf(f, "longer than %d bytes", MaxScopeLen)
		case !utf8.ValidString(v) || strings.IndexFunc(v, unicode.IsControl) >= 0:
			c.addf(f, "must be valid UTF-8 without control characters")
		case seen[v]:
			c.addf(f, "duplicate %q", v)
		}
		seen[v] = true
	}
}

func (c *checker) summary(s *Summary) {
	for i, sub := range s.Subsystems {
		f := fmt.Sprintf("summary.subsystems[%d]", i)
		if strings.TrimSpace(sub.Name) == "" {
			c.addf(f+".name", "required")
		}
		c.enum(f+".status", string(sub.Status), enumStrings(SubsystemStatuses))
	}
}

func (c *checker) decisions(ds []Decision) {
	seen := map[string]int{}
	for i, d := range ds {
		f := fmt.Sprintf("decisions[%d]", i)
		c.itemID(f+".id", d.ID, seen, i)
		if strings.TrimSpace(d.Statement) == "" {
			c.addf(f+".statement", "required")
		}
		if math.IsNaN(d.Confidence) || d.Confidence < 0 || d.Confidence > 1 {
			c.addf(f+".confidence", "must be between 0 and 1 (got %v)", d.Confidence)
		}
	}
}

func (c *checker) questions(qs []OpenQuestion) {
	seen := map[string]int{}
	for i, q := range qs {
		f := fmt.Sprintf("open_questions[%d]", i)
		c.itemID(f+".id", q.ID, seen, i)
		if strings.TrimSpace(q.Question) == "" {
			c.addf(f+".question", "required")
		}
		c.texts(f+".blocked_on", q.BlockedOn)
		c.enum(f+".priority", string(q.Priority), enumStrings(Priorities))
	}
}

// evidence checks the light rules of Medallion.Evidence: every entry names
// its item, and the list stays bounded.
func (c *checker) evidence(es []Evidence) {
	if len(es) > MaxEvidence {
		c.addf("evidence", "at most %d entries (got %d)", MaxEvidence, len(es))
	}
	for i, e := range es {
		if strings.TrimSpace(e.Item) == "" {
			c.addf(fmt.Sprintf("evidence[%d].item", i), "required")
		}
	}
}

// review checks Medallion.Review: every entry names its item, its source
// and a known state, and the list stays bounded.
func (c *checker) review(rs []Review) {
	if len(rs) > MaxReview {
		c.addf("review", "at most %d entries (got %d)", MaxReview, len(rs))
	}
	for i, r := range rs {
		f := fmt.Sprintf("review[%d]", i)
		if strings.TrimSpace(r.Item) == "" {
			c.addf(f+".item", "required")
		}
		if strings.TrimSpace(r.Source) == "" {
			c.addf(f+".source", "required")
		}
		c.enum(f+".state", string(r.State), enumStrings(ReviewStates))
	}
}

// forgottenKinds are the valid Forgotten.Kind values.
var forgottenKinds = append([]string{KindDecision, KindQuestion, ItemSummary}, ItemLists...)

// holds checks Medallion.Pinned and Medallion.Forgotten: every pin names
// an item (and a list item its text), every forgotten entry a kind and a
// fingerprint, and both stay bounded.
func (c *checker) holds(pins []Pin, forgotten []Forgotten) {
	if len(pins) > MaxPinned {
		c.addf("pinned", "at most %d entries (got %d)", MaxPinned, len(pins))
	}
	for i, p := range pins {
		f := fmt.Sprintf("pinned[%d]", i)
		switch {
		case strings.TrimSpace(p.Item) == "":
			c.addf(f+".item", "required")
		case !byID(p.Item) && p.Item != ItemSummary && strings.TrimSpace(p.Text) == "":
			c.addf(f+".text", "required for a %s item", p.Item)
		}
	}
	if len(forgotten) > MaxForgotten {
		c.addf("forgotten", "at most %d entries (got %d)", MaxForgotten, len(forgotten))
	}
	for i, g := range forgotten {
		f := fmt.Sprintf("forgotten[%d]", i)
		c.enum(f+".kind", g.Kind, forgottenKinds)
		if strings.TrimSpace(g.Fingerprint) == "" {
			c.addf(f+".fingerprint", "required")
		}
	}
}

func (c *checker) itemID(field, id string, seen map[string]int, i int) {
	switch {
	case strings.TrimSpace(id) == "":
		c.addf(field, "required")
	case len(id) > MaxIDLen:
		c.addf(field, "longer than %d bytes", MaxIDLen)
	case !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0:
		// Item ids are shown in tables and referenced by later
		// checkpoints; a newline or escape in one breaks both.
		c.addf(field, "must be valid UTF-8 without control characters")
	default:
		if j, dup := seen[id]; dup {
			c.addf(field, "duplicate id %q (also at index %d)", id, j)
			return
		}
		seen[id] = i
	}
}

func (c *checker) texts(field string, list []string) {
	for i, v := range list {
		if strings.TrimSpace(v) == "" {
			c.addf(fmt.Sprintf("%s[%d]", field, i), "must not be empty")
		}
	}
}

func enumStrings[E ~string](allowed []E) []string {
	out := make([]string, len(allowed))
	for i, a := range allowed {
		out[i] = string(a)
	}
	return out
}

func (c *checker) enum(field, v string, names []string) {
	for _, n := range names {
		if v == n {
			return
		}
	}
	if v == "" {
		c.addf(field, "required (one of %s)", strings.Join(names, ", "))
		return
	}
	c.addf(field, "must be one of %s (got %q)", strings.Join(names, ", "), v)
}
