package render

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/medallionhq/medallion/internal/medallion"
)

// TestBudgetForLimits: a load rendered to BudgetForChars(n) or
// BudgetForBytes(n) is never longer than n characters or bytes, for texts
// of any mix of ASCII, accented letters, CJK and emoji, and for whole
// rendered loads.
func TestBudgetForLimits(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	runes := []string{"a", " ", "\n", "{", "é", "日", "🙂", "\u00a0"}
	check := func(text string, tokens int) {
		t.Helper()
		chars := len(utf16.Encode([]rune(text)))
		for _, n := range []int{chars, chars + 1, len(text)} {
			if tokens <= BudgetForChars(n) && chars > n {
				t.Fatalf("%d tokens fit BudgetForChars(%d) but the text has %d characters: %q", tokens, n, chars, text)
			}
		}
		for _, n := range []int{len(text), len(text) + 3} {
			if tokens <= BudgetForBytes(n) && len(text) > n {
				t.Fatalf("%d tokens fit BudgetForBytes(%d) but the text has %d bytes: %q", tokens, n, len(text), text)
			}
		}
		// The bound the hook relies on, directly.
		if chars*10 > 33*Tokens(text) || len(text) > 4*Tokens(text) {
			t.Fatalf("%q: %d tokens, %d characters, %d bytes", text, Tokens(text), chars, len(text))
		}
	}
	for range 20000 {
		var b strings.Builder
		for range rng.Intn(200) {
			b.WriteString(runes[rng.Intn(len(runes))])
		}
		check(b.String(), Tokens(b.String()))
	}
	for i := range 200 {
		ms := []*medallion.Medallion{randomMedallion(rng, i)}
		for _, budget := range []int{BudgetForChars(10000), BudgetForBytes(24000), 300} {
			res := Load(ms, Options{Budget: budget})
			check(res.Text, res.Tokens)
			if chars := len(utf16.Encode([]rune(res.Text))); budget == BudgetForChars(10000) && chars > 10000 {
				t.Fatalf("load of %d characters for a 10,000-character limit", chars)
			}
		}
	}
}
