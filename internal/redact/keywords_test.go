package redact

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// keywordSecrets holds, for each literal of extraKeys, a secret in the
// shape of the rule that literal gates and the part that must not survive.
var keywordSecrets = [numKeys]struct{ in, secret string }{
	keySendGrid:          {"SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ012", "SG.aBcDeFgHiJkLmNoPqRsTuV"},
	keyDatabricks:        {"dapi0123456789abcdef0123456789abcdef-2", "dapi0123456789abcdef0123456789abcdef"},
	keyMailchimp:         {"0f9e8d7c6b5a49382716a5b4c3d2e1f0-us14", "0f9e8d7c6b5a49382716a5b4c3d2e1f0"},
	keyMySQL:             {"mysql -u root -pS3cr3tPass shop", "S3cr3tPass"},
	keyMariaDB:           {"mariadb -u root -pS3cr3tPass shop", "S3cr3tPass"},
	keySSHPass:           {"sshpass -p 'Wq9!zzTop' ssh deploy@host", "Wq9!zzTop"},
	keyIs:                {"the admin password is Tr0ub4dor&3.", "Tr0ub4dor&3"},
	keyWas:               {"my passphrase was 'correct horse 9 battery'", "correct horse 9 battery"},
	keyDigitalOceanPAT:   {"dop_v1_" + strings.Repeat("0a1b2c3d", 8), strings.Repeat("0a1b2c3d", 8)},
	keyDigitalOceanOAuth: {"doo_v1_" + strings.Repeat("9f8e7d6c", 8), strings.Repeat("9f8e7d6c", 8)},
	keyShopifyPAT:        {"shpat_" + strings.Repeat("a1b2c3d4", 4), strings.Repeat("a1b2c3d4", 4)},
	keyShopifySecret:     {"shpss_" + strings.Repeat("e5f6a7b8", 4), strings.Repeat("e5f6a7b8", 4)},
	keyShopifyCustom:     {"shpca_" + strings.Repeat("c9d0e1f2", 4), strings.Repeat("c9d0e1f2", 4)},
	keyShopifyPrivate:    {"shppa_" + strings.Repeat("a3b4c5d6", 4), strings.Repeat("a3b4c5d6", 4)},
	keyDocker:            {"dckr_pat_Xq2-Lm9_Rt4Zp8Wk1Vn6", "Xq2-Lm9_Rt4Zp8Wk1Vn6"},
	keyScheme:            {"https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42", "0123456789abcdef0123456789abcdef"},
}

// TestKeywordRulesStillCatch: the prefilter gates every rule of extra.go on
// its literal; a secret in each rule's shape is still redacted alone, at
// the start, in the middle and at the end of a long clean text, and next to
// a look-alike of another rule's literal.
func TestKeywordRulesStillCatch(t *testing.T) {
	clean := strings.Repeat("func (s *Server) handle(w http.ResponseWriter) { do(\"data\") }\n", 60)
	for key, tt := range keywordSecrets {
		if tt.in == "" {
			t.Fatalf("no secret for the literal %q: add one", extraKeys[key])
		}
		if !presentKeys(tt.in).has(key) {
			t.Errorf("%q: literal %q not found", tt.in, extraKeys[key])
		}
		for _, in := range []string{
			tt.in,
			tt.in + "\n" + clean,
			clean + tt.in + "\n" + clean,
			clean + tt.in,
			"see dapi-server, SG.md and us-east-1: " + tt.in,
		} {
			out, n := Default.Redact(in)
			if n == 0 || strings.Contains(out, tt.secret) {
				t.Errorf("literal %q: %q survived in %q", extraKeys[key], tt.secret, shorten(out))
			}
		}
	}
}

// TestPresentKeys: the prefilter finds a literal exactly where
// strings.Contains does, in texts made of the literals' pieces.
func TestPresentKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		s := keywordSoup(r)
		got := presentKeys(s)
		for k, lit := range extraKeys {
			if got.has(k) != strings.Contains(s, lit) {
				t.Fatalf("%q: literal %q found %v, Contains says %v", s, lit, got.has(k), !got.has(k))
			}
		}
	}
}

// TestPrefilterChangesNothing: running only the rules whose literal is
// present gives the very spans that running every rule gives, on the
// benchmark's texts (with and without secrets), the secrets above and
// texts made of the literals' pieces.
func TestPrefilterChangesNothing(t *testing.T) {
	const all = keySet(1)<<numKeys - 1
	texts := append(benchEvents(1<<20, true), benchEvents(256<<10, false)...)
	for _, tt := range keywordSecrets {
		texts = append(texts, tt.in)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		texts = append(texts, keywordSoup(r))
	}
	for _, s := range texts {
		if got, want := extraSpans(s), extraSpansOf(s, all); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: prefiltered %v, every rule %v", shorten(s), got, want)
		}
	}
}

// keywordSoup strings together literals, their prefixes, secrets of the
// rules and random bytes.
func keywordSoup(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(12) {
		switch r.IntN(5) {
		case 0:
			lit := extraKeys[r.IntN(numKeys)]
			b.WriteString(lit[:1+r.IntN(len(lit))])
		case 1:
			b.WriteString(extraKeys[r.IntN(numKeys)])
		case 2:
			b.WriteString(keywordSecrets[r.IntN(numKeys)].in)
		default:
			for range r.IntN(6) {
				b.WriteByte(" -:/._aSGdpsuimyhwe0123456789\n"[r.IntN(30)])
			}
		}
	}
	return b.String()
}

func shorten(s string) string {
	if len(s) > 200 {
		return s[:100] + "…" + s[len(s)-100:]
	}
	return s
}
