package render

import "unicode/utf8"

// Why 3.3 bytes of ASCII per token: BPE tokenizers (cl100k, o200k, Claude's) average about 4 bytes per token
// on English prose and 3.3–3.8 on source code, paths and JSON; 3.3 never
// falls much below the real count of either, so a load rendered to a
// budget does not overflow the agent's context by surprise. It overcounts
// plain English by about a fifth, which only costs a little content.

// Tokens estimates how many tokens s takes in a BPE tokenizer, erring high:
// ceil(ASCII bytes / 3.3) plus one token per non-ASCII rune (tokenizers
// spend one to three tokens on an accented letter, a CJK character or an
// emoji, rarely less than one).
//
// The estimate is subadditive: Tokens(a+b) <= Tokens(a) + Tokens(b) for any
// strings split at a rune boundary, which is what lets Load add up the cost
// of lines and know the whole text fits.
func Tokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		other++
		i += n
	}
	// Integer ceiling of ascii/3.3, computed as ceil(ascii*10/33).
	return (ascii*10+32)/33 + other
}

// Agents bound the context a session-start hook may add by their own
// measures, not by tokens: Claude Code counts characters (JavaScript string
// length, UTF-16 code units), Codex estimates tokens as bytes / 4. A budget
// in Tokens converts into either exactly enough to be safe, for any text:
// a text of at most B Tokens has at most 3.3·B ASCII bytes, and each
// non-ASCII rune costs it one token while it takes at most two UTF-16 units
// and four bytes. So its length is at most 3.3·B characters and 4·B bytes.

// BudgetForChars is the largest budget whose every text is at most n
// characters long, counted as UTF-16 code units.
func BudgetForChars(n int) int { return max(n, 0) * 10 / 33 }

// BudgetForBytes is the largest budget whose every text is at most n bytes
// long in UTF-8.
func BudgetForBytes(n int) int { return max(n, 0) / 4 }
