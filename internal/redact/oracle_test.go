package redact

// The redactor as it was before the scanner skipped short runs without a
// call and presentKeys kept its loop free of calls (commit 4a1cbbf),
// frozen as the oracle of the differential tests: the functions that
// changed, renamed with "old"; what they call did not change.

import (
	"math/bits"
	"strings"
)

// oldFind is find as it was.
func (r *Redactor) oldFind(s string) []span {
	sc := scanner{s: s, entropy: r.entropy, threshold: r.threshold}
	sc.oldScan()
	spans := merge(sc.spans, extraSpansOf(s, oldPresentKeys(s)))
	if len(r.patterns) == 0 {
		return spans
	}
	return merge(spans, r.patternSpans(s))
}

func oldPresentKeys(s string) keySet {
	const all = keySet(1)<<numKeys - 1
	var found keySet
	for i := 0; i+1 < len(s); i++ {
		m := keysByFirst[s[i]] & keysBySecond[s[i+1]] &^ found
		for m != 0 {
			j := bits.TrailingZeros32(uint32(m))
			m &^= 1 << j
			if strings.HasPrefix(s[i:], extraKeys[j]) {
				if found |= 1 << j; found == all {
					return found
				}
			}
		}
	}
	return found
}

func (sc *scanner) oldScan() {
	s := sc.s
	n := len(s)
	i := 0
	for i < n {
		k := class[s[i]]
		if k&cRun == 0 {
			if k&cSep != 0 {
				if e := sc.separator(i); e > i {
					i = e
					continue
				}
			}
			i++
			continue
		}
		j := i + 1
		acc := k
		for j < n {
			k = class[s[j]]
			if k&cRun == 0 {
				break
			}
			acc |= k
			j++
		}
		i = sc.oldRun(i, j, acc)
	}
}
func (sc *scanner) oldRun(i, j int, acc uint8) int {
	s := sc.s
	// A token glued to a JSON escape ("\nAKIA…", "\u003eghp_…") starts
	// after the escape, never in it: a redaction that ate the escape's
	// letter would break the JSON around it.
	if i > 0 && s[i-1] == '\\' {
		if p := escapeEnd(s, i); p > i {
			if p >= j {
				return j
			}
			i = p
			acc = runClass(s[i:j])
		}
	}
	if starts[s[i]] {
		if e, kind := sc.specific(i); e > i {
			sc.emit(i, e, kind)
			return e
		}
	}
	if j-i == 5 || j-i == 6 {
		if e := sc.scheme(i, j); e > i {
			return e
		}
	}
	if s[i] == '-' && j-i >= 2 {
		if e := sc.flag(i, j); e > i {
			return e
		}
	}
	// Tokens also start after a symbol inside the run: "/ghp_…", "_sk-…".
	// None is shorter than minKey.
	if acc&cSym != 0 {
		for p := i + 1; p <= j-minKey; p++ {
			if class[s[p-1]]&cSym == 0 || !starts[s[p]] {
				continue
			}
			if e, kind := sc.specific(p); e > p {
				// What precedes the key is a run of its own once the key is
				// replaced; judge it as such so that a second pass agrees.
				sc.highEntropy(i, p, runClass(s[i:p]))
				sc.emit(p, e, kind)
				return e
			}
		}
	}
	if j-i < minEntropyLen {
		return j
	}
	return sc.highEntropy(i, j, acc)
}
