package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHookBinary(t *testing.T) {
	for cmd, want := range map[string]string{
		"/usr/bin/medallionctl hook claude-code":                "/usr/bin/medallionctl",
		"'/home/a b/medallionctl' --socket /x hook claude-code": "/home/a b/medallionctl",
		`'/home/it'\''s/medallionctl' hook claude-code`:         "/home/it's/medallionctl",
		"medallionctl": "medallionctl",
	} {
		if got := hookBinary(cmd); got != want {
			t.Errorf("hookBinary(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestDoctorCodexTrust: doctor asks Codex (its fake app-server) whether
// it trusts the hook: an untrusted hook is a problem with integrate as the
// fix; once integrate recorded the trust, all is well.
func TestDoctorCodexTrust(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	executable = func() (string, error) { return self, nil }
	t.Cleanup(func() { executable = os.Executable })
	useFakeCodex(t, "trust")
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	hooksPath := filepath.Join(home, "hooks.json")
	writeAt(t, hooksPath, `{"hooks": {"SessionStart": [{"matcher": "startup|resume", "hooks": [{"type": "command", "command": "`+self+` hook codex"}]}]}}`)
	ag, err := agentNamed(agentCodex)
	if err != nil {
		t.Fatal(err)
	}
	c := hookCheck(ag, hooksPath)
	if c.Result != checkFail || !strings.Contains(c.Detail, "Codex does not run it: untrusted") || !strings.Contains(c.Fix, "medallionctl integrate codex") {
		t.Fatalf("untrusted hook: %+v", c)
	}
	ok(t, "integrate", "codex")
	if c = hookCheck(ag, hooksPath); c.Result != checkOK || !strings.HasSuffix(c.Detail, "; Codex trusts it") {
		t.Errorf("trusted hook: %+v", c)
	}
}
