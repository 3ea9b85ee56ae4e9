package redact

import (
	"encoding/base64"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The high-entropy rule is the safety net for keys of formats we do not
// know. Transcripts are full of random-looking strings that are not
// secrets — git commit ids, UUIDs, digests, message and tool-call ids,
// signatures, base64 images — so a run is a candidate only when it passes
// cheap shape tests, and the entropy is computed last.
const (
	minEntropyLen = 24
	// maxEntropyLen: longer runs are data (images, archives, encrypted
	// blobs) rather than credentials, which are a few hundred bytes at most.
	maxEntropyLen = 512
	// minTransitions is the least share of neighbouring letters and digits
	// whose class (lower, upper, digit) changes, not counting a capital
	// followed by a small letter. Random base62 changes at 45% of
	// positions, random lower-case or upper-case with digits at 40%;
	// identifiers (ThreadSafeFinalize, my_var_2) and words stay far below.
	// Set where the shared transcripts and Go's own sources showed few
	// false positives and random tokens are still caught (see
	// TestHighEntropyRecall).
	minTransitions = 0.25
)

// clog2[c] = c·log2(c), so that the entropy of a run of length n is
// log2(n) - Σ clog2[count]/n.
var clog2 = func() (t [maxEntropyLen + 1]float64) {
	for c := 2; c <= maxEntropyLen; c++ {
		t[c] = float64(c) * math.Log2(float64(c))
	}
	return t
}()

// idPrefixes start ids that are random by design but no secret: Anthropic
// message, tool-use and request ids, OpenAI completion, response, call,
// file and assistant ids, and friends.
var idPrefixes = []string{
	"msg_", "toolu_", "srvtoolu_", "req_", "call_", "chatcmpl-", "resp_", "rs_",
	"fc_", "ws_", "file_", "file-", "asst_", "thread_", "run_", "step_", "batch_",
	"org-", "user_", "sess_", "ses_", "prt_", "evt_", "cus_", "pi_", "ch_", "sub_",
	"sha1-", "sha256-", "sha384-", "sha512-",
}

// idNames end names whose values are ids, hashes or signatures.
var idNames = []string{
	"id", "ids", "uuid", "hash", "sha", "digest", "checksum", "etag", "signature",
	"integrity", "fingerprint", "commit", "nonce", "cursor",
	"version", "revision", "rev", "sum",
}

// highEntropy redacts the run s[i:j] (byte classes acc) when it looks like
// random key material, and returns where scanning resumes.
func (sc *scanner) highEntropy(i, j int, acc uint8) int {
	if !sc.entropy || j-i < minEntropyLen || j-i > maxEntropyLen ||
		acc&cDigit == 0 || acc&cAlpha == 0 || acc&cNotHex == 0 {
		return j
	}
	s := sc.s
	run := s[i:j]
	for _, p := range idPrefixes {
		if strings.HasPrefix(run, p) {
			return j
		}
	}
	// The context before the run counts only if it was not redacted
	// itself, or a second pass would judge the run differently.
	if i >= 3 && s[i-1] == ':' && class[s[i-2]]&cDigit != 0 && class[s[i-3]]&cLower != 0 &&
		(i == 3 || class[s[i-4]]&cAlnum == 0) && !sc.redactedAfter(i-3) {
		return j // a Go checksum: h1:…=, and the t1:, r1: of go mod download
	}
	if i >= 7 && s[i-7:i] == "base64," && !sc.redactedAfter(i-7) { // data: URL
		return j
	}
	if run[0] == '/' && strings.Count(run, "/") >= 3 { // an absolute path
		return j
	}
	if !randomShape(run, sc.threshold) {
		return j
	}
	if sc.idName(i) {
		return j
	}
	// Take base64 padding along.
	e := j
	for k := 0; k < 2 && e < len(s) && s[e] == '='; k++ {
		e++
	}
	if e < len(s) && class[s[e]]&cRun != 0 {
		e = j
	}
	if sc.benignBase64(s[i:e]) {
		return e
	}
	sc.emit(i, e, KindHighEntropy)
	return e
}

// benignBase64 reports whether tok is base64 of something that is not a
// secret: text (a payload, a JSON document) that holds no secret itself,
// or an image or a PDF (a test fixture). Random key material decodes to
// bytes that are neither. Issue 11: base64 of ordinary text and a 1×1 PNG
// were redacted as high-entropy.
func (sc *scanner) benignBase64(tok string) bool {
	var dec []byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(tok); err == nil {
			dec = b
			break
		}
	}
	if len(dec) < 8 {
		return false
	}
	for _, magic := range []string{"\x89PNG\r\n", "\xff\xd8\xff", "GIF87a", "GIF89a", "%PDF-"} {
		if strings.HasPrefix(string(dec), magic) {
			return true
		}
	}
	if string(dec[:4]) == "RIFF" && len(dec) >= 12 && string(dec[8:12]) == "WEBP" {
		return true
	}
	if !utf8.Valid(dec) {
		return false
	}
	printable := 0
	for _, r := range string(dec) {
		if unicode.IsPrint(r) || r == '\n' || r == '\t' || r == '\r' {
			printable++
		}
	}
	if printable*10 < utf8.RuneCount(dec)*9 {
		return false
	}
	// Text: benign unless it holds a secret (a base64'd .env or token).
	inner := scanner{s: string(dec), entropy: sc.entropy, threshold: sc.threshold}
	inner.scan()
	return len(inner.spans) == 0 && len(extraSpans(inner.s)) == 0
}

// randomShape reports whether run looks like random key material. The run
// is cut at its symbols (+/_-) into segments: hex segments of 6 or more
// (commit ids, UUID parts, build hashes inside paths) are left out, and
// what remains must be long enough, change character class often enough
// inside its segments and have enough entropy.
func randomShape(run string, threshold float64) bool {
	var counts [128]uint16
	kept, pairs, changes, symbols, longest := 0, 0, 0, 0, 0
	for a := 0; a < len(run); {
		if class[run[a]]&cSym != 0 {
			symbols++
			a++
			continue
		}
		b := spanOf(run, a, cAlnum)
		seg := run[a:b]
		a = b
		if len(seg) >= 6 && isHex(seg) {
			continue
		}
		kept += len(seg)
		pairs += len(seg) - 1
		longest = max(longest, len(seg))
		prev := class[seg[0]] & cAlnum
		counts[seg[0]]++
		for k := 1; k < len(seg); k++ {
			c := seg[k]
			counts[c]++
			cl := class[c] & cAlnum
			// A capital followed by small letters starts a word; every
			// other change of class counts.
			if cl != prev && (prev != cUpper || cl != cLower) {
				changes++
			}
			prev = cl
		}
	}
	// Random base64 has a symbol in 32 characters and long stretches
	// without: many symbols or only short segments make a path, a model
	// name (qwen3-coder-480b-a35b-v1) or a date.
	if kept < minEntropyLen-4 || longest < 12 || symbols*10 > len(run)+10 ||
		float64(changes) < minTransitions*float64(pairs) || wordLike(run) {
		return false
	}
	sum := 0.0
	for _, c := range counts {
		sum += clog2[c]
	}
	h := math.Log2(float64(kept)) - sum/float64(kept)
	return h >= entropyThreshold(kept, threshold)
}

// entropyThreshold lowers threshold (meant for 32 characters and more) for
// shorter runs, whose entropy cannot exceed log2 of their length: random
// base62 of 20 characters has about 4.0 bits, of 24 about 4.3, of 32
// about 4.6.
func entropyThreshold(n int, threshold float64) float64 {
	return threshold - max(0, 4.6-math.Log2(float64(n)))
}

// redactedAfter reports whether a span found so far ends after pos.
func (sc *scanner) redactedAfter(pos int) bool {
	k := len(sc.spans)
	return k > 0 && sc.spans[k-1].end > pos
}

// idName reports whether the run at s[i:] is the value of a name such as
// "id", "uuid", "signature" or "hash" ("id":"…", sha=…).
func (sc *scanner) idName(i int) bool {
	s := sc.s
	b := i
	if b > 0 && (s[b-1] == '"' || s[b-1] == '\'') {
		b--
		for k := 0; k < 8 && b > 0 && s[b-1] == '\\'; k++ {
			b--
		}
	}
	for k := 0; k < 2 && b > 0 && s[b-1] == ' '; k++ {
		b--
	}
	if b == 0 || (s[b-1] != ':' && s[b-1] != '=') {
		return false
	}
	ns, ne, _ := nameBefore(s, b-1)
	if ne == ns || sc.redactedAfter(ns) {
		return false // the name itself is redacted: a second pass sees none
	}
	var buf [maxName]byte
	n := lowerAlnum(buf[:0], s[ns:ne])
	for _, sfx := range idNames {
		if hasSuffix(n, sfx) {
			return true
		}
	}
	// Encrypted or signed blobs the agent keeps for itself: Claude's
	// thinking signatures, Codex's encrypted_content, Copilot's
	// reasoningOpaque.
	return contains(n, "signature") || contains(n, "encrypted") || contains(n, "opaque")
}

// wordLike reports whether run reads as words, the way identifiers do
// (isGreaterThanOrEqualToMinNormal64, BenchmarkReadSlice1000Int32s,
// python3_utils_v2): most of its letters and digits sit in lower-case runs
// of three or more (a capital may lead), and those runs have the vowels of
// language. Random base62 has about 30% of its characters in such runs,
// with a vowel in four or five letters.
func wordLike(run string) bool {
	total, inWords, vowels := 0, 0, 0
	for a := 0; a < len(run); {
		k := class[run[a]]
		if k&cAlnum == 0 {
			a++
			continue
		}
		b := a
		if k&cUpper != 0 && a+1 < len(run) && class[run[a+1]]&cLower != 0 {
			b++
		}
		e := spanOf(run, b, cLower)
		if e == a {
			e = a + 1 // a digit or a capital on its own
		} else if e-a >= 3 {
			inWords += e - a
			for _, c := range []byte(run[a:e]) {
				switch c | 0x20 {
				case 'a', 'e', 'i', 'o', 'u', 'y':
					vowels++
				}
			}
		}
		total += e - a
		a = e
	}
	return total > 0 && 10*inWords >= 6*total && 10*vowels >= 3*inWords
}
