package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Seeded is one secret of testdata/seeded/secrets.json in its context.
type seeded struct {
	Kind, Before, Secret, After string
}

func loadSeeded(t testing.TB) []seeded {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "seeded", "secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []seeded
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSeededSecrets: every seeded secret is redacted in its context.
func TestSeededSecrets(t *testing.T) {
	for _, s := range loadSeeded(t) {
		in := s.Before + s.Secret + s.After
		if out, _ := Default.Redact(in); strings.Contains(out, s.Secret) {
			t.Errorf("%s: %q", s.Kind, out)
		}
	}
}

// TestSeededLookAlikes: what looks like a secret and is not stays as it is.
func TestSeededLookAlikes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "seeded", "lookalikes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var looks []struct{ Kind, Text string }
	if err := json.Unmarshal(data, &looks); err != nil {
		t.Fatal(err)
	}
	for _, l := range looks {
		if out, n := Default.Redact(l.Text); n != 0 {
			t.Errorf("%s: %q", l.Kind, out)
		}
	}
}
