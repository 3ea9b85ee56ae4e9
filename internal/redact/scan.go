package redact

import "strings"

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
	// The first spans are kept in the scanner, which lives on the stack,
	// so that text with a secret or two costs no allocation for them; a
	// slice given to the scanner would be moved to the heap on every call.
	n     int
	first [4]span
	more  []span
}

func (sc *scanner) emit(start, end int, kind string) {
	sp := span{start: start, end: end, kind: kind}
	if sc.n < len(sc.first) {
		sc.first[sc.n] = sp
	} else {
		sc.more = append(sc.more, sp)
	}
	sc.n++
}

// list returns the spans found, or nil when there are none.
func (sc *scanner) list() []span {
	if sc.n == 0 {
		return nil
	}
	k := min(sc.n, len(sc.first))
	return append(append(make([]span, 0, sc.n), sc.first[:k]...), sc.more...)
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
		i = sc.run(i, j, acc)
	}
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
		if e, kind := specific(s, i); e > i {
			sc.emit(i, e, kind)
			return e
		}
	}
	if j-i == 5 || j-i == 6 {
		if e := sc.scheme(i, j); e > i {
			return e
		}
	}
	if s[i] == '-' && j-i > 2 && s[i+1] == '-' {
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
			if e, kind := specific(s, p); e > p {
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
// material nearly always does, kebab-case words never.
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
// space).
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
func specific(s string, p int) (int, string) {
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
			if e := spanOf(s, p+4, cAlnum); e-p-4 >= 30 {
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
					if e := spanURLSafe(s, b); e-b >= 20 && mixed(s[b:e]) {
						return e, KindGitLabToken
					}
				}
			}
		}
	case 'x':
		if (rest[1] == 'o' && rest[2] == 'x' && rest[4] == '-' && strings.IndexByte("abprse", rest[3]) >= 0) ||
			strings.HasPrefix(rest, "xapp-") {
			if e := spanDash(s, p+5); e-p-5 >= 10 && mixed(s[p+5:e]) {
				return e, KindSlackToken
			}
		}
	case 's':
		switch {
		case strings.HasPrefix(rest, "sk-ant-"):
			if e := spanURLSafe(s, p+7); e-p-7 >= 20 {
				return e, KindAnthropicKey
			}
		case rest[1] == 'k' && rest[2] == '-':
			if e := spanURLSafe(s, p+3); e-p-3 >= 20 && mixed(s[p+3:e]) {
				return e, KindOpenAIKey
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
			return pemEnd(s, p)
		}
	}
	return 0, ""
}

// jwtEnd returns the end of the JWT (or JWE) at s[p:], or 0: a header of
// base64url JSON ("eyJ…"), a payload and a signature, which may be empty
// for an unsigned token.
func jwtEnd(s string, p int) int {
	e := spanURLSafe(s, p)
	if e-p < 10 || e >= len(s) || s[e] != '.' {
		return 0
	}
	e2 := spanURLSafe(s, e+1)
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
	pemBegin = "-----BEGIN "
	pemEndTo = "-----END "
	// pemWindow bounds the search for the END line: the largest private
	// keys (RSA 8192, PGP) are well under it, and a bound keeps text full
	// of BEGIN lines without END (code, docs) linear.
	pemWindow = 32 << 10
)

// pemEnd returns the end of the PEM block at s[p:] and KindPrivateKey when
// its label says PRIVATE KEY, or 0. Public blocks (certificates, public
// keys) are not matched: they are scanned like any text, since anything
// could sit between their lines; their base64 lines may then be taken for
// high-entropy secrets, which loses nothing an agent needs.
func pemEnd(s string, p int) (int, string) {
	ls := p + len(pemBegin)
	le := pemLabelEnd(s, ls)
	if le == ls || !strings.HasPrefix(s[le:], "-----") {
		return 0, ""
	}
	label := s[ls:le]
	if !strings.Contains(label, "PRIVATE KEY") {
		return 0, ""
	}
	const kind = KindPrivateKey
	body := le + 5
	window := s[body:min(len(s), body+pemWindow)]
	off := 0
	for {
		k := strings.Index(window[off:], pemEndTo)
		if k < 0 {
			break
		}
		e := body + off + k + len(pemEndTo)
		if strings.HasPrefix(s[e:], label) && strings.HasPrefix(s[e+len(label):], "-----") {
			return e + len(label) + 5, kind
		}
		off += k + len(pemEndTo)
	}
	// No END line (the text was cut): take the body for as long as it
	// looks like one, whole tokens only, so that whatever follows starts
	// at a token boundary.
	return pemBodyEnd(s, body), kind
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
