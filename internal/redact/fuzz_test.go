package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSecrets are injected into the fuzzer's text; one of each family of
// rules.
var fuzzSecrets = []string{
	"AKIA" + "IOSFODNN7EXAMPLE",
	"gh" + "p_" + fake(alnum, 36, 900),
	"sk-" + "proj-" + fake(urlsafe, 64, 901),
	"sk-" + "ant-api03-" + fake(urlsafe, 93, 902) + "AA",
	"xo" + "xb-1234567890-1234567890123-" + fake(alnum, 24, 903),
	"AI" + "za" + fake(urlsafe, 35, 904),
	fakeJWT(),
	"DB_PASSWORD=" + "h7Dk2pQ9" + "zX4mR8vB",
	"https://deploy:" + "Zq8mP2" + "vL9xW4" + "@github.com/acme/app.git",
	fakePEM("RSA PRIVATE KEY", 905),
	fake(alnum, 40, 906),
}

// fuzzSecretValue is the part of an injected secret that must not survive.
func fuzzSecretValue(s string) string {
	switch {
	case strings.HasPrefix(s, "DB_PASSWORD="):
		return strings.TrimPrefix(s, "DB_PASSWORD=")
	case strings.HasPrefix(s, "https://deploy:"):
		return s[len("https://deploy:"):strings.IndexByte(s, '@')]
	}
	return s
}

func FuzzString(f *testing.F) {
	f.Add("plain text with nothing in it", uint8(0))
	f.Add(`{"type":"tool_result","content":"ok\n"}`, uint8(1))
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		out := String(text)
		if again := String(out); again != out {
			t.Fatalf("not idempotent:\n in:  %q\n out: %q\n again: %q", text, out, again)
		}
		if !utf8.ValidString(text) {
			return
		}
		secret := fuzzSecrets[int(which)%len(fuzzSecrets)]
		at := 0
		if len(text) > 0 {
			at = int(which) * 31 % (len(text) + 1)
			for at < len(text) && !utf8.RuneStart(text[at]) {
				at++
			}
		}
		in := text[:at] + "\n" + secret + "\n" + text[at:]
		out = String(in)
		if v := fuzzSecretValue(secret); strings.Contains(out, v) {
			t.Fatalf("secret survives:\n in:  %q\n out: %q", in, out)
		}
		if again := String(out); again != out {
			t.Fatalf("not idempotent with a secret:\n in:  %q\n out: %q\n again: %q", in, out, again)
		}
	})
}
