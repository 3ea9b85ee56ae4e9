package redact

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/transcript"
)

// eventTexts returns the strings the ingest pipeline redacts for the
// events of lines (redactEvent: text, command, query, URL, paths, todos),
// as the parser of format bounds them: tool outputs to 4 KiB, messages to
// 16 KiB.
func eventTexts(tb testing.TB, format transcript.Format, lines [][]byte) []string {
	tb.Helper()
	p, err := transcript.New(format, transcript.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, l := range lines {
		for _, e := range p.ParseLine(bytes.TrimRight(l, "\n"), transcript.Position{}) {
			add(e.Text)
			add(e.Command)
			add(e.Query)
			add(e.URL)
			for _, f := range e.FilePaths {
				add(f)
			}
			for _, t := range e.Todos {
				add(t.Content)
				add(t.ActiveForm)
			}
		}
	}
	return out
}

// backfillTexts returns the event texts of about size bytes of the
// sessions the end-to-end backfill benchmark writes: clean tool outputs
// of source-like lines, prompts and replies.
func backfillTexts(tb testing.TB, size int) []string {
	g := fixture.NewClaude("bf000000-0000-4000-8000-000000000000", "/home/dev/proj0", 1)
	g.Big, g.BigSize = 3, 500<<10
	var lines [][]byte
	for n := 0; n < size; {
		for _, l := range g.Turn() {
			lines = append(lines, l)
			n += len(l)
		}
	}
	return eventTexts(tb, transcript.FormatClaudeCode, lines)
}

// corpusTexts returns the event texts of the real transcripts, when the
// corpus is there.
func corpusTexts(tb testing.TB) []string {
	var out []string
	for _, f := range corpusFiles(tb) {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		format := transcript.FormatClaudeCode
		if strings.Contains(filepath.ToSlash(f), "/codex/") {
			format = transcript.FormatCodex
		}
		out = append(out, eventTexts(tb, format, bytes.SplitAfter(data, []byte("\n")))...)
	}
	return out
}

// BenchmarkEventTexts measures redaction of what the daemon redacts:
// event texts (mostly clean tool outputs of up to 4 KiB) of the backfill
// benchmark's sessions and, when present, of the corpus.
func BenchmarkEventTexts(b *testing.B) {
	b.Run("backfill", func(b *testing.B) { benchRedact(b, backfillTexts(b, 8<<20)) })
	b.Run("corpus", func(b *testing.B) { benchRedact(b, corpusTexts(b)) })
}

func TestBackfillTextsAreClean(t *testing.T) {
	texts := backfillTexts(t, 1<<20)
	if len(texts) < 100 {
		t.Fatalf("only %d texts", len(texts))
	}
	for _, s := range texts {
		if out, n := Default.Redact(s); n != 0 {
			t.Fatalf("backfill text has %d redactions: %.300q", n, out)
		}
	}
}
