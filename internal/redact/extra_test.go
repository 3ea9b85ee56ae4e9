package redact

import (
	"strings"
	"testing"
)

// TestIssue11Classes: the classes of secret issue 11's seeded transcript
// got through, in strings of our own, and look-alikes that must stay.
func TestIssue11Classes(t *testing.T) {
	secret := []struct{ in, secret string }{
		{"DB_PASSWORD=hunter2", "hunter2"},
		{"ADMIN_PASS=letmein99", "letmein99"},
		{"smtp_pass=Qz81!kd", "Qz81!kd"},
		{"SECRET_KEY=p28tQ!x7Lm#wJ(", "p28tQ!x7Lm#wJ("},
		{"PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318", "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"},
		{"mysql -u root -pS3cr3tPass shop", "S3cr3tPass"},
		{"mysqldump -uadmin -p'x!9Lq2#z' shop > dump.sql", "x!9Lq2#z"},
		{"sshpass -p 'Wq9!zzTop' ssh deploy@host", "Wq9!zzTop"},
		{"sshpass -pWq9zzTop ssh deploy@host", "Wq9zzTop"},
		{"the admin password is Tr0ub4dor&3.", "Tr0ub4dor&3"},
		{"The Twilio token is 3f9a8b7c6d5e4f30a1b2c3d4e5f60718", "3f9a8b7c6d5e4f30a1b2c3d4e5f60718"},
		{"my passphrase was 'correct horse 9 battery'", "correct horse 9 battery"},
		{"the databricks token dapi0123456789abcdef0123456789abcdef-2 works", "dapi0123456789abcdef0123456789abcdef-2"},
		{"mailchimp key 0f9e8d7c6b5a49382716a5b4c3d2e1f0-us14", "0f9e8d7c6b5a49382716a5b4c3d2e1f0-us14"},
		{"SENDGRID=SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ012", "SG.aBcDeFgHiJkLmNoPqRsTuV"},
	}
	for _, tt := range secret {
		out, n := Default.Redact(tt.in)
		if n == 0 || strings.Contains(out, tt.secret) {
			t.Errorf("%q → %q: the secret is still there", tt.in, out)
		}
	}
	keep := []string{
		"mkdir -p build && ssh -p 2222 host",
		"mysql -u root -p shop",
		"mysql -u root -P 3306 -h db shop",
		"the password is incorrect",
		"the key is in the vault.",
		"the token is valid",
		"the token is 12 characters",
		"the commit is 3f9a8b7c6d5e4f30a1b2c3d4e5f60718aabbccdd",
		"tx 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318 confirmed",
		"BYPASS=enabled",
		"PASSWORD=password",
		"DB_PASSWORD=$DB_PASSWORD",
		"DB_PASSWORD=true",
		"PASSWORD_MIN=8",
		"token=get_token(ctx)",
		"see dapi-server and SG.md",
		"us-east-1 and 0f9e8d7c-us",
	}
	for _, in := range keep {
		if out, n := Default.Redact(in); n != 0 {
			t.Errorf("%q → %q: a look-alike was redacted", in, out)
		}
	}
}
