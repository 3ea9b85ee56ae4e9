package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// This file holds the rules that need context: a value labelled by a
// secret-sounding name (NAME=value, "name": "value", --name value), an
// Authorization header, and a password in a URL.

const (
	// maxValue bounds a labelled value: longer ones are data, not a secret
	// (keys with a known format are found wherever they are).
	maxValue = 1024
	// maxName bounds the name looked at before a separator.
	maxName = 64
)

// separator looks at the '=' or ':' at s[i] and returns where scanning
// resumes after a redaction or a URL, or 0 to go on at i+1.
func (sc *scanner) separator(i int) int {
	s := sc.s
	n := len(s)
	next := byte(0)
	if i+1 < n {
		next = s[i+1]
	}
	prev := byte(0)
	if i > 0 {
		prev = s[i-1]
	}
	end := i + 1
	if s[i] == ':' {
		switch {
		case next == '/' && i+2 < n && s[i+2] == '/':
			return sc.url(i)
		case next == ':':
			return i + 2 // a path such as Token::new
		case prev == ':':
			return 0
		case next == '=':
			end = i + 2
		}
	} else {
		switch prev {
		case '=', '!', '<', '>', ':', '+', '*', '/', '%', '|', '&', '^':
			return 0 // a comparison, or ':=' seen at its ':'
		}
		switch next {
		case '=':
			return i + 2 // a comparison, or base64 padding
		case '>':
			end = i + 2
		}
	}
	b, e, letters := nameBefore(s, i)
	if !mayBeSecretName(letters) {
		return 0 // the common case: "type":, "content":, x = 1
	}
	flags, ok := secretName(s[b:e])
	if !ok {
		return 0
	}
	strict := s[i] == '=' && end == i+1 && prev != ' ' && prev != '\t' && next != ' ' && next != '\t'
	return sc.value(flags, end, strict)
}

// nameBefore returns where the name that ends just before the separator at
// s[i] starts and ends (spaces and a closing quote, JSON-escaped or not,
// may sit in between), and the set of letters in it, as bits
// 1<<(letter-'a').
func nameBefore(s string, i int) (start, end int, letters uint32) {
	b := i
	for k := 0; k < 2 && b > 0 && (s[b-1] == ' ' || s[b-1] == '\t'); k++ {
		b--
	}
	if b > 0 && (s[b-1] == '"' || s[b-1] == '\'' || s[b-1] == '`') {
		b--
		for k := 0; k < 8 && b > 0 && s[b-1] == '\\'; k++ {
			b-- // the quote was escaped, maybe more than once
		}
	}
	e := b
	for b > 0 && e-b < maxName {
		c := s[b-1]
		k := class[c]
		if k&cAlpha != 0 {
			letters |= 1 << ((c | 0x20) - 'a')
		} else if k&cDigit == 0 && c != '_' && c != '-' {
			break // also at '.': config.password, self.token; auth.ts:9: is a file
		}
		b--
	}
	return b, e, letters
}

// secretWordLetters holds, for each word hasSecretWord looks for, the set
// of its letters: a name that lacks a letter of every word cannot hold one.
var secretWordLetters = func() (sets [9]uint32) {
	for i, w := range []string{"secret", "token", "pass", "pwd", "privatekey", "apikey", "accesskey", "auth", "credential"} {
		for _, c := range w {
			sets[i] |= 1 << (c - 'a')
		}
	}
	return sets
}()

// mayBeSecretName is a cheap test on the letters of a name that rules out
// most names before secretName looks at them.
func mayBeSecretName(letters uint32) bool {
	for _, set := range secretWordLetters {
		if letters&set == set {
			return true
		}
	}
	return false
}

// Flags of a secret name that change how its value is read.
const (
	nameAuthorization = 1 << iota // an Authorization header: "Bearer …"
	nameAWSSecret                 // aws_secret_access_key, SecretAccessKey
	namePassword                  // a password: short values count too
)

// secretName reports whether name, a variable, key, header or flag name,
// says that its value is a secret. Names are compared lower-cased with only
// their letters and digits, so API_KEY, api-key and apiKey all read
// "apikey".
func secretName(name string) (flags uint8, ok bool) {
	if len(name) < 3 {
		return 0, false
	}
	var buf [maxName]byte
	n := lowerAlnum(buf[:0], name)
	pass := passName(n)
	if !hasSecretWord(n) && !pass || ignoredName(n) {
		return 0, false
	}
	if pass || contains(n, "passw") || contains(n, "pwd") {
		flags |= namePassword
	}
	if contains(n, "authoriz") {
		flags |= nameAuthorization
	}
	if contains(n, "secretaccesskey") {
		flags |= nameAWSSecret
	}
	return flags, true
}

// passName reports whether n ends in "pass" as a word (ADMIN_PASS,
// db_pass, SMTPPass), which hasSecretWord's "passw" misses; bypass and
// the like are words of their own.
func passName(n []byte) bool {
	if !hasSuffix(n, "pass") {
		return false
	}
	for _, w := range []string{"bypass", "compass", "surpass", "overpass", "underpass", "firstpass", "singlepass", "multipass", "onepass", "twopass"} {
		if hasSuffix(n, w) {
			return false
		}
	}
	return true
}

// hasPrefix, hasSuffix and contains work on a lower-cased name or value in
// a stack buffer without turning it into a string, which would allocate.
func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

func hasSuffix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[len(b)-len(p):]) == p
}

func contains(b []byte, p string) bool {
	for i := 0; i+len(p) <= len(b); i++ {
		if b[i] == p[0] && string(b[i:i+len(p)]) == p {
			return true
		}
	}
	return false
}

func hasSecretWord(n []byte) bool {
	for i := 0; i+3 <= len(n); i++ {
		r := n[i:]
		switch r[0] {
		case 's':
			if hasPrefix(r, "secret") {
				return true
			}
		case 't':
			if hasPrefix(r, "token") {
				return true
			}
		case 'p':
			if hasPrefix(r, "passw") || hasPrefix(r, "pwd") || hasPrefix(r, "privatekey") {
				return true
			}
		case 'a':
			if hasPrefix(r, "apikey") || hasPrefix(r, "accesskey") {
				return true
			}
			// auth, oauth, authorization, but not author(s).
			if hasPrefix(r, "auth") && (!hasPrefix(r, "author") || hasPrefix(r, "authoriz")) {
				return true
			}
		case 'c':
			if hasPrefix(r, "credential") {
				return true
			}
		}
	}
	return false
}

// ignoredSuffixes end names whose value describes a secret rather than
// being one: token_count, secret_name, password_file, auth_type, …
var ignoredSuffixes = []string{
	"count", "tokens", "type", "types", "id", "ids", "uuid", "name", "names",
	"len", "length", "size", "limit", "max", "min", "file", "files", "path",
	"paths", "dir", "url", "uri", "urls", "endpoint", "host", "env", "var",
	"header", "headers", "expiry", "expires", "expiresat", "expiresin",
	"createdat", "updatedat", "issuedat", "ttl", "enabled", "required",
	"mode", "method", "methods", "provider", "providers", "kind", "format", "prefix",
	"usage", "version", "ref", "source", "helper", "policy", "scope",
	"scopes", "hint", "label", "description", "placeholder", "help",
	"message", "error", "status", "timeout", "budget", "field", "fields",
	"strategy", "location", "command", "exists", "set", "present", "stdin",
	"prompt",
}

func ignoredName(n []byte) bool {
	if string(n) == "pwd" || string(n) == "oldpwd" || contains(n, "tokeniz") {
		return true
	}
	for _, sfx := range ignoredSuffixes {
		if hasSuffix(n, sfx) {
			return true
		}
	}
	return false
}

// value looks at the value that starts at s[v] (after the separator) of a
// secret name, and redacts it when it is one. strict is set for NAME=value
// with nothing around '=' (environment, shell, .env, query strings), where
// even a plain word is a literal and not a variable of the program.
func (sc *scanner) value(flags uint8, v int, strict bool) int {
	s := sc.s
	n := len(s)
	for k := 0; k < 8 && v < n && (s[v] == ' ' || s[v] == '\t'); k++ {
		v++
	}
	if v >= n {
		return 0
	}
	vs, ve, quoted := sc.valueSpan(v)
	if ve <= vs {
		return 0
	}
	if e, kind := sc.specific(vs); e > vs && kind != "" {
		if ve-vs <= maxValue {
			e = max(e, ve) // the whole value, whatever follows the key in it
		}
		sc.emit(vs, e, kind)
		return e
	}
	if flags&nameAuthorization != 0 {
		return sc.authorization(vs, ve, quoted)
	}
	val := s[vs:ve]
	if !quoted && ve < n && strings.IndexByte(")]}", s[ve]) >= 0 && strings.ContainsAny(val, "([{") {
		return 0 // a call or an index the stop byte cut: token=get_token(ctx)
	}
	if !secretValue(val, quoted, strict) && !(strict && flags&namePassword != 0 && shortPassword(val)) {
		return 0
	}
	kind := KindSecretAssignment
	if flags&nameAWSSecret != 0 && len(val) == 40 && spanOf(val, 0, cRun) == 40 {
		kind = KindAWSSecretKey
	}
	sc.emit(vs, ve, kind)
	return ve
}

// valueSpan returns the value at s[v:]: the inside of a quoted string on
// one line — the quote may be escaped once or more, as in a transcript
// line (\"…\") or a JSON string inside one (\\\"…\\\") — or else the bytes
// up to the first space, quote, backslash or ",;)]}&|".
func (sc *scanner) valueSpan(v int) (start, end int, quoted bool) {
	s := sc.s
	n := len(s)
	if v >= n {
		return v, v, false
	}
	limit := min(n, v+maxValue+16)
	q := v
	for q < n && q-v < 8 && s[q] == '\\' {
		q++
	}
	if q < n && (s[q] == '"' || s[q] == '\'' || s[q] == '`') {
		c := s[q]
		if q > v {
			if k := strings.Index(s[q+1:limit], s[v:q+1]); k >= 0 {
				return q + 1, q + 1 + k, true
			}
		} else {
			for e := q + 1; e < limit && s[e] != '\n'; e++ {
				if s[e] == c && s[e-1] != '\\' {
					return q + 1, e, true
				}
			}
		}
		v = q + 1
	}
	e := v
	if v >= sc.plainFrom && v < sc.plainTo {
		e = sc.plainTo // known to hold no stop: token=token=token=… is linear
	}
	for e < limit && (class[s[e]]&cStop == 0 || s[e] == '&' && !queryNext(s, e+1)) {
		e++
	}
	sc.plainFrom, sc.plainTo = v, e
	return v, e, false
}

// queryNext reports whether a query parameter (name=) starts at s[i], so
// that the '&' before it ends a value: in "?token=abc&page=2" it does, in
// the .env line "PASSWORD=Tr0ub4dor&3" it does not.
func queryNext(s string, i int) bool {
	e := spanUnderscore(s, i)
	return e > i && e < len(s) && s[e] == '='
}

// secretValue reports whether val, labelled by a secret name, is a secret
// rather than a number, a placeholder, a path or an expression of code.
func secretValue(val string, quoted, strict bool) bool {
	if len(val) < 8 || len(val) > maxValue || placeholder(val) {
		return false
	}
	var acc uint8
	numeric := true
	for i := 0; i < len(val); i++ {
		c := val[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			return false // prose or a description, not a credential
		case '(', '[', '{', '<':
			if !quoted && (!strict || strings.IndexByte(val[i:], closer(c)) >= 0) {
				return false // a call, an index, a generic, a struct
			}
		}
		k := class[c]
		acc |= k
		if k&cDigit == 0 && strings.IndexByte(".,:_+-", c) < 0 {
			numeric = false
		}
	}
	if numeric || acc&cAlpha == 0 || hexLiteral(val) {
		return false // a number, a version, a date
	}
	switch {
	case strings.Contains(val, "://"):
		return false // a URL; its password has a rule of its own
	case val[0] == '/', val[0] == '~', strings.HasPrefix(val, "./"), strings.HasPrefix(val, "../"):
		return false
	}
	if strings.ContainsAny(val, "[{") && strings.ContainsAny(val, "]}") {
		return false // a pattern or a structure: `ya29.[a-z0-9_-]{100,}`
	}
	if (quoted || !strict) && slug(val) {
		return false // 'proxy-handled', "test-key", not-a-real-secret
	}
	if wordy(val) || (!quoted && !strict && identifier(val)) {
		var buf [maxValue]byte
		if l := lowerAlnum(buf[:0], val); hasSecretWord(l) || contains(l, "key") {
			return false // a name for a secret: token=access_token, Socks5Auth
		}
	}
	if quoted {
		return true
	}
	if val[0] == '!' || dottedIdent(val) {
		return false // process.env.TOKEN, settings.SECRET_KEY, self.token
	}
	// A word or identifier: in code and YAML it is a variable or a type
	// (token: AccessToken); only NAME=word is a literal.
	return strict || !wordy(val)
}

// closer is the bracket that closes c.
func closer(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	case '{':
		return '}'
	}
	return '>'
}

// shortPassword reports whether val, the value of NAME=value for a
// password name, is one although under secretValue's 8 bytes
// (DB_PASSWORD=hunter2): 4 bytes or more, not a number, a placeholder or
// a word that names a secret (PASSWORD=password).
func shortPassword(val string) bool {
	if len(val) < 4 || len(val) >= 8 || placeholder(val) || runClass(val)&cAlpha == 0 {
		return false
	}
	var buf [maxValue]byte
	l := lowerAlnum(buf[:0], val)
	switch string(l) {
	case "true", "false", "none", "null", "nil", "empty", "yes", "no", "off", "on", "prompt", "ask":
		return false
	}
	return !hasSecretWord(l) && !passName(l)
}

// hexLiteral reports whether s is a number such as 0x1f or 0x53c2_37ff.
// Beyond 64 bits it is no number a program computes with but key material
// or a digest (an Ethereum private key is 0x + 64 hex digits), which a
// secret name then labels.
func hexLiteral(s string) bool {
	if len(s) < 3 || len(s) > 2+16+3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] != '_' && !isHex(s[i:i+1]) {
			return false
		}
	}
	return true
}

// slug reports whether s is lower-case (or upper-case) words joined by
// '-', '_' or '.'.
func slug(s string) bool {
	acc := runClass(s)
	if acc&cDigit != 0 || (acc&cLower != 0 && acc&cUpper != 0) || !wordy(s) {
		return false
	}
	return strings.ContainsAny(s, "-_.")
}

// identifier reports whether s is made of letters, digits and '_' and
// starts with a letter.
func identifier(s string) bool {
	if class[s[0]]&cAlpha == 0 {
		return false
	}
	for i := 1; i < len(s); i++ {
		if class[s[i]]&cAlnum == 0 && s[i] != '_' {
			return false
		}
	}
	return true
}

// wordy reports whether s is made of letters and _-. only.
func wordy(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if class[c]&cAlpha == 0 && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// lowerAlnum appends the letters and digits of s, lower-cased, to dst.
func lowerAlnum(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch k := class[c]; {
		case k&cUpper != 0:
			dst = append(dst, c+'a'-'A')
		case k&(cLower|cDigit) != 0:
			dst = append(dst, c)
		}
	}
	return dst
}

// dottedIdent reports whether s reads a.b(.c…) with identifiers.
func dottedIdent(s string) bool {
	dots := 0
	start := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if start {
				return false
			}
			dots++
			start = true
		case class[c]&cAlpha != 0 || c == '_' || c == '$':
			start = false
		case class[c]&cDigit != 0:
			if start {
				return false
			}
		default:
			return false
		}
	}
	return dots > 0 && !start
}

// placeholder reports whether v stands for a secret without being one:
// a variable ($TOKEN, ${TOKEN}, %TOKEN%, {{ .Token }}), a hint
// (<your-token>, your_api_key_here), a mask (****, xxxx) or our marker.
func placeholder(v string) bool {
	switch v[0] {
	case '$', '<', '%', '*':
		return true
	}
	if strings.HasPrefix(v, "{{") || strings.HasPrefix(v, markerPrefix) || strings.HasPrefix(v, `\u003c`) {
		return true
	}
	same := true
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			same = false
			break
		}
	}
	if same {
		return true
	}
	if strings.Contains(v, "xxx") || strings.Contains(v, "XXX") || strings.Contains(v, "***") || strings.Contains(v, "...") || strings.Contains(v, "•••") {
		return true
	}
	var buf [maxValue]byte
	l := lowerAlnum(buf[:0], v)
	if hasPrefix(l, "your") || hasSuffix(l, "here") || contains(l, "redacted") || contains(l, "placeholder") ||
		contains(l, "changeme") || contains(l, "getenv") || contains(l, "environ") {
		return true
	}
	switch string(l) {
	case "undefined", "required", "optional", "nullable", "sensitive", "readonly", "disabled", "enabled",
		"notset", "unset", "omitted", "masked", "hidden", "missing", "provided", "configured":
		return true
	}
	return false
}

// authorization redacts the credentials of an Authorization value
// ("Bearer abc…", "Basic dXNl…", "token abc…", or a bare credential).
func (sc *scanner) authorization(vs, ve int, quoted bool) int {
	s := sc.s
	kind := KindBearerToken
	cs := vs
	if w := spanOf(s, vs, cAlpha); w < len(s) && s[w] == ' ' && w > vs {
		if strings.EqualFold(s[vs:w], "basic") {
			kind = KindBasicAuth
		}
		cs = w + 1
		for cs < len(s) && s[cs] == ' ' {
			cs++
		}
		if !quoted {
			_, ve, _ = sc.valueSpan(cs)
		}
	}
	if cs >= ve {
		return 0
	}
	if e, k := sc.specific(cs); e > cs && k != "" {
		e = max(e, ve)
		sc.emit(cs, e, k)
		return e
	}
	cred := s[cs:ve]
	if cs == vs && !secretValue(cred, quoted, false) {
		return 0 // no scheme: judged like any other value
	}
	if len(cred) < 8 || len(cred) > maxValue || placeholder(cred) || strings.ContainsAny(cred, " \t(") {
		return 0
	}
	sc.emit(cs, ve, kind)
	return ve
}

// scheme redacts what follows a bare "Bearer " or "Basic " (a header in a
// log line or a curl command whose name we did not see), when it looks
// like random credentials: "the Bearer of bad news" is prose.
func (sc *scanner) scheme(i, j int) int {
	s := sc.s
	kind := ""
	switch s[i:j] {
	case "Bearer", "bearer", "BEARER":
		kind = KindBearerToken
	case "Basic", "basic", "BASIC":
		kind = KindBasicAuth
	default:
		return 0
	}
	if j+1 >= len(s) || s[j] != ' ' {
		return 0
	}
	cs := j + 1
	if e, k := sc.specific(cs); e > cs && k != "" {
		sc.emit(cs, e, k)
		return e
	}
	ce := cs
	for ce < len(s) && (class[s[ce]]&cRun != 0 || s[ce] == '.' || s[ce] == '~' || s[ce] == '=') {
		ce++
	}
	cred := s[cs:ce]
	if len(cred) < 8 || placeholder(cred) || !random(cred) {
		return 0
	}
	if kind == KindBasicAuth && !basicCredentials(cred) {
		return 0
	}
	sc.emit(cs, ce, kind)
	return ce
}

// basicCredentials reports whether cred is base64 of "user:password".
func basicCredentials(cred string) bool {
	dec, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		dec, err = base64.RawStdEncoding.DecodeString(cred)
	}
	return err == nil && bytes.IndexByte(dec, ':') > 0
}

// random reports whether s mixes at least two of lower case, upper case
// and digits, as credentials do and words (or YOUR_API_TOKEN) do not.
func random(s string) bool {
	acc := runClass(s)
	classes := 0
	for _, c := range [...]uint8{cLower, cUpper, cDigit} {
		if acc&c != 0 {
			classes++
		}
	}
	return classes >= 2
}

// flag redacts the value of "--password value" style flags ("--name=value"
// is seen as an assignment), and the password of curl's "-u user:password".
func (sc *scanner) flag(i, j int) int {
	s := sc.s
	if j >= len(s) || s[j] != ' ' {
		return 0
	}
	if f := s[i:j]; f == "-u" || f == "--user" || f == "--proxy-user" {
		return sc.userPassword(j + 1)
	}
	if j-i < 3 || s[i+1] != '-' {
		return 0
	}
	flags, ok := secretName(s[i:j])
	if !ok {
		return 0
	}
	v := j + 1
	if v < len(s) && s[v] == '-' {
		return 0 // the next flag: this one was a switch
	}
	return sc.value(flags, v, true)
}

// userPassword redacts the password of the "user:password" at s[v:], as
// given to curl -u; "git push -u origin main" and "docker run -u 1000:1000"
// have none.
func (sc *scanner) userPassword(v int) int {
	s := sc.s
	q := 0
	if v < len(s) && (s[v] == '"' || s[v] == '\'') {
		q = 1
	}
	e := v + q
	for e < len(s) && e-v < maxValue && s[e] > ' ' && s[e] != '"' && s[e] != '\'' && s[e] != '\\' {
		e++
	}
	colon := strings.IndexByte(s[v+q:e], ':')
	if colon <= 0 || !userName(s[v+q:v+q+colon]) {
		return 0 // date -u +%H:%M is no user
	}
	ps := v + q + colon + 1
	pass := s[ps:e]
	if pass == "" || urlPlaceholder(pass) || spanOf(pass, 0, cDigit) == len(pass) {
		return 0
	}
	sc.emit(ps, e, KindBasicAuth)
	return e
}

// userName reports whether s can be a user name or an e-mail address.
func userName(s string) bool {
	if class[s[0]]&cAlnum == 0 {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; class[c]&cAlnum == 0 && strings.IndexByte("._@-", c) < 0 {
			return false
		}
	}
	return true
}

// url redacts the password of scheme://user:password@host and the secret
// path of a Slack webhook. s[i:i+3] is "://".
func (sc *scanner) url(i int) int {
	s := sc.s
	n := len(s)
	a := i + 3
	if i == 0 || class[s[i-1]]&cAlnum == 0 {
		return a
	}
	if rest := s[a:]; strings.HasPrefix(rest, "hooks.slack.com/") {
		for _, p := range []string{"services/", "workflows/", "triggers/"} {
			if strings.HasPrefix(rest[len("hooks.slack.com/"):], p) {
				ps := a + len("hooks.slack.com/") + len(p)
				pe := ps
				for pe < n && (class[s[pe]]&cAlnum != 0 || s[pe] == '/' || s[pe] == '_' || s[pe] == '-') {
					pe++
				}
				if pe-ps >= 20 {
					sc.emit(ps, pe, KindSlackWebhook)
					return pe
				}
			}
		}
		return a
	}
	at := -1
	for e := a; e < n && e-a < 512; e++ {
		c := s[e]
		if c == '@' {
			at = e
			continue
		}
		if c <= ' ' || strings.IndexByte("/?#\"'`\\<>{}|^[]", c) >= 0 {
			break
		}
	}
	if at < 0 {
		return a
	}
	colon := strings.IndexByte(s[a:at], ':')
	if colon < 0 {
		return a
	}
	ps := a + colon + 1
	if ps >= at || urlPlaceholder(s[ps:at]) {
		return a
	}
	if e, kind := sc.specific(ps); e > ps && kind != "" {
		e = max(e, at)
		sc.emit(ps, e, kind)
		return e
	}
	sc.emit(ps, at, KindURLPassword)
	return at
}

func urlPlaceholder(p string) bool {
	switch p[0] {
	case '$', '<', '{', '*', '[':
		return true
	}
	return p == "%s" || strings.Contains(p, "xxx") || strings.Contains(p, "XXX")
}
