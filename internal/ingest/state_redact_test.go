package ingest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/tail"
)

// TestParserStateRedacted: what a parser keeps of a pending tool call (its
// command and paths) is written to disk with the parser's state, so it is
// redacted like the events: a secret in either never reaches the store.
func TestParserStateRedacted(t *testing.T) {
	const secret = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	st := openStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57.jsonl")
	call := func(n, name, input string) string {
		return `{"cwd":"/home/dev/p","sessionId":"7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a57","type":"assistant","message":{"id":"msg_0` + n +
			`","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_0` + n + `","name":"` + name + `","input":` + input +
			`}]},"uuid":"1a2b0005-0005-4005-8005-000000abc00` + n + `","timestamp":"2026-03-02T09:00:0` + n + `.000Z"}` + "\n"
	}
	appendFile(t, path, []byte(call("1", "Read", `{"file_path":"/home/dev/p/`+secret+`.txt"}`)+
		call("2", "Bash", `{"command":"curl -H 'Authorization: token `+secret+`' https://api.github.com/user"}`)))
	ingestNow(t, st, Watch{Name: "w", Format: "claude-code"}, path)
	dev, ino, _, err := tail.Identify(path)
	if err != nil {
		t.Fatal(err)
	}
	state, err := st.ParserState(context.Background(), tail.Key(dev, ino))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(state), "toolu_02") {
		t.Fatalf("the pending calls are not in the stored state: %s", state)
	}
	if strings.Contains(string(state), secret) {
		t.Errorf("the secret is in the stored parser state: %s", state)
	}
}
