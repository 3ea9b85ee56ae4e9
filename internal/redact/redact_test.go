package redact

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

const (
	alnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	urlsafe   = alnum + "-_"
	b64       = alnum + "+/"
	upperNum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	lowerNum  = "abcdefghijklmnopqrstuvwxyz0123456789"
	hexDigits = "0123456789abcdef"
)

// fake returns n characters of alphabet drawn from a generator seeded by
// seed: format-valid, obviously fake key material, made at test time so
// that no secret-looking literal sits in the repository.
func fake(alphabet string, n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func fakeJWT() string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	payload := enc.EncodeToString([]byte(`{"sub":"1234567890","name":"Fake User","iat":1516239022}`))
	return header + "." + payload + "." + fake(urlsafe, 43, 7)
}

func fakePEM(label string, seed uint64) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "-----\n")
	for i := range 6 {
		b.WriteString(fake(b64, 64, seed+uint64(i)))
		b.WriteByte('\n')
	}
	b.WriteString(fake(b64, 20, seed+99) + "==\n")
	b.WriteString("-----END " + label + "-----")
	return b.String()
}

// jsonString returns s as a JSON string literal, the way it sits in a
// transcript line: newlines escaped as \n.
func jsonString(t testing.TB, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Contexts a token of a known format is tried in; %s is the token.
var tokenContexts = []string{
	"curl -s -X POST https://api.example.com/v1/run -d 'key=%s' -o out.json",
	"HOME=/home/dev\nSERVICE_KEY=%s\nPATH=/usr/bin:/bin",
	`{"type":"tool_result","content":"$ env | grep KEY\nSERVICE_KEY=%s\n$ ls\nmain.go"}`,
	`curl -H "X-Api-Key: %s" https://api.example.com/v1/models`,
	`client = Client(api_key="%s", timeout=30)`,
	`	const fallbackKey = "%s" // TODO remove`,
	"# .env\nSERVICE_KEY=%s\nDEBUG=false",
	"2024-05-01T10:00:00Z INFO uploader: using credential %s for bucket assets",
	"Here is the key you asked for: %s. Keep it safe.",
	"deploy:\n  key: %s\n  region: eu-west-1",
	"\\n%s\\n",
}

func TestRedactKnownFormats(t *testing.T) {
	type secret struct {
		kind  string
		value string
	}
	secrets := []secret{
		{KindAWSAccessKey, "AKIA" + "IOSFODNN7EXAMPLE"},
		{KindAWSAccessKey, "ASIA" + fake(upperNum, 16, 1)},
		{KindOpenAIKey, "sk-" + "proj-" + fake(urlsafe, 74, 2) + "T3Blbk" + "FJ" + fake(urlsafe, 74, 3)},
		{KindOpenAIKey, "sk-" + "svcacct-" + fake(urlsafe, 90, 4)},
		{KindOpenAIKey, "sk-" + fake(alnum, 20, 5) + "T3Blbk" + "FJ" + fake(alnum, 20, 6)},
		{KindAnthropicKey, "sk-" + "ant-api03-" + fake(urlsafe, 93, 8) + "AA"},
		{KindAnthropicKey, "sk-" + "ant-admin01-" + fake(urlsafe, 93, 9) + "AA"},
		{KindGoogleAPIKey, "AI" + "za" + fake(urlsafe, 35, 10)},
		{KindGoogleOAuth, "GOC" + "SPX-" + fake(urlsafe, 28, 11)},
		{KindGitHubToken, "gh" + "p_" + fake(alnum, 36, 12)},
		{KindGitHubToken, "gh" + "o_" + fake(alnum, 36, 13)},
		{KindGitHubToken, "gh" + "u_" + fake(alnum, 36, 14)},
		{KindGitHubToken, "gh" + "s_" + fake(alnum, 36, 15)},
		{KindGitHubToken, "gh" + "r_" + fake(alnum, 36, 16)},
		{KindGitHubToken, "github" + "_pat_" + fake(alnum, 22, 17) + "_" + fake(alnum, 59, 18)},
		{KindGitLabToken, "gl" + "pat-" + fake(urlsafe, 20, 19)},
		{KindGitLabToken, "gl" + "dt-" + fake(urlsafe, 20, 20)},
		{KindGitLabToken, "gl" + "rt-" + fake(urlsafe, 20, 21)},
		{KindSlackToken, "xo" + "xb-" + "1234567890-1234567890123-" + fake(alnum, 24, 22)},
		{KindSlackToken, "xo" + "xp-" + "1234567890-1234567890123-1234567890123-" + fake(hexDigits, 32, 23)},
		{KindSlackToken, "xo" + "xa-2-" + fake(alnum, 40, 24)},
		{KindSlackToken, "xo" + "xr-" + fake(alnum, 40, 25)},
		{KindSlackToken, "xo" + "xs-" + fake(alnum, 40, 26)},
		{KindSlackToken, "xa" + "pp-1-A0123ABCDEF-1234567890123-" + fake(hexDigits, 64, 27)},
		{KindStripeKey, "sk" + "_live_" + fake(alnum, 24, 28)},
		{KindStripeKey, "rk" + "_live_" + fake(alnum, 24, 29)},
		{KindNPMToken, "np" + "m_" + fake(alnum, 36, 30)},
		{KindHuggingFace, "h" + "f_" + fake(alnum[:52], 34, 31)},
		{KindJWT, fakeJWT()},
	}
	for _, sec := range secrets {
		for _, ctx := range tokenContexts {
			in := strings.Replace(ctx, "%s", sec.value, 1)
			t.Run(sec.kind, func(t *testing.T) {
				assertRedacted(t, in, sec.value, sec.kind)
			})
		}
	}
}

func TestRedactLabelled(t *testing.T) {
	value := "h7Dk2pQ9" + "zX4mR8vB"
	awsSecret := "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:S3cr3t-Pa55"))
	bearer := fake(urlsafe, 32, 40)
	tests := []struct {
		name, in, secret, kind, keep string
	}{
		{"export", "export API_TOKEN=" + value + " && ./deploy.sh", value, KindSecretAssignment, "API_TOKEN=[REDACTED:secret-assignment]"},
		{"dotenv", "DB_PASSWORD=" + value + "\nDB_HOST=localhost", value, KindSecretAssignment, "DB_PASSWORD=[REDACTED:secret-assignment]"},
		{"dotenv ampersand", "DB_PASSWORD=Tr0ub4dor&3x9Q\nDB_HOST=localhost", "Tr0ub4dor&3x9Q", KindSecretAssignment, "DB_PASSWORD=[REDACTED:secret-assignment]\n"},
		{"dotenv word", "SMTP_PASSWORD=correcthorsebattery", "correcthorsebattery", KindSecretAssignment, "SMTP_PASSWORD=[REDACTED:secret-assignment]"},
		{"json", `{"client_secret": "` + value + `", "client_id": "abc"}`, value, KindSecretAssignment, `"client_secret": "[REDACTED:secret-assignment]"`},
		{"json escaped", jsonString(t, `{"password":"`+value+`"}`), value, KindSecretAssignment, `password\":\"[REDACTED:secret-assignment]\"`},
		{"double escaped json", jsonString(t, `{"content":`+jsonString(t, `{"api_key": "`+value+`"}`)+`}`), value, KindSecretAssignment, `api_key\\\": \\\"[REDACTED:secret-assignment]\\\"`},
		{"yaml", "database:\n  password: " + value + "\n  user: app", value, KindSecretAssignment, "password: [REDACTED:secret-assignment]"},
		{"yaml quoted word", "database:\n  password: \"hunterhunter\"\n", "hunterhunter", KindSecretAssignment, `password: "[REDACTED:secret-assignment]"`},
		{"flag", "mysql-backup --password " + value + " --host db", value, KindSecretAssignment, "--password [REDACTED:secret-assignment] --host"},
		{"flag equals", "tool login --token=" + value, value, KindSecretAssignment, "--token=[REDACTED:secret-assignment]"},
		{"python", `    api_key = "` + value + `"`, value, KindSecretAssignment, `api_key = "[REDACTED:secret-assignment]"`},
		{"go", `	Password := "` + value + `"`, value, KindSecretAssignment, `Password := "[REDACTED:secret-assignment]"`},
		{"query", "GET /callback?access_token=" + value + "&state=xyz HTTP/1.1", value, KindSecretAssignment, "access_token=[REDACTED:secret-assignment]&state=xyz"},
		{"header", "X-Auth-Token: " + value, value, KindSecretAssignment, "X-Auth-Token: [REDACTED:secret-assignment]"},
		{"private key name", "PRIVATE_KEY=" + value, value, KindSecretAssignment, "PRIVATE_KEY="},
		{"credentials", `"credentials": "` + value + `"`, value, KindSecretAssignment, `"credentials": "`},
		{"passwd", "passwd=" + value, value, KindSecretAssignment, "passwd="},
		{"ini aws", "[default]\naws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE\naws_secret_access_key = " + awsSecret + "\n", awsSecret, KindAWSSecretKey, "aws_secret_access_key = [REDACTED:aws-secret-key]"},
		{"env aws", "AWS_SECRET_ACCESS_KEY=" + awsSecret, awsSecret, KindAWSSecretKey, "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]"},
		{"sts json", `{"Credentials": {"AccessKeyId": "ASIA` + fake(upperNum, 16, 41) + `", "SecretAccessKey": "` + awsSecret + `"}}`, awsSecret, KindAWSSecretKey, `"SecretAccessKey": "[REDACTED:aws-secret-key]"`},
		{"curl bearer", `curl -H "Authorization: Bearer ` + bearer + `" https://api.example.com`, bearer, KindBearerToken, "Authorization: Bearer [REDACTED:bearer-token]\""},
		{"json bearer", `{"headers":{"Authorization":"Bearer ` + bearer + `"}}`, bearer, KindBearerToken, `"Authorization":"Bearer [REDACTED:bearer-token]"`},
		{"log bearer", "DEBUG request headers: authorization=Bearer " + bearer + " accept=*/*", bearer, KindBearerToken, "Bearer [REDACTED:bearer-token] accept"},
		{"bare bearer", "sending Bearer " + bearer + " to upstream", bearer, KindBearerToken, "sending Bearer [REDACTED:bearer-token] to"},
		{"basic", "Authorization: Basic " + basic, basic, KindBasicAuth, "Authorization: Basic [REDACTED:basic-auth]"},
		{"bare basic", `wget --header="Basic ` + basic + `" https://x`, basic, KindBasicAuth, `"Basic [REDACTED:basic-auth]"`},
		{"token scheme", "Authorization: token " + value, value, KindBearerToken, "Authorization: token [REDACTED:bearer-token]"},
		{"github header", "Authorization: token gh" + "p_" + fake(alnum, 36, 42), "gh" + "p_" + fake(alnum, 36, 42), KindGitHubToken, "Authorization: token [REDACTED:github-token]"},
		{"in a certificate", "-----BEGIN CERTIFICATE-----\nMIIB\nAKIA" + "IOSFODNN7EXAMPLE\n-----END CERTIFICATE-----", "AKIA" + "IOSFODNN7EXAMPLE", KindAWSAccessKey, "MIIB\n[REDACTED:aws-access-key]\n-----END"},
		{"curl user", "curl -u admin:" + value + " https://api.example.com", value, KindBasicAuth, "curl -u admin:[REDACTED:basic-auth] https"},
		{"curl user quoted", `curl --user "admin:` + value + `" https://x`, value, KindBasicAuth, `--user "admin:[REDACTED:basic-auth]"`},
		{"connection string", "Server=db;Database=app;User Id=app;Password=" + value + ";Encrypt=true", value, KindSecretAssignment, "Password=[REDACTED:secret-assignment];Encrypt"},
		{"jdbc", "jdbc:postgresql://db/app?user=fred&password=" + value + "&ssl=true", value, KindSecretAssignment, "password=[REDACTED:secret-assignment]&ssl"},
		{"npmrc", "//registry.npmjs.org/:_authToken=" + value, value, KindSecretAssignment, "_authToken=[REDACTED:secret-assignment]"},
		{"k8s secret", "kind: Secret\ndata:\n  password: " + base64.StdEncoding.EncodeToString([]byte("hunter2-"+value)) + "\n", base64.StdEncoding.EncodeToString([]byte("hunter2-" + value)), KindSecretAssignment, "password: [REDACTED:secret-assignment]"},
		{"pgpassword", "PGPASSWORD=" + value + " psql -h db -U app", value, KindSecretAssignment, "PGPASSWORD=[REDACTED:secret-assignment] psql"},
		{"labelled known format", "OPENAI_API_KEY=sk-" + "proj-" + fake(urlsafe, 60, 43), "sk-" + "proj-" + fake(urlsafe, 60, 43), KindOpenAIKey, "OPENAI_API_KEY=[REDACTED:openai-key]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := assertRedacted(t, tt.in, tt.secret, tt.kind)
			if !strings.Contains(out, tt.keep) {
				t.Errorf("output %q does not keep %q", out, tt.keep)
			}
		})
	}
}

func TestRedactURLs(t *testing.T) {
	pass := "Zq8mP2" + "vL9xW4"
	ghs := "gh" + "s_" + fake(alnum, 36, 50)
	tests := []struct {
		name, in, secret, kind, keep string
	}{
		{"git remote", "git remote add origin https://deploy:" + pass + "@github.com/acme/app.git", pass, KindURLPassword, "https://deploy:[REDACTED:url-password]@github.com/acme/app.git"},
		{"database url", "DATABASE_URL=postgres://app:" + pass + "@db.internal:5432/app?sslmode=disable", pass, KindURLPassword, "postgres://app:[REDACTED:url-password]@db.internal:5432/app"},
		{"json config", `{"redis": "redis://:` + pass + `@cache:6379/0"}`, pass, KindURLPassword, `"redis://:[REDACTED:url-password]@cache:6379/0"`},
		{"log", "level=error msg=\"dial failed\" url=amqp://guest:" + pass + "@mq:5672/ err=timeout", pass, KindURLPassword, "amqp://guest:[REDACTED:url-password]@mq:5672/"},
		{"encoded", "mongodb+srv://admin:" + pass + "%21x@cluster0.example.net/db", pass + "%21x", KindURLPassword, "mongodb+srv://admin:[REDACTED:url-password]@cluster0"},
		{"short", "ftp://anonymous:guest@ftp.example.com/pub", "guest", KindURLPassword, "ftp://anonymous:[REDACTED:url-password]@ftp.example.com/pub"},
		{"token password", "https://x-access-token:" + ghs + "@github.com/acme/app.git", ghs, KindGitHubToken, "https://x-access-token:[REDACTED:github-token]@github.com"},
		{"slack webhook", `curl -X POST -d '{"text":"hi"}' https://hooks.slack.com/services/T0` + fake(upperNum, 8, 51) + "/B0" + fake(upperNum, 8, 52) + "/" + fake(alnum, 24, 53),
			"T0" + fake(upperNum, 8, 51) + "/B0" + fake(upperNum, 8, 52) + "/" + fake(alnum, 24, 53), KindSlackWebhook, "https://hooks.slack.com/services/[REDACTED:slack-webhook]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := assertRedacted(t, tt.in, tt.secret, tt.kind)
			if !strings.Contains(out, tt.keep) {
				t.Errorf("output %q does not keep %q", out, tt.keep)
			}
		})
	}
}

func TestRedactPrivateKeys(t *testing.T) {
	labels := []string{"RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"}
	for i, label := range labels {
		pem := fakePEM(label, uint64(100+10*i))
		contexts := map[string]string{
			"raw":          "$ cat ~/.ssh/id_key\n" + pem + "\n$ ls",
			"json":         `{"type":"tool_result","content":` + jsonString(t, "$ cat key.pem\n"+pem+"\n") + `}`,
			"double json":  jsonString(t, `{"content":`+jsonString(t, pem)+`}`),
			"python":       `key = "` + strings.ReplaceAll(pem, "\n", `\n`) + `"`,
			"service json": `{"type": "service_account", "private_key": ` + jsonString(t, pem+"\n") + `, "client_email": "x@y.iam.gserviceaccount.com"}`,
			"cut":          "-----BEGIN " + label + "-----\n" + strings.Join(strings.Split(pem, "\n")[1:4], "\n"),
			"cut escaped":  jsonString(t, "-----BEGIN "+label+"-----\n"+strings.Join(strings.Split(pem, "\n")[1:4], "\n")),
		}
		for name, in := range contexts {
			t.Run(label+"/"+name, func(t *testing.T) {
				secret := pem
				if strings.HasPrefix(name, "cut") {
					secret = strings.Join(strings.Split(pem, "\n")[1:4], "\n")
				}
				for _, line := range strings.Split(secret, "\n") {
					assertRedacted(t, in, line, KindPrivateKey)
				}
			})
		}
	}
}

func TestRedactHighEntropy(t *testing.T) {
	for i := range 20 {
		tok := fake(alnum, 40, uint64(200+i))
		for _, ctx := range []string{
			"upload key: %s",
			`{"x-custom-header": "%s"}`,
			"CUSTOM_VENDOR_KEY=%s",
			"signing with %s now",
		} {
			in := strings.Replace(ctx, "%s", tok, 1)
			t.Run(in, func(t *testing.T) {
				assertRedacted(t, in, tok, KindHighEntropy)
			})
		}
	}
}

// TestHighEntropyRecall measures how many random tokens of unknown formats
// the entropy rule catches; it guards against tuning it into uselessness.
func TestHighEntropyRecall(t *testing.T) {
	tests := []struct {
		alphabet string
		n        int
		min      float64
	}{
		{alnum, 24, 0.85},
		{alnum, 32, 0.9},
		{alnum, 40, 0.95},
		{b64, 44, 0.95},
		{urlsafe, 43, 0.95},
		{lowerNum, 32, 0.8},
	}
	for _, tt := range tests {
		caught := 0
		const tries = 500
		for i := range tries {
			tok := fake(tt.alphabet, tt.n, uint64(1000+i))
			if _, n := Default.Redact("value " + tok + " end"); n > 0 {
				caught++
			}
		}
		rate := float64(caught) / tries
		t.Logf("alphabet %d chars, length %d: %.1f%% caught", len(tt.alphabet), tt.n, 100*rate)
		if rate < tt.min {
			t.Errorf("alphabet %d chars, length %d: caught %.1f%%, want at least %.0f%%", len(tt.alphabet), tt.n, 100*rate, 100*tt.min)
		}
	}
}

// assertRedacted checks that nothing of secret survives in the redaction of
// in — neither the whole nor any 12-byte piece — that a marker of kind is
// there, and that a second pass changes nothing.
func assertRedacted(t *testing.T, in, secret, kind string) string {
	t.Helper()
	out, n := Default.Redact(in)
	if n == 0 {
		t.Fatalf("nothing redacted in %q", in)
	}
	if strings.Contains(out, secret) {
		t.Fatalf("secret %q survives in %q", secret, out)
	}
	for i := 0; i+12 <= len(secret); i++ {
		if piece := secret[i : i+12]; strings.Contains(out, piece) {
			t.Fatalf("piece %q of secret %q survives in %q", piece, secret, out)
		}
	}
	if marker := "[REDACTED:" + kind + "]"; !strings.Contains(out, marker) {
		t.Errorf("output %q has no %s", out, marker)
	}
	if again := String(out); again != out {
		t.Errorf("second pass changed %q into %q", out, again)
	}
	return out
}

func TestKeepsNonSecrets(t *testing.T) {
	sha := fake(hexDigits, 40, 300)
	sha256 := fake(hexDigits, 64, 301)
	img := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x89PNG\r\n\x1a\n not really an image ", 80)))
	tests := []string{
		"commit " + sha + "\nAuthor: Jane Doe <jane@example.com>\nDate:   Mon May 6 10:00:00 2024 +0200",
		"git checkout " + sha[:12] + " && git log --oneline -3",
		`{"sessionId":"f47ac10b-58cc-4372-a567-0e02b2c3d479","parentUuid":"6f183b50-8d46-440f-9af7-cdfcfbb89957"}`,
		"\\n6f183b50-8d46-440f-9af7-cdfcfbb89957\\n",
		sha256 + "  medallion_linux_amd64.tar.gz",
		"docker pull ghcr.io/acme/app@sha256:" + sha256,
		"github.com/dgraph-io/badger/v4 v4.9.6 h1:" + fake(b64, 43, 303) + "=",
		"github.com/dgraph-io/badger/v4 v4.9.6/go.mod h1:" + fake(b64, 43, 304) + "=",
		`"integrity": "sha512-` + fake(b64, 86, 305) + `=="`,
		"/home/user/go/pkg/mod/github.com/dgraph-io/badger/v4@v4.9.6/db.go:123:4: undefined: Foo",
		"/Users/jane/Library/Caches/go-build/4a/4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742-d",
		"/tmp/claude-1000/-home-user-projects-medallion/tasks/b8f3k2.output",
		"https://github.com/medallionhq/medallion/pull/42/files#diff-" + sha256,
		"ssh://git@github.com/acme/app.git and git@github.com:acme/app.git",
		"https://user@example.com/path and http://localhost:8080/v1/status",
		"token_count: 12345",
		`{"usage":{"input_tokens":1834,"cache_creation_input_tokens":0,"output_tokens":512}}`,
		"max_tokens=4096 temperature=0.2",
		"password: <redacted>",
		`"password": "xxx"`,
		`"password": "********"`,
		"API_KEY=${API_KEY}",
		"export GITHUB_TOKEN=$GITHUB_TOKEN",
		`token := os.Getenv("GITHUB_TOKEN")`,
		"apiKey: process.env.OPENAI_API_KEY,",
		"token: <your-token>",
		`api_key="your-api-key-here"`,
		"password: string;",
		"  token?: string | undefined;",
		"def get_token(self) -> str:\n    return self._token",
		"    token: Optional[str] = None",
		"secret_name: my-app-secrets",
		"auth_type: service_account",
		"client = Client(token=access_token, api_key=api_key)",
		"const authConfig: Record<string, string> = {};",
		"password=os.environ[\"DB_PASSWORD\"]",
		"if token == expectedToken {",
		"GIT_AUTHOR_NAME=Jane\nauthor: Jane Doe",
		"PWD=/home/user/project\nOLDPWD=/home/user",
		"credential.helper=store",
		`"@aws-sdk/credential-providers": "^3.948.0",`,
		"the bearer of bad news; Basic authentication is discouraged",
		"git push -u origin main && docker run -u 1000:1000 app && curl -u $USER:$PASS x",
		`TIMESTAMP="$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)"`,
		"docker login --username bob --password-stdin registry.example.com",
		"Authorization: Bearer $TOKEN",
		`curl -H "Authorization: Bearer ${API_TOKEN}" https://api.example.com`,
		`{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","model":"claude-opus-4-5-20251101"}`,
		`{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9X","name":"Bash"}`,
		`"requestId":"req_011CV2n5Fq8Rk3Ym7Hz9pL4w"`,
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + img + `"}}`,
		"func TestParseRFC3339Nanosecond(t *testing.T) {",
		"handleIncomingWebhookRequestWithRetry(ctx, req)",
		"qwen3-coder-480b-a35b-v1 and claude-opus-4-1-20250805",
		"The quick brown fox jumps over the lazy dog. Secrets are not here.",
		"for i := 0; i < len(s); i++ { if s[i] == ':' { n++ } }",
		"uuid: 123e4567-e89b-12d3-a456-426614174000 sha=" + sha,
		`const secretValue = 0x53c237_53c237`,
		"rejectUnauthorized = server._requestCert",
		`"signature":"` + fake(b64, 300, 306) + `"`,
		"[REDACTED:openai-key] and API_TOKEN=[REDACTED:secret-assignment]",
		"https://user:[REDACTED:url-password]@host/path",
		"",
	}
	for _, in := range tests {
		t.Run(in[:min(len(in), 40)], func(t *testing.T) {
			out, n := Default.Redact(in)
			if out != in || n != 0 {
				t.Errorf("changed %q into %q", in, out)
			}
			if allocs := testing.AllocsPerRun(10, func() { _ = String(in) }); allocs != 0 {
				t.Errorf("String(%.40q) allocates %.0f times", in, allocs)
			}
		})
	}
}

func TestRedactKeepsContext(t *testing.T) {
	key := "AKIA" + "IOSFODNN7EXAMPLE"
	in := "line one\naws_access_key_id=" + key + "\nline three"
	want := "line one\naws_access_key_id=[REDACTED:aws-access-key]\nline three"
	out, n := Default.Redact(in)
	if out != want || n != 1 {
		t.Errorf("got %q (%d), want %q (1)", out, n, want)
	}
	two := key + " and gh" + "p_" + fake(alnum, 36, 60)
	if _, n := Default.Redact(two); n != 2 {
		t.Errorf("Redact(%q) counted %d, want 2", two, n)
	}
}

func TestOptions(t *testing.T) {
	r, err := New(Options{
		Patterns: []Pattern{
			{Kind: "acme-key", Regexp: `acme_[a-z0-9]{8}`},
			{Regexp: `internal-pin=(\d{4,})`},
		},
		DisableEntropy: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	random := fake(alnum, 40, 70)
	tests := []struct{ in, want string }{
		{"use acme_ab12cd34 now", "use [REDACTED:acme-key] now"},
		{"internal-pin=123456;", "internal-pin=[REDACTED:custom];"},
		{"both acme_ab12cd34 AKIA" + "IOSFODNN7EXAMPLE", "both [REDACTED:acme-key] [REDACTED:aws-access-key]"},
		{"no entropy rule: " + random, "no entropy rule: " + random},
	}
	for _, tt := range tests {
		if got, _ := r.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if r.Count() != 4 {
		t.Errorf("Count() = %d, want 4", r.Count())
	}

	for _, opts := range []Options{
		{Patterns: []Pattern{{Regexp: `(`}}},
		{Patterns: []Pattern{{Kind: "Bad Kind", Regexp: `x`}}},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v) gave no error", opts)
		}
	}

	strict, err := New(Options{EntropyThreshold: 6})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := strict.Redact(random); got != random {
		t.Errorf("threshold 6 still redacts %q", random)
	}
}

func TestMergeJoinsOverlaps(t *testing.T) {
	got := merge([]span{{0, 4, "a"}, {10, 12, "b"}}, []span{{3, 6, "c"}, {11, 20, "d"}, {30, 31, "e"}})
	want := []span{{0, 6, "a"}, {10, 20, "b"}, {30, 31, "e"}}
	if len(got) != len(want) {
		t.Fatalf("merge = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("merge = %v, want %v", got, want)
		}
	}
}

func TestCountsByKind(t *testing.T) {
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Redact("key AKIAIOSFODNN7EXAMPLE and AKIAIOSFODNN7EXAMPLF, url https://u:hunter2hunter2@example.com/x")
	got := r.CountsByKind()
	var sum uint64
	for _, n := range got {
		sum += n
	}
	if got[KindAWSAccessKey] != 2 || sum != r.Count() {
		t.Errorf("counts by kind %v (count %d)", got, r.Count())
	}
}
