package main

import "testing"

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
