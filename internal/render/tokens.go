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
