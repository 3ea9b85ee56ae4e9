package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// corpusDir finds the shared corpus of real transcripts: beside the
// repository (where CI clones it) or at its place on the build machine.
func corpusDir(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{"../../../shared/corpus", "/work/shared/corpus"} {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
	}
	t.Skip("corpus of real transcripts not found (../shared/corpus)")
	return ""
}

// eachLine calls fn with every line of path and its offset, the way the
// tailer does: without the newline, including a last line that has none.
func eachLine(t testing.TB, path string, fn func(line []byte, offset int64)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var offset int64
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			fn(bytes.TrimSuffix(line, []byte("\n")), offset)
			offset += int64(len(line))
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// parseFile parses the lines of path from byte offset from on with a fresh
// parser, turning a panic into a test error that names the line.
func parseFile(t *testing.T, format Format, path string, from int64) ([]Event, Stats) {
	t.Helper()
	p, err := New(format, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	eachLine(t, path, func(line []byte, offset int64) {
		if offset < from {
			return
		}
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s at offset %d: panic: %v", filepath.Base(path), offset, r)
			}
		}()
		events = append(events, p.ParseLine(line, Position{File: "fp-" + filepath.Base(path), Path: path, Offset: offset})...)
	})
	return events, p.Stats()
}

// longestBase64Run is the length of the longest run of base64 characters
// in s.
func longestBase64Run(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if base64Chars[s[i]] {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// TestCorpus parses every real transcript in the shared corpus: no line may
// make a parser fail, and the events must keep the model's promises.
func TestCorpus(t *testing.T) {
	root := corpusDir(t)
	for _, format := range []Format{FormatClaudeCode, FormatCodex, FormatGemini} {
		t.Run(string(format), func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(root, string(format), "*.json*"))
			if err != nil {
				t.Fatal(err)
			}
			var total Stats
			n := 0
			for _, path := range files {
				if format != FormatGemini && !strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, "logs.json") {
					continue // logs.json: Gemini CLI's prompt history, not a chat
				}
				n++
				var events []Event
				var stats Stats
				if format == FormatGemini && wholeDocument(t, path) {
					events, stats = parseWhole(t, path)
				} else {
					events, stats = parseFile(t, format, path, 0)
				}
				total.Add(stats)
				name := filepath.Base(path)
				t.Logf("%s: %d lines, %d records, events %s, skipped %s",
					name, stats.Lines, stats.Records, counts(stats.Events), counts(stats.Skipped))
				checkCorpusFile(t, name, format, path, events, stats)
			}
			if n == 0 {
				t.Skipf("no %s files in the corpus", format)
			}
			t.Logf("TOTAL %s: %d files, %d lines, %d records, %d events %s, skipped %s",
				format, n, total.Lines, total.Records, total.TotalEvents(), counts(total.Events), counts(total.Skipped))
		})
	}
}

func checkCorpusFile(t *testing.T, name string, format Format, path string, events []Event, stats Stats) {
	t.Helper()
	if len(events) == 0 {
		t.Errorf("%s: no events", name)
	}
	// The corpus is valid JSON written by the agents themselves: any of
	// these would mean our record types are too strict.
	for _, reason := range []string{"invalid_json", "trailing_garbage", "not_object", "field_type_mismatch"} {
		if n := stats.Skipped[reason]; n > 0 {
			t.Errorf("%s: %d records skipped as %s", name, n, reason)
		}
	}
	ids := map[string]int{}
	recent := map[string]int{} // kind+text of messages → index, for the twin check
	for i, e := range events {
		if e.ID == "" || !e.Kind.Valid() || e.Agent == "" || e.SessionID == "" {
			t.Errorf("%s: event %d incomplete: id %q kind %q agent %q session %q", name, i, e.ID, e.Kind, e.Agent, e.SessionID)
		}
		// An id names one record of the conversation: a record repeated in
		// the file (a resumed session's copied history) is skipped by the
		// parser as a counted duplicate, so ids are unique (repeat_test.go).
		if j, dup := ids[e.ID]; dup {
			t.Errorf("%s: events %d and %d share id %s (%s %.60q)", name, j, i, e.ID, e.Kind, e.Text)
		}
		ids[e.ID] = i
		if n := longestBase64Run(e.Text); n > 2000 {
			t.Errorf("%s: event %s text holds %d bytes of base64", name, e.ID, n)
		}
		if len(e.Text) > DefaultMaxMessageText {
			t.Errorf("%s: event %s text is %d bytes", name, e.ID, len(e.Text))
		}
		if format == FormatCodex && (e.Kind == KindUserPrompt || e.Kind == KindAssistantMessage || e.Kind == KindReasoning) {
			key := string(e.Kind) + "\x00" + e.Text
			if j, ok := recent[key]; ok && i-j < 8 {
				t.Errorf("%s: %s %.60q emitted twice (events %d and %d)", name, e.Kind, e.Text, j, i)
			}
			recent[key] = i
		}
	}

	if format == FormatGemini && wholeDocument(t, path) {
		// A whole-file session read again (a rewrite with nothing new)
		// yields nothing: see TestGeminiLegacyRewrites.
		return
	}
	// Parsing the same bytes again gives the same events, and resuming
	// halfway with a fresh parser (a daemon restart) makes no new ids.
	again, _ := parseFile(t, format, path, 0)
	if len(again) != len(events) {
		t.Fatalf("%s: second parse gave %d events, first %d", name, len(again), len(events))
	}
	for i := range events {
		if again[i].ID != events[i].ID {
			t.Errorf("%s: event %d id %s, then %s", name, i, events[i].ID, again[i].ID)
			break
		}
	}
	if len(events) > 2 {
		mid := events[len(events)/2].Source.Offset
		resumed, _ := parseFile(t, format, path, mid)
		for _, e := range resumed {
			if _, ok := ids[e.ID]; !ok {
				t.Errorf("%s: resuming at offset %d made new event %s (%s %.60q)", name, mid, e.ID, e.Kind, e.Text)
			}
		}
	}
}

// counts renders a map of counts sorted by key.
func counts[K ~string](m map[K]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[K(k)]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// wholeDocument reports whether path holds one JSON document over several
// lines (a Gemini CLI ≤ 0.38 session) rather than one record per line.
func wholeDocument(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	return !json.Valid(first) && json.Valid(data)
}

// parseWhole parses a whole-file session as the ingest pipeline does, and
// checks that reading it again yields nothing new.
func parseWhole(t *testing.T, path string) ([]Event, Stats) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := NewGemini(Options{})
	pos := Position{File: "fp-" + filepath.Base(path), Path: path}
	events := p.ParseLine(data, pos)
	stats := p.Stats()
	if again := p.ParseLine(data, pos); len(again) != 0 {
		t.Errorf("%s read again: %d new events", filepath.Base(path), len(again))
	}
	return events, stats
}
