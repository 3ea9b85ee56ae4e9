package redact

import (
	"bytes"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// oracleRedactors are the configurations the differential tests compare
// the redactor and the oracle under: the scanner's entropy rule on, off
// and with another threshold, and with a user pattern merged in.
func oracleRedactors(tb testing.TB) []*Redactor {
	tb.Helper()
	var out []*Redactor
	for _, o := range []Options{
		{},
		{DisableEntropy: true},
		{EntropyThreshold: 3.2},
		{Patterns: []Pattern{{Kind: "ticket", Regexp: `TICKET-(\d{4,})`}}},
	} {
		r, err := New(o)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// assertSameAsOracle fails when the redactor finds other spans in s than
// the frozen old code, or when the prefilter finds other literals.
func assertSameAsOracle(t testing.TB, rs []*Redactor, s string) {
	t.Helper()
	if got, want := presentKeys(s), oldPresentKeys(s); got != want {
		t.Fatalf("presentKeys(%q) = %b, the oracle %b", shorten(s), got, want)
	}
	for k, r := range rs {
		if got, want := r.find(s), r.oldFind(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("redactor %d, %q:\n got  %v\n want %v", k, shorten(s), got, want)
		}
	}
}

// oracleFragments are the pieces random texts are made of: secrets of
// every rule, their prefixes and near misses, literals of the prefilter,
// JSON escapes, the words of run's special cases around its length
// thresholds, non-ASCII and invalid UTF-8.
var oracleFragments = func() []string {
	f := []string{
		" ", " ", " ", "\n", "\t", "\\n", "\\\"", "\\\\\"", "\\u003e", "\\u00", "\\", "\"", "'", "`",
		"=", "==", ":", "::", ":=", "=>", "://", ".", ",", ";", "(", ")", "[", "]", "{", "}", "&", "|", "@", "/", "_", "-", "--", "+",
		"AKIA", "ASIA", "AIza", "GOCSPX-", "ghp_", "gho_", "github_pat_", "glpat-", "glagent-", "xoxb-", "xapp-",
		"eyJhbGciOi.eyJzdWIiOi.c2ln", "eyJhbGciO.eyJzdWIiOi.c2ln", "sk-", "sk-ant-", "sk-proj-", "sk_live_", "rk_test_", "npm_", "hf_", "eyJ", "eyJhbGciOiJIUzI1NiJ9",
		"-----BEGIN ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "-----BEGIN CERTIFICATE-----", "-----END ",
		"Bearer", "bearer ", "BEARER ", "Basic ", "basic", "Bearer ", "Basi", "Bear", "Bearers", "-u ", "--user ", "--password ", "-p",
		"token", "TOKEN", "password", "DB_PASSWORD", "api_key", "apiKey", "secret", "auth", "Authorization", "author", "token_count",
		"h1:", "base64,", "id", "\"id\":", "sha=", "signature", "https://", "http://user:", "@github.com", "hooks.slack.com/services/",
		"is", "was", "the password is ", " was ", "mysql -u root -p", "sshpass -p ", "mariadb", "dapi", "-us", "SG.", "shpat_", "dckr_pat_", "dop_v1_",
		"→", "é", "日本語", "\xff", "\xe2\x86", "\xc3", "\x00",
		"func", "return", "stock", "b", "B", "bb", "-", "-x", "x-", "a/b", "_x", "1234", "0x1f",
	}
	for _, s := range fuzzSecrets {
		f = append(f, s, s[:len(s)/2], s[:len(s)-1])
	}
	for _, k := range keywordSecrets {
		f = append(f, k.in, k.in[:len(k.in)*2/3])
	}
	return f
}()

// oracleText strings together fragments and runs of random token bytes,
// with lengths around minKey, scheme's 5 and 6 and minEntropyLen.
func oracleText(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(24) {
		switch r.IntN(4) {
		case 0:
			alphabet := []string{alnum, urlsafe, b64, lowerNum, hexDigits, upperNum, "Bb" + alnum}[r.IntN(7)]
			n := []int{1, 4, 5, 6, 7, 9, 10, 11, 23, 24, 25, 40}[r.IntN(12)] + r.IntN(2)
			b.WriteString(fake(alphabet, n, r.Uint64()))
		default:
			b.WriteString(oracleFragments[r.IntN(len(oracleFragments))])
		}
	}
	return b.String()
}

// TestSameAsOracle: the redactor finds the very spans the old code found,
// in random texts of secret-like fragments, the benchmarks' texts and,
// when present, every line and event text of the corpus.
func TestSameAsOracle(t *testing.T) {
	rs := oracleRedactors(t)
	r := rand.New(rand.NewPCG(11, 12))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for range n {
		assertSameAsOracle(t, rs, oracleText(r))
	}
	for _, s := range append(benchEvents(1<<20, true), backfillTexts(t, 2<<20)...) {
		assertSameAsOracle(t, rs, s)
	}
	for _, s := range fuzzSecrets {
		assertSameAsOracle(t, rs, s)
	}
}

func TestCorpusSameAsOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus takes a while")
	}
	rs := oracleRedactors(t)[:2]
	for _, s := range corpusTexts(t) {
		assertSameAsOracle(t, rs, s)
	}
	for _, f := range corpusFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range bytes.Lines(data) {
			assertSameAsOracle(t, rs, string(line))
		}
	}
}

func FuzzSameAsOracle(f *testing.F) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 50 {
		f.Add(oracleText(r))
	}
	for _, s := range fuzzSecrets {
		f.Add(s)
	}
	rs := oracleRedactors(f)
	f.Fuzz(func(t *testing.T, s string) {
		assertSameAsOracle(t, rs, s)
	})
}

// TestSpecificTakesMinKey: a key specific matches takes minKey bytes or
// more of the run it starts in, which shortPlain relies on to pass over
// shorter runs; a new key rule that broke it fails here even when the
// differential tests' fragments lack its prefix.
func TestSpecificTakesMinKey(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	texts := []string{}
	for range 20000 {
		texts = append(texts, oracleText(r))
	}
	texts = append(texts, fuzzSecrets...)
	for _, k := range keywordSecrets {
		texts = append(texts, k.in)
	}
	matched := 0
	for _, s := range texts {
		sc := scanner{s: s}
		for p := range len(s) {
			if e, kind := sc.specific(p); e > p {
				matched++
				if run := spanOf(s, p, cRun) - p; run < minKey {
					t.Fatalf("%s at %d of %q takes %d bytes of its run, under minKey", kind, p, shorten(s), run)
				}
			}
		}
	}
	if matched == 0 {
		t.Fatal("no key matched")
	}
}
