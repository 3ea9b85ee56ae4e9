package redact

import (
	"math/bits"
	"strings"
)

// Byte classes. A "run" is a maximal sequence of token bytes
// [A-Za-z0-9+/_-]: the alphabet of base64, base64url and of every key
// format we know, so a secret always sits inside one run (JWTs and PEM
// blocks, which cross '.' and newlines, are followed by their own rules).
const (
	cLower  = 1 << iota // a-z
	cUpper              // A-Z
	cDigit              // 0-9
	cSym                // + / _ -
	cNotHex             // letters outside a-f: a run without them is hex
	cSep                // = and :, where assignments and URLs are found
	cStop               // ends an unquoted value

	cAlpha = cLower | cUpper
	cAlnum = cAlpha | cDigit
	cRun   = cAlnum | cSym
)

var class = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = cLower
		t[c-'a'+'A'] = cUpper
		if c > 'f' {
			t[c] |= cNotHex
			t[c-'a'+'A'] |= cNotHex
		}
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = cDigit
	}
	for _, c := range "+/_-" {
		t[c] = cSym
	}
	t['='] = cSep
	t[':'] = cSep
	for _, c := range " \t\r\n\"'`\\,;)]}&|" {
		t[c] |= cStop
	}
	return t
}()

// scanner finds the spans to redact in s, in order and disjoint: it only
// moves forward and resumes after each span.
type scanner struct {
	s         string
	entropy   bool
	threshold float64
	spans     []span // nil, and so no allocation, until a secret is found

	// s[plainFrom:plainTo] holds no byte that ends an unquoted value.
	plainFrom, plainTo int

	// The last search for a PEM END line: from where, and what it found.
	pemSearched    bool
	pemFrom, pemAt int
}

func (sc *scanner) emit(start, end int, kind string) {
	sc.spans = append(sc.spans, span{start: start, end: end, kind: kind})
}

func (sc *scanner) scan() {
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
		// The bytes of the eight after s[i] that end its run, if any.
		var ends uint8
		if i+9 <= n {
			ends = ^runMask(s[i+1 : i+9])
		}
		j := i + 1 + bits.TrailingZeros8(ends)
		if ends == 0 {
			j = runEnd(s, i+1)
		}
		if shortPlain(s, i, j) {
			// Unless the byte that ended the run is a separator, it is
			// passed over here and now.
			i = j
			if j < n && class[s[j]]&cSep == 0 {
				i++
			}
			continue
		}
		i = sc.run(i, j, runClass(s[i:j]))
	}
}

// isRun is 1 for the bytes of a run.
var isRun = func() (t [256]uint8) {
	for c := range t {
		if class[c]&cRun != 0 {
			t[c] = 1
		}
	}
	return t
}()

// runMask has bit k set when t[k] is a run byte; len(t) is 8. scan finds
// where a run ends in this mask: a loop that stopped at the end byte by
// byte mispredicted its exit at nearly every word, and most runs end
// within eight bytes.
func runMask(t string) uint8 {
	return isRun[t[0]] | isRun[t[1]]<<1 | isRun[t[2]]<<2 | isRun[t[3]]<<3 |
		isRun[t[4]]<<4 | isRun[t[5]]<<5 | isRun[t[6]]<<6 | isRun[t[7]]<<7
}

// runEnd returns the end of the run that goes on at s[j].
func runEnd(s string, j int) int {
	for ; j+8 <= len(s); j += 8 {
		if m := ^runMask(s[j : j+8]); m != 0 {
			return j + bits.TrailingZeros8(m)
		}
	}
	for j < len(s) && class[s[j]]&cRun != 0 {
		j++
	}
	return j
}

// shortPlain reports whether run would return j for the run s[i:j] without
// looking at it, so that scan need not call it: most runs are words, and
// the call was a third of the scanner's time on prose and source. Such a
// run is shorter than any key specific matches (minKey), so it holds no
// key at its start or after a symbol and is too short for the entropy
// rule; it starts with neither a flag's '-' nor "Bearer"'s or "Basic"'s
// b, and no JSON escape before it moves its start.
func shortPlain(s string, i, j int) bool {
	return j-i < minKey && s[i] != '-' && (s[i]|0x20 != 'b' || j-i < 5 || j-i > 6) &&
		(i == 0 || s[i-1] != '\\')
}

// run looks at the run s[i:j], whose byte classes OR to acc, and returns
// where scanning resumes.
func (sc *scanner) run(i, j int, acc uint8) int {
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

func runClass(s string) uint8 {
	var acc uint8
	for i := 0; i < len(s); i++ {
		acc |= class[s[i]]
	}
	return acc
}

// escapeEnd returns where the token after a JSON escape starts, given that
// s[i-1] is a backslash, or i when s[i:] does not continue an escape.
func escapeEnd(s string, i int) int {
	switch s[i] {
	case 'n', 'r', 't', 'b', 'f', '/':
		return i + 1
	case 'u':
		if i+5 <= len(s) && isHex(s[i+1:i+5]) {
			return i + 5
		}
	}
	return i
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if class[c]&cNotHex != 0 || class[c]&cAlnum == 0 {
			return false
		}
	}
	return true
}

// spanOf returns the end of the longest prefix of s[i:] whose bytes all
// have a class in mask.
func spanOf(s string, i int, mask uint8) int {
	for i < len(s) && class[s[i]]&mask != 0 {
		i++
	}
	return i
}

// spanURLSafe returns the end of the run of [A-Za-z0-9_-] at s[i:].
func spanURLSafe(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if class[c]&cAlnum == 0 && c != '_' && c != '-' {
			break
		}
		i++
	}
	return i
}

// spanUnderscore returns the end of the run of [A-Za-z0-9_] at s[i:].
func spanUnderscore(s string, i int) int {
	for i < len(s) && (class[s[i]]&cAlnum != 0 || s[i] == '_') {
		i++
	}
	return i
}

// spanDash returns the end of the run of [A-Za-z0-9-] at s[i:].
func spanDash(s string, i int) int {
	for i < len(s) && (class[s[i]]&cAlnum != 0 || s[i] == '-') {
		i++
	}
	return i
}

// mixed reports whether s has a digit or an upper-case letter: random key
// material nearly always does, kebab-case words never. Callers look at the
// first 64 bytes of a key only, so that a long run of words, tried at each
// of its dashes, costs linear time.
func mixed(s string) bool {
	for i := 0; i < len(s); i++ {
		if class[s[i]]&(cDigit|cUpper) != 0 {
			return true
		}
	}
	return false
}

// minKey is the least a key specific matches takes of the run it starts
// in: a JWT's header (the run ends at its '.') or "-----BEGIN" (at the
// space). scan relies on it to pass over shorter runs (shortPlain): a key
// rule that matched fewer bytes would need to lower it.
const minKey = 10

// starts holds the first bytes of the keys specific knows.
var starts = func() (t [256]bool) {
	for _, c := range "AGgxsrnhe-" {
		t[c] = true
	}
	return t
}()

var gitlabPrefixes = []string{
	"glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-",
	"glimt-", "glagent-", "gloas-", "glffct-",
}

// specific matches a key of a known format starting at s[p], where p is at
// a token boundary. It returns the end of the key and its kind, or 0.
func (sc *scanner) specific(p int) (int, string) {
	s := sc.s
	rest := s[p:]
	if len(rest) < 8 {
		return 0, ""
	}
	switch rest[0] {
	case 'A':
		switch rest[:4] {
		case "AKIA", "ASIA", "ABIA", "ACCA":
			e := p + 4
			for e < len(s) && e < p+20 && class[s[e]]&(cUpper|cDigit) != 0 {
				e++
			}
			if e == p+20 && (e == len(s) || class[s[e]]&cAlnum == 0) {
				return e, KindAWSAccessKey
			}
		case "AIza":
			if e := spanURLSafe(s, p+4); e-p-4 >= 35 {
				return e, KindGoogleAPIKey
			}
		}
	case 'G':
		if strings.HasPrefix(rest, "GOCSPX-") {
			if e := spanURLSafe(s, p+7); e-p-7 >= 20 {
				return e, KindGoogleOAuth
			}
		}
	case 'g':
		switch {
		case rest[1] == 'h' && rest[3] == '_' && strings.IndexByte("pousr", rest[2]) >= 0:
			// ghp_xxxx…x is the masked token of docs and screenshots.
			if e := spanOf(s, p+4, cAlnum); e-p-4 >= 30 && !placeholder(s[p+4:e]) {
				return e, KindGitHubToken
			}
		case strings.HasPrefix(rest, "github_pat_"):
			if e := spanUnderscore(s, p+11); e-p-11 >= 30 {
				return e, KindGitHubToken
			}
		case rest[1] == 'l':
			for _, pfx := range gitlabPrefixes {
				if strings.HasPrefix(rest, pfx) {
					b := p + len(pfx)
					if w := spanURLSafe(s[:min(len(s), b+64)], b); w-b >= 20 && mixed(s[b:w]) {
						return spanURLSafe(s, w), KindGitLabToken
					}
				}
			}
		}
	case 'x':
		if (rest[1] == 'o' && rest[2] == 'x' && rest[4] == '-' && strings.IndexByte("abprse", rest[3]) >= 0) ||
			strings.HasPrefix(rest, "xapp-") {
			if w := spanDash(s[:min(len(s), p+69)], p+5); w-p-5 >= 10 && mixed(s[p+5:w]) {
				return spanDash(s, w), KindSlackToken
			}
		}
	case 's':
		switch {
		case strings.HasPrefix(rest, "sk-ant-"):
			if e := spanURLSafe(s, p+7); e-p-7 >= 20 {
				return e, KindAnthropicKey
			}
		case rest[1] == 'k' && rest[2] == '-':
			if w := spanURLSafe(s[:min(len(s), p+67)], p+3); w-p-3 >= 20 && mixed(s[p+3:w]) {
				return spanURLSafe(s, w), KindOpenAIKey
			}
		case strings.HasPrefix(rest, "sk_live_") || strings.HasPrefix(rest, "sk_test_"):
			if e := spanOf(s, p+8, cAlnum); e-p-8 >= 10 {
				return e, KindStripeKey
			}
		}
	case 'r':
		if strings.HasPrefix(rest, "rk_live_") || strings.HasPrefix(rest, "rk_test_") {
			if e := spanOf(s, p+8, cAlnum); e-p-8 >= 10 {
				return e, KindStripeKey
			}
		}
	case 'n':
		if strings.HasPrefix(rest, "npm_") {
			if e := spanOf(s, p+4, cAlnum); e-p-4 >= 30 {
				return e, KindNPMToken
			}
		}
	case 'h':
		if strings.HasPrefix(rest, "hf_") {
			if e := spanOf(s, p+3, cAlnum); e-p-3 >= 30 {
				return e, KindHuggingFace
			}
		}
	case 'e':
		if strings.HasPrefix(rest, "eyJ") {
			if e := jwtEnd(s, p); e > p {
				return e, KindJWT
			}
		}
	case '-':
		if strings.HasPrefix(rest, pemBegin) {
			return sc.pemEnd(p)
		}
	}
	return 0, ""
}

// jwtEnd returns the end of the JWT (or JWE) at s[p:], or 0: a header of
// base64url JSON ("eyJ…"), a payload and a signature, which may be empty
// for an unsigned token.
func jwtEnd(s string, p int) int {
	// Bounds on the header and the payload keep text full of "eyJ" that
	// is no JWT linear.
	e := spanURLSafe(s[:min(len(s), p+maxJWTHeader)], p)
	if e-p < 10 || e >= len(s) || s[e] != '.' {
		return 0
	}
	e2 := spanURLSafe(s[:min(len(s), e+1+maxJWTPayload)], e+1)
	if e2-e-1 < 10 || e2 >= len(s) || s[e2] != '.' {
		return 0
	}
	e = spanURLSafe(s, e2+1)
	for seg := 3; seg < 5 && e+1 < len(s) && s[e] == '.' && class[s[e+1]]&cAlnum != 0; seg++ {
		e = spanURLSafe(s, e+1)
	}
	return e
}

const (
	maxJWTHeader  = 1 << 10
	maxJWTPayload = 64 << 10
)

const (
	pemBegin = "-----BEGIN "
	pemEndTo = "-----END "
	// pemWindow bounds the distance to the END line: the largest private
	// keys (RSA 8192, PGP) are well under it, and a BEGIN line quoted in
	// code does not swallow the rest of a long text.
	pemWindow = 32 << 10
)

// pemEnd returns the end of the PEM block at s[p:] and KindPrivateKey when
// its label says PRIVATE KEY, or 0. Public blocks (certificates, public
// keys) are not matched: they are scanned like any text, since anything
// could sit between their lines; their base64 lines may then be taken for
// high-entropy secrets, which loses nothing an agent needs.
func (sc *scanner) pemEnd(p int) (int, string) {
	s := sc.s
	ls := p + len(pemBegin)
	le := pemLabelEnd(s, ls)
	if le == ls || !strings.HasPrefix(s[le:], "-----") {
		return 0, ""
	}
	label := s[ls:le]
	if !strings.Contains(label, "PRIVATE KEY") {
		return 0, ""
	}
	body := le + 5
	for k := sc.nextPEMEnd(body); k >= 0 && k-body <= pemWindow; k = sc.nextPEMEnd(k + 1) {
		e := k + len(pemEndTo)
		if strings.HasPrefix(s[e:], label) && strings.HasPrefix(s[e+len(label):], "-----") {
			return e + len(label) + 5, KindPrivateKey
		}
	}
	// No END line (the text was cut): take the body for as long as it
	// looks like one, whole tokens only, so that whatever follows starts
	// at a token boundary.
	return pemBodyEnd(s, body), KindPrivateKey
}

// nextPEMEnd returns the index of the first "-----END " at or after from,
// or -1. The last answer is kept: scanning only moves forward, so text
// with many BEGIN lines and few END lines is searched once, not once per
// BEGIN.
func (sc *scanner) nextPEMEnd(from int) int {
	if sc.pemSearched && from >= sc.pemFrom && (sc.pemAt < 0 || sc.pemAt >= from) {
		return sc.pemAt
	}
	k := strings.Index(sc.s[from:], pemEndTo)
	if k >= 0 {
		k += from
	}
	sc.pemSearched, sc.pemFrom, sc.pemAt = true, from, k
	return k
}

func pemLabelEnd(s string, i int) int {
	e := i
	for e < len(s) && e-i < 64 {
		c := s[e]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != ' ' {
			break
		}
		e++
	}
	return e
}

// pemBodyEnd returns the end of the whitespace-separated tokens of base64
// and PEM header bytes ("Proc-Type: 4,ENCRYPTED") at s[i:]; newlines may be
// real or escaped as in JSON.
func pemBodyEnd(s string, i int) int {
	end := i
	q := i
	for q < len(s) {
		switch c := s[q]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			q++
			continue
		case c == '\\' && q+1 < len(s) && (s[q+1] == 'n' || s[q+1] == 'r' || s[q+1] == 't'):
			q += 2
			continue
		}
		t := q
		for t < len(s) && (class[s[t]]&cAlnum != 0 || strings.IndexByte("+/=:,-", s[t]) >= 0) {
			t++
		}
		if t == q || (t < len(s) && !pemSep(s, t)) {
			break
		}
		q = t
		end = t
	}
	return end
}

func pemSep(s string, i int) bool {
	switch s[i] {
	case ' ', '\t', '\n', '\r':
		return true
	case '\\':
		return i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r' || s[i+1] == 't')
	}
	return false
}
