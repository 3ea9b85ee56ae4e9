package redact

import (
	"math/bits"
	"strings"
)

// Rules found missing by issue 11's seeded transcript, kept out of the
// scanner's single pass: each starts from a literal that strings.Index
// finds at memory speed, so text without that literal costs one search.
//
//   - key formats: SendGrid (SG.<id>.<secret>; the scanner took only the
//     second part as high-entropy), Databricks (dapi + 32 hex) and
//     Mailchimp (32 hex + "-us" + data centre), whose hex alone looks like
//     a digest and is rightly left alone;
//   - passwords given as command-line flags: mysql's glued -pSECRET and
//     sshpass -p SECRET (--password is a NAME=value and the scanner's);
//   - a secret stated in prose: "the admin password is Tr0ub4dor&3".

// Kinds of the rules below.
const (
	KindSendGridKey   = "sendgrid-key"
	KindDatabricks    = "databricks-token"
	KindMailchimpKey  = "mailchimp-key"
	KindPasswordFlag  = "password-flag"
	KindPasswordProse = "stated-secret"
)

// The kinds of prefixes are listed with them.

// The literals the rules below start from, one bit each in a keySet.
const (
	keySendGrid = iota
	keyDatabricks
	keyMailchimp
	keyMySQL
	keyMariaDB
	keySSHPass
	keyIs
	keyWas
	keyDigitalOceanPAT
	keyDigitalOceanOAuth
	keyShopifyPAT
	keyShopifySecret
	keyShopifyCustom
	keyShopifyPrivate
	keyDocker
	keyScheme
	numKeys
)

var extraKeys = [numKeys]string{
	keySendGrid:          "SG.",
	keyDatabricks:        "dapi",
	keyMailchimp:         "-us",
	keyMySQL:             "mysql",
	keyMariaDB:           "mariadb",
	keySSHPass:           "sshpass",
	keyIs:                " is ",
	keyWas:               " was ",
	keyDigitalOceanPAT:   "dop_v1_",
	keyDigitalOceanOAuth: "doo_v1_",
	keyShopifyPAT:        "shpat_",
	keyShopifySecret:     "shpss_",
	keyShopifyCustom:     "shpca_",
	keyShopifyPrivate:    "shppa_",
	keyDocker:            "dckr_pat_",
	keyScheme:            "://",
}

// keySet says which of extraKeys occur in a text.
type keySet uint32

func (k keySet) has(key int) bool { return k&(1<<key) != 0 }

// keysByFirst and keysBySecond hold, for each byte, the keys that start
// with it and that have it second.
var keysByFirst, keysBySecond [256]keySet

func init() {
	for i, k := range extraKeys {
		keysByFirst[k[0]] |= 1 << i
		keysBySecond[k[1]] |= 1 << i
	}
}

// presentKeys is the rules' keyword prefilter (as gitleaks has): one pass
// over s finds which literals occur at all, so that a rule whose literal
// is absent is not run. It was 16 strings.Index passes, two thirds of the
// redactor's time on clean text; a rule whose literal is absent found
// nothing in its pass, so skipping it changes no result.
func presentKeys(s string) keySet {
	const all = keySet(1)<<numKeys - 1
	var found keySet
	for i := nextCandidate(s, 0, found); i >= 0; i = nextCandidate(s, i+1, found) {
		if found |= confirmKeys(s[i:], found); found == all {
			break
		}
	}
	return found
}

// nextCandidate returns the first i >= from where s[i] and s[i+1] are the
// first two bytes of a literal not in found, or -1. It is the loop over
// every byte of the text, so it makes no call: a call inside it made the
// compiler keep its counters in memory, not in registers.
func nextCandidate(s string, from int, found keySet) int {
	if from >= len(s) {
		return -1
	}
	first, second := &keysByFirst, &keysBySecond
	m := first[s[from]] &^ found
	for i := from + 1; i < len(s); i++ {
		c := s[i]
		if m&second[c] != 0 {
			return i - 1
		}
		m = first[c] &^ found
	}
	return -1
}

// confirmKeys returns the literals not in found that start t.
func confirmKeys(t string, found keySet) keySet {
	var out keySet
	for m := keysByFirst[t[0]] & keysBySecond[t[1]] &^ found; m != 0; {
		j := bits.TrailingZeros32(uint32(m))
		m &^= 1 << j
		if strings.HasPrefix(t, extraKeys[j]) {
			out |= 1 << j
		}
	}
	return out
}

// extraSpans returns the spans of the rules above, sorted.
func extraSpans(s string) []span {
	return extraSpansOf(s, presentKeys(s))
}

// extraSpansOf runs the rules whose literal keys says s holds.
func extraSpansOf(s string, keys keySet) []span {
	if keys == 0 {
		return nil
	}
	var out []span
	if keys.has(keySendGrid) {
		out = sendGrid(s, out)
	}
	if keys.has(keyDatabricks) {
		out = databricks(s, out)
	}
	if keys.has(keyMailchimp) {
		out = mailchimp(s, out)
	}
	out = passwordFlags(s, keys, out)
	out = statedSecrets(s, keys, out)
	out = prefixedTokens(s, keys, out)
	if keys.has(keyScheme) {
		out = urlUserTokens(s, out)
	}
	return sortSpans(out)
}

// prefixed is a token format known by its prefix and the length and
// alphabet of what follows.
type prefixed struct {
	key  int  // its prefix, in extraKeys
	hex  bool // else [A-Za-z0-9_-]
	min  int
	kind string
}

// prefixes lists formats the high-entropy rule misses: their bodies are
// hex (which it leaves to digests) or split at '_' into short segments.
var prefixes = []prefixed{
	{keyDigitalOceanPAT, true, 64, "digitalocean-token"},
	{keyDigitalOceanOAuth, true, 64, "digitalocean-token"},
	{keyShopifyPAT, true, 32, "shopify-token"},
	{keyShopifySecret, true, 32, "shopify-token"},
	{keyShopifyCustom, true, 32, "shopify-token"},
	{keyShopifyPrivate, true, 32, "shopify-token"},
	{keyDocker, false, 20, "docker-token"},
}

func prefixedTokens(s string, keys keySet, out []span) []span {
	for _, f := range prefixes {
		if !keys.has(f.key) {
			continue
		}
		prefix := extraKeys[f.key]
		for i := 0; ; {
			k := strings.Index(s[i:], prefix)
			if k < 0 {
				break
			}
			p := i + k
			b := p + len(prefix)
			i = b
			var e int
			if f.hex {
				e = b
				for e < len(s) && isHex(s[e:e+1]) {
					e++
				}
			} else {
				e = spanURLSafe(s, b)
			}
			if tokenStart(s, p) && e-b >= f.min && tokenEnd(s, e) {
				out = append(out, span{p, e, f.kind})
				i = e
			}
		}
	}
	return out
}

// urlUserTokens finds a token given as a URL's user with no password
// (https://<token>@host, a Sentry DSN's key, https://ghp_…@github.com):
// 20 bytes or more of hex or of mixed letters and digits.
func urlUserTokens(s string, out []span) []span {
	for i := 0; ; {
		k := strings.Index(s[i:], "://")
		if k < 0 {
			return out
		}
		u := i + k + 3
		i = u
		e := spanURLSafe(s, u)
		if e >= len(s) || s[e] != '@' || e-u < 20 {
			continue
		}
		if tok := s[u:e]; isHex(tok) || mixed(tok) && !wordy(tok) {
			out = append(out, span{u, e, KindURLPassword})
			i = e
		}
	}
}

// tokenStart reports whether a token may start at s[i]: the byte before
// is not part of a word.
func tokenStart(s string, i int) bool {
	return i == 0 || class[s[i-1]]&cAlnum == 0 && s[i-1] != '_'
}

func tokenEnd(s string, i int) bool {
	return i >= len(s) || class[s[i]]&cAlnum == 0 && s[i] != '_'
}

func sendGrid(s string, out []span) []span {
	for i := 0; ; {
		k := strings.Index(s[i:], "SG.")
		if k < 0 {
			return out
		}
		p := i + k
		i = p + 3
		if !tokenStart(s, p) {
			continue
		}
		a := spanURLSafe(s, p+3)
		if a-p-3 < 16 || a >= len(s) || s[a] != '.' {
			continue
		}
		b := spanURLSafe(s, a+1)
		if b-a-1 >= 16 && mixed(s[p+3:b]) {
			out = append(out, span{p, b, KindSendGridKey})
			i = b
		}
	}
}

func databricks(s string, out []span) []span {
	for i := 0; ; {
		k := strings.Index(s[i:], "dapi")
		if k < 0 {
			return out
		}
		p := i + k
		i = p + 4
		if !tokenStart(s, p) || p+36 > len(s) || !isHex(s[p+4:p+36]) {
			continue
		}
		e := p + 36
		if e+1 < len(s) && s[e] == '-' && class[s[e+1]]&cDigit != 0 {
			e = spanOf(s, e+1, cDigit)
		}
		if tokenEnd(s, e) {
			out = append(out, span{p, e, KindDatabricks})
			i = e
		}
	}
}

func mailchimp(s string, out []span) []span {
	for i := 0; ; {
		k := strings.Index(s[i:], "-us")
		if k < 0 {
			return out
		}
		p := i + k
		i = p + 3
		e := spanOf(s, p+3, cDigit)
		if e == p+3 || e-p-3 > 2 || !tokenEnd(s, e) || p < 32 || !isHex(s[p-32:p]) || !tokenStart(s, p-32) {
			continue
		}
		out = append(out, span{p - 32, e, KindMailchimpKey})
		i = e
	}
}

// passwordFlags finds mysql-style "-pSECRET" (the password glued to the
// flag; a separate word after -p is the database name) in a command line
// of the mysql family, and "sshpass -p SECRET" or "-pSECRET".
func passwordFlags(s string, keys keySet, out []span) []span {
	for _, key := range []int{keyMySQL, keyMariaDB, keySSHPass} {
		if !keys.has(key) {
			continue
		}
		cmd := extraKeys[key]
		for i := 0; ; {
			k := strings.Index(s[i:], cmd)
			if k < 0 {
				break
			}
			p := i + k
			i = p + len(cmd)
			if !tokenStart(s, p) {
				continue
			}
			// The flags of this command: up to the end of its line or a
			// shell separator.
			end := p + len(cmd)
			for end < len(s) && strings.IndexByte("\n;|&", s[end]) < 0 {
				end++
			}
			for f := p + len(cmd); f < end-2; f++ {
				if s[f] != ' ' || s[f+1] != '-' || s[f+2] != 'p' {
					continue
				}
				v := f + 3
				if cmd == "sshpass" && v < end && s[v] == ' ' {
					v++ // sshpass takes the password as the next word too
				}
				if vs, ve := flagValue(s, v, end); ve > vs && !placeholder(s[vs:ve]) {
					out = append(out, span{vs, ve, KindPasswordFlag})
				}
				break
			}
		}
	}
	return sortSpans(out)
}

// flagValue returns the word at s[v:end], inside its quotes if quoted.
func flagValue(s string, v, end int) (int, int) {
	if v >= end || s[v] == ' ' || s[v] == '-' {
		return v, v
	}
	if q := s[v]; q == '\'' || q == '"' {
		if k := strings.IndexByte(s[v+1:end], q); k > 0 {
			return v + 1, v + 1 + k
		}
		return v, v
	}
	e := v
	for e < end && s[e] != ' ' && s[e] != '\t' {
		e++
	}
	return v, e
}

// statedSecrets finds "<secret word> is <value>" (or "was", or a colon
// after "is"): the value is taken only when it cannot be a plain word
// (it has a digit or a symbol), so that "the password is incorrect" stays.
func statedSecrets(s string, keys keySet, out []span) []span {
	for _, key := range []int{keyIs, keyWas} {
		if !keys.has(key) {
			continue
		}
		verb := extraKeys[key]
		for i := 0; ; {
			k := strings.Index(s[i:], verb)
			if k < 0 {
				break
			}
			p := i + k
			i = p + len(verb)
			w := p
			for w > 0 && (class[s[w-1]]&cAlnum != 0 || s[w-1] == '_') {
				w--
			}
			if w == p {
				continue
			}
			if _, ok := secretName(s[w:p]); !ok && !proseSecretWord(s[w:p]) {
				continue
			}
			v := p + len(verb)
			if v < len(s) && s[v] == ':' {
				v++
			}
			for v < len(s) && s[v] == ' ' {
				v++
			}
			vs, ve, quoted := v, v, false
			if v < len(s) && (s[v] == '"' || s[v] == '\'' || s[v] == '`') {
				if k := strings.IndexByte(s[v+1:min(len(s), v+1+maxValue)], s[v]); k > 0 {
					vs, ve, quoted = v+1, v+1+k, true
				}
			} else {
				for ve < len(s) && ve-vs < maxValue && strings.IndexByte(" \t\r\n\"'`,;)]}", s[ve]) < 0 {
					ve++
				}
				for ve > vs && strings.IndexByte(".!?:", s[ve-1]) >= 0 && (ve == len(s) || s[ve] == ' ' || s[ve] == '\n') {
					ve-- // the sentence's full stop
				}
			}
			if val := s[vs:ve]; len(val) >= 6 && !wordy(val) && !placeholder(val) && (secretValue(val, true, true) || quoted && passphrase(val)) {
				out = append(out, span{vs, ve, KindPasswordProse})
				i = ve
			}
		}
	}
	return sortSpans(out)
}

// proseSecretWord: the words prose uses for a secret that secretName,
// made for variable names, leaves out.
func proseSecretWord(w string) bool {
	switch strings.ToLower(w) {
	case "password", "passphrase", "pin", "passcode", "key":
		return true
	}
	return false
}

func sortSpans(out []span) []span {
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].start < out[j-1].start; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// passphrase reports whether a quoted stated value of several words is a
// passphrase ('correct horse 9 battery') rather than a phrase or code
// (`file + "\n" + snippet`): three or more words of letters and digits,
// single-spaced, at least one digit or one of !#%&*@^~ among them.
func passphrase(val string) bool {
	words := strings.Split(val, " ")
	if len(words) < 3 {
		return false
	}
	marked := false
	for _, w := range words {
		if w == "" {
			return false
		}
		for i := 0; i < len(w); i++ {
			c := w[i]
			switch {
			case class[c]&cAlpha != 0:
			case class[c]&cDigit != 0 || strings.IndexByte("!#%&*@^~", c) >= 0:
				marked = true
			default:
				return false
			}
		}
	}
	return marked
}
