package ingest

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/tail"
)

// TestOverLongUnterminatedTail: a last line without its newline that is
// over max_line is skipped and counted once it stays quiet, and the log
// says it was skipped, not "taken as complete" (issue 11).
func TestOverLongUnterminatedTail(t *testing.T) {
	st := openStore(t)
	var logs lockedBuffer
	p, err := New(st, Options{Watches: []Watch{{Name: "w", Format: "claude-code"}}, QuietTail: 30 * time.Millisecond, MaxLine: 1 << 10,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p)
	path := filepath.Join(t.TempDir(), "long.jsonl")
	appendFile(t, path, []byte(`{"type":"user","sessionId":"q","uuid":"a","message":{"role":"user","content":"`+strings.Repeat("x", 4<<10)+`"}}`))
	p.Notify("w", path)
	waitFor(t, "the skipped tail", func() bool { return p.Status().Skipped[tail.SkipLineTooLong] == 1 })
	waitFor(t, "the log line", func() bool { return strings.Contains(logs.String(), "skipped an unterminated last line") })
	if l := logs.String(); strings.Contains(l, "as complete") || !strings.Contains(l, "line_too_long") {
		t.Errorf("log:\n%s", l)
	}
	if s := p.Status(); s.Events != 0 || s.BacklogBytes != 0 {
		t.Errorf("status: %+v", s)
	}
}
