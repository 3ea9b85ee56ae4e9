package ingest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/tail"
	"github.com/medallionhq/medallion/internal/transcript"
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

// TestStoredStatesScrubbedAtLoad: a parser state stored by a build that
// did not redact it (a pending Bash command with a token) is rewritten
// without the secret when the pipeline loads, though its file is never
// read again; the pending call itself is kept, and the file's offset does
// not move.
func TestStoredStatesScrubbedAtLoad(t *testing.T) {
	const secret = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	ctx := context.Background()
	st := openStore(t)
	path := filepath.Join(t.TempDir(), "7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a58.jsonl")
	appendFile(t, path, []byte(`{"cwd":"/home/dev/p","sessionId":"7f3c2a10-5b8e-4d21-9c4a-2e6f8b1d3a58","type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"curl -H 'Authorization: token `+secret+`' https://api.github.com/user"}}]},"uuid":"1a2b0005-0005-4005-8005-000000abc001","timestamp":"2026-03-02T09:00:01.000Z"}`+"\n"))
	ingestNow(t, st, Watch{Name: "w", Format: "claude-code"}, path)
	dev, ino, _, err := tail.Identify(path)
	if err != nil {
		t.Fatal(err)
	}
	key := tail.Key(dev, ino)
	fs, err := st.FileState(ctx, key)
	if err != nil || fs == nil {
		t.Fatalf("file state: %v %v", fs, err)
	}
	// What an older build stored: the same parser's state, unredacted.
	old, err := transcript.New(transcript.FormatClaudeCode, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old.ParseLine(mustRead(t, path), transcript.Position{Path: path})
	raw, err := old.(transcript.Stateful).MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), secret) {
		t.Fatalf("the older state holds no secret to scrub: %s", raw)
	}
	if _, err := st.Ingest(ctx, store.IngestBatch{File: *fs, ParserState: raw}); err != nil {
		t.Fatal(err)
	}

	p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Load(ctx); err != nil {
		t.Fatal(err)
	}
	state, err := st.ParserState(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(state), secret) {
		t.Errorf("the secret is still in the stored parser state: %s", state)
	}
	if !strings.Contains(string(state), "toolu_01") {
		t.Errorf("the pending call was lost: %s", state)
	}
	if !transcript.StateScrubbed(state) {
		t.Errorf("the rewritten state is not marked scrubbed, so every start would redo it: %s", state)
	}
	if now, _ := st.FileState(ctx, key); now == nil || now.Offset != fs.Offset || now.Events != fs.Events {
		t.Errorf("file state moved: %+v, was %+v", now, fs)
	}
}
