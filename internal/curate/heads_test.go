package curate

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Several regexps run only on texts whose first byte can open a match
// (opensWith and the heads constants), or that hold a byte or word every
// match holds. These tests derive both from each pattern itself, so a
// pattern changed without its heads fails here, not as a quiet loss of
// what Tier 0 finds.

// firstBytes adds to set every byte a match of re can open with, and
// reports whether re can match without consuming a byte.
func firstBytes(re *syntax.Regexp, set *[256]bool) (nullable bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		addRune(set, re.Rune[0], re.Flags&syntax.FoldCase != 0)
		return false
	case syntax.OpCharClass:
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				addRune(set, r, false)
			}
		}
		return false
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		for b := range set {
			set[b] = set[b] || b != '\n' || re.Op == syntax.OpAnyChar
		}
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return firstBytes(re.Sub[0], set)
	case syntax.OpStar, syntax.OpQuest:
		firstBytes(re.Sub[0], set)
		return true
	case syntax.OpRepeat:
		return firstBytes(re.Sub[0], set) || re.Min == 0
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !firstBytes(sub, set) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		nullable := false
		for _, sub := range re.Sub {
			nullable = firstBytes(sub, set) || nullable
		}
		return nullable
	}
	panic("firstBytes: op " + re.Op.String())
}

// addRune adds the first byte of r, and of every rune it folds to, to set.
// A regexp matches an invalid byte as U+FFFD, so that rune adds every
// byte that cannot start valid UTF-8 too.
func addRune(set *[256]bool, r rune, fold bool) {
	for f := r; ; {
		var buf [utf8.UTFMax]byte
		utf8.EncodeRune(buf[:], f)
		set[buf[0]] = true
		if f == utf8.RuneError {
			for b := 0x80; b < 0x100; b++ {
				set[b] = true
			}
		}
		if f = unicode.SimpleFold(f); !fold || f == r {
			return
		}
	}
}

// requires reports whether every match of re holds lit, found as a run of
// literal text the pattern itself spells (with no case folding).
func requires(re *syntax.Regexp, lit string) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return re.Flags&syntax.FoldCase == 0 && strings.Contains(string(re.Rune), lit)
	case syntax.OpCapture, syntax.OpPlus:
		return requires(re.Sub[0], lit)
	case syntax.OpRepeat:
		return re.Min > 0 && requires(re.Sub[0], lit)
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !requires(sub, lit) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		var run strings.Builder // adjacent literals, joined
		for _, sub := range re.Sub {
			if requires(sub, lit) {
				return true
			}
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
				run.WriteString(string(sub.Rune))
				if strings.Contains(run.String(), lit) {
					return true
				}
				continue
			}
			run.Reset()
		}
	}
	return false
}

func parsed(t *testing.T, re *regexp.Regexp) *syntax.Regexp {
	t.Helper()
	p, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	return p.Simplify()
}

// openers is the bytes re can open with; re must consume a byte first.
func openers(t *testing.T, re *regexp.Regexp) *[256]bool {
	t.Helper()
	var set [256]bool
	if firstBytes(parsed(t, re), &set) {
		t.Fatalf("%s can match the empty string: no first byte rules it out", re)
	}
	return &set
}

// checkHeads fails t when a match of re can open with a byte that
// opensWith(s, heads) turns away; the bytes of never cannot open the
// text re is run on (it was trimmed of them).
func checkHeads(t *testing.T, name string, re *regexp.Regexp, heads, never string) {
	t.Helper()
	for b, can := range openers(t, re) {
		s := string([]byte{byte(b)})
		if can && !opensWith(s, heads) && !strings.Contains(never, s) {
			t.Errorf("%s can open with %q, which its heads %q turn away", name, s, heads)
		}
	}
}

func TestHeadsCoverPatterns(t *testing.T) {
	const trimmed = " \t\n\v\f\r" // strings.TrimSpace took these off
	checkHeads(t, "leftHeading", leftHeading, leftHeads, trimmed)
	checkHeads(t, "leftInline", leftInline, leftHeads, trimmed)
	checkHeads(t, "reportLabel", reportLabel, labelHeads, trimmed)
	checkHeads(t, "stepMarker", stepMarker, stepHeads, "-*+ \t")
	checkHeads(t, "emphasized", emphasized, "*_", "")

	// reportFiller runs on lowered text, and only when the first rune,
	// lowered, is an ASCII byte of fillerHeads.
	for b, can := range openers(t, reportFiller) {
		if can && (b >= utf8.RuneSelf || strings.IndexByte(fillerHeads, byte(b)) < 0) {
			t.Errorf("reportFiller can open with %q, not in fillerHeads %q", rune(b), fillerHeads)
		}
	}

	// openTagName runs openTag only on a line from '<' to '>'.
	if set := openers(t, openTag); len(setBytes(set)) != 1 || !set['<'] {
		t.Errorf("openTag opens with %q, not '<' alone", setBytes(set))
	}
	if !strings.HasSuffix(openTag.String(), ">$") {
		t.Errorf("openTag %s no longer ends with '>' at the line's end", openTag)
	}

	// pasted: each form of pastedLine opens with a byte of pastedHeads or
	// holds a ':'; sourceRef always holds one.
	if !requires(parsed(t, sourceRef), ":") {
		t.Errorf("sourceRef %s can match without a ':'", sourceRef)
	}
	top := parsed(t, pastedLine)
	if top.Op != syntax.OpConcat || len(top.Sub) != 2 || top.Sub[0].Op != syntax.OpBeginText || top.Sub[1].Op != syntax.OpAlternate {
		t.Fatalf("pastedLine is no longer ^(?:a|b|…): rewrite this check for %s", pastedLine)
	}
	for _, form := range top.Sub[1].Sub {
		var set [256]bool
		nullable := firstBytes(form, &set)
		if requires(form, ":") {
			continue
		}
		for b, can := range set {
			if nullable || can && strings.IndexByte(pastedHeads, byte(b)) < 0 {
				t.Errorf("pastedLine's form %s opens with %q, not in pastedHeads %q, and needs no ':'", form, rune(b), pastedHeads)
				break
			}
		}
	}

	// mayReportCommit asks for a line opening with '[' and " changed".
	checkHeads(t, "commitLine", commitLine, "[", "")
	if !requires(parsed(t, commitLine), " changed") {
		t.Errorf("commitLine %s can match without \" changed\"", commitLine)
	}
}

func setBytes(set *[256]bool) []byte {
	var out []byte
	for b, in := range set {
		if in {
			out = append(out, byte(b))
		}
	}
	return out
}

// The checks above must catch a pattern that gains an opening its heads
// do not hold.
func TestHeadsCheckCatchesNewOpenings(t *testing.T) {
	var set [256]bool
	firstBytes(parsed(t, regexp.MustCompile(`(?i)^(?:summary|known issues|todo)`)), &set)
	for _, b := range []byte("sSkKtT\xc5\xe2") { // ſ (U+017F) and the Kelvin sign fold onto s and k
		if !set[b] {
			t.Errorf("firstBytes missed %q", b)
		}
	}
	if set['a'] || set['x'] {
		t.Error("firstBytes added bytes no match opens with")
	}
	if requires(parsed(t, regexp.MustCompile(`a:|b`)), ":") || !requires(parsed(t, regexp.MustCompile(`x+ (?:a|b):\d`)), ":") {
		t.Error("requires is wrong about ':'")
	}
}
