package ingest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/store"
)

// stateFixtures are our transcripts whose lines depend on earlier lines
// (see internal/transcript/state_test.go): queued prompts delivered later,
// results named after their calls, copied results, Codex session identity,
// cwd and event_msg / response_item twins a second apart.
var stateFixtures = []struct {
	watch Watch
	rel   string // under ../transcript/testdata/transcripts, or ../../testdata/transcripts for gemini
}{
	{Watch{Name: "cc", Format: "claude-code"}, "claude-code/5e551011-2222-4333-8444-000000000014.jsonl"},
	{Watch{Name: "cx", Format: "codex"}, "codex/rollout-2026-03-02T10-00-00-019c9a10-aaaa-7bbb-8ccc-000000000014.jsonl"},
	// An auto watch: the format, too, must survive the crash.
	{Watch{Name: "auto", Format: FormatAuto}, "claude-code/5e551011-2222-4333-8444-000000000014.jsonl"},
	// Session identity from the header, messages appended again.
	{Watch{Name: "gm", Format: "gemini"}, "gemini/inventory/chats/session-2026-11-20T10-00-3f2a9c1e.jsonl"},
}

// fixtureLines reads a state fixture split after each '\n'.
func fixtureLines(t *testing.T, rel string) [][]byte {
	t.Helper()
	dir := filepath.Join("..", "transcript", "testdata", "transcripts")
	if strings.HasPrefix(rel, "gemini/") {
		dir = filepath.Join("..", "..", "testdata", "transcripts") // the golden fixtures
	}
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	return lines[:len(lines)-1]
}

// ingestNow runs one pipeline over path until it has read everything, on
// the calling goroutine, and then drops it without stopping anything: a
// crash of the daemon right after its last commit, as far as the store
// can tell.
func ingestNow(t *testing.T, st store.EpisodeStore, w Watch, path string) *Pipeline {
	t.Helper()
	p, err := New(st, Options{Watches: []Watch{w}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p.process(ctx, ctx, w.Name, path)
	p.drain(ctx, ctx) // the commit in flight, and the batches after it
	if s := p.Status(); len(s.Errors) > 0 {
		t.Fatalf("ingest errors: %q", s.Errors)
	}
	return p
}

// storedEvents lists what the store holds, session by session in buffer
// order: kind, id, session, parent, tool and cwd of each event, the fields
// a parser's lost memory would change.
func storedEvents(t *testing.T, st store.EpisodeStore) []string {
	t.Helper()
	ctx := context.Background()
	sessions, err := st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(sessions, func(a, b episode.SessionInfo) int { return cmp.Compare(a.ID, b.ID) })
	var out []string
	for _, s := range sessions {
		events, err := st.Episode(ctx, s.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range events {
			e := b.Event
			out = append(out, fmt.Sprintf("%s %s session=%s parent=%s tool=%s cwd=%s", e.Kind, e.ID, e.SessionID, e.ParentSessionID, e.Tool, e.CWD))
		}
	}
	return out
}

// writeLines writes lines to path (appending) and returns how many bytes.
func writeLines(t *testing.T, path string, lines [][]byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, bytes.Join(lines, nil))
}

// cleanPass ingests the whole fixture with one pipeline on a fresh store.
func cleanPass(t *testing.T, w Watch, lines [][]byte, rel string) []string {
	t.Helper()
	st := openStore(t)
	path := filepath.Join(t.TempDir(), rel)
	writeLines(t, path, lines)
	ingestNow(t, st, w, path)
	return storedEvents(t, st)
}

// TestCrashAtEveryRecordBoundary streams each fixture in two parts, for
// every record boundary, with the pipeline dropped between them (its
// parsers lost, as at kill -9) and a new one resuming from the store; and
// once more one record at a time, dropping the pipeline after each. The
// stored events (ids, kinds, sessions, tools, cwds) must be those of one
// clean pass. Without the parser state stored with the offset, the same
// streams store other events: that is checked too, so the fixtures keep
// testing something.
func TestCrashAtEveryRecordBoundary(t *testing.T) {
	for _, fx := range stateFixtures {
		t.Run(fx.watch.Name, func(t *testing.T) {
			lines := fixtureLines(t, fx.rel)
			want := cleanPass(t, fx.watch, lines, fx.rel)
			if len(want) == 0 {
				t.Fatal("the clean pass stored nothing")
			}

			for cut := 1; cut < len(lines); cut++ {
				st := openStore(t)
				path := filepath.Join(t.TempDir(), fx.rel)
				writeLines(t, path, lines[:cut])
				ingestNow(t, st, fx.watch, path)
				writeLines(t, path, lines[cut:])
				ingestNow(t, st, fx.watch, path)
				if got := storedEvents(t, st); !slices.Equal(got, want) {
					t.Errorf("crash after record %d of %d: stored events differ from a clean pass:\n%s", cut, len(lines), eventsDiff(got, want))
				}
			}

			stream := func(st store.EpisodeStore) []string {
				path := filepath.Join(t.TempDir(), fx.rel)
				for _, l := range lines {
					writeLines(t, path, [][]byte{l})
					ingestNow(t, st, fx.watch, path)
				}
				return storedEvents(t, st)
			}
			if got := stream(openStore(t)); !slices.Equal(got, want) {
				t.Errorf("a crash after every record: stored events differ from a clean pass:\n%s", eventsDiff(got, want))
			}
			lost := stream(&stateless{EpisodeStore: openStore(t)})
			if slices.Equal(lost, want) {
				t.Error("without stored parser states the stream stores the same events: the fixture tests nothing")
			}
			t.Logf("%d records, %d events in a clean pass and after a crash at every boundary; %d without parser states", len(lines), len(want), len(lost))
		})
	}
}

// eventsDiff shows the events only one side has.
func eventsDiff(got, want []string) string {
	var b bytes.Buffer
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "  extra:   %s\n", g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "  missing: %s\n", w)
		}
	}
	if b.Len() == 0 {
		fmt.Fprintf(&b, "  same events in another order or count: %d vs %d", len(got), len(want))
	}
	return b.String()
}

// stateless is a store that never has a parser state to give back: what
// ingestion was before states were stored.
type stateless struct{ store.EpisodeStore }

func (stateless) ParserState(context.Context, string) ([]byte, error) { return nil, nil }

var _ store.EpisodeStore = stateless{}

// damaged is a store whose parser states are unreadable.
type damaged struct{ store.EpisodeStore }

func (damaged) ParserState(context.Context, string) ([]byte, error) {
	return []byte(`{"v":1,"forma`), nil
}

var _ store.EpisodeStore = damaged{}

// TestUnreadableParserState: a state the parser refuses is counted and
// logged, and the file goes on with a fresh parser rather than stopping.
func TestUnreadableParserState(t *testing.T) {
	fx := stateFixtures[0]
	lines := fixtureLines(t, fx.rel)
	st := damaged{EpisodeStore: openStore(t)}
	path := filepath.Join(t.TempDir(), fx.rel)
	writeLines(t, path, lines[:4])
	ingestNow(t, st, fx.watch, path)
	writeLines(t, path, lines[4:])
	p := ingestNow(t, st, fx.watch, path)
	if n := p.Status().Skipped[SkipParserStateUnreadable]; n != 1 {
		t.Errorf("%s counted %d times, want 1", SkipParserStateUnreadable, n)
	}
	if fs := fileState(t, st, path); fs.Offset != int64(len(bytes.Join(lines, nil))) || fs.Skipped[SkipParserStateUnreadable] != 1 {
		t.Errorf("file state: offset %d, skipped %v", fs.Offset, fs.Skipped)
	}
}

// tight refuses, as too large, any batch of more than max events, so that
// every batch of several lines is read again in smaller ones; after crash
// commits (when positive), it stores nothing more, as a daemon killed
// there.
type tight struct {
	store.EpisodeStore
	max     int
	crash   int
	commits *int
}

func (s tight) Ingest(ctx context.Context, b store.IngestBatch) (store.IngestResult, error) {
	if len(b.Events) > s.max {
		return store.IngestResult{}, fmt.Errorf("%d events: %w", len(b.Events), store.ErrBatchTooLarge)
	}
	if s.crash > 0 && *s.commits >= s.crash {
		return store.IngestResult{}, errors.New("killed")
	}
	*s.commits++
	return s.EpisodeStore.Ingest(ctx, b)
}

// TestSplitBatchKeepsState: a batch the store refuses is read again in
// smaller ones, each committed with the parser state after its own last
// line, so a crash after any of those commits resumes exactly. One line
// holds many events, so that its parts are committed with the offset (and
// the state) from before it.
func TestSplitBatchKeepsState(t *testing.T) {
	for _, fx := range stateFixtures[:2] {
		t.Run(fx.watch.Name, func(t *testing.T) {
			lines := fixtureLines(t, fx.rel)
			if fx.watch.Format == "claude-code" {
				// A line of glued prompts after the first queued one,
				// delivering it among them: the state before the line
				// (the prompt queued) differs from the state after it.
				var glued []byte
				for i, text := range []string{"glued 0", "also check the importer", "glued 1", "glued 2"} {
					glued = fmt.Appendf(glued, `{"type":"user","sessionId":"5e551011-2222-4333-8444-000000000014","uuid":"glued-%d","message":{"role":"user","content":%q}}`, i, text)
				}
				lines = slices.Insert(slices.Clone(lines), 6, append(glued, '\n'))
			}
			want := cleanPass(t, fx.watch, lines, fx.rel)
			var commits int
			st := tight{EpisodeStore: openStore(t), max: 1, commits: &commits}
			path := filepath.Join(t.TempDir(), fx.rel)
			writeLines(t, path, lines)
			ingestNow(t, st, fx.watch, path)
			if got := storedEvents(t, st); !slices.Equal(got, want) {
				t.Fatalf("split batches: stored events differ from a clean pass:\n%s", eventsDiff(got, want))
			}
			total := commits
			for crash := 1; crash < total; crash++ {
				n := 0
				inner := openStore(t)
				path := filepath.Join(t.TempDir(), fx.rel)
				writeLines(t, path, lines)
				p, err := New(tight{EpisodeStore: inner, max: 1, crash: crash, commits: &n}, Options{Watches: []Watch{fx.watch}})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				p.process(ctx, ctx, fx.watch.Name, path) // fails at commit crash+1, then dropped
				p.drain(ctx, ctx)
				n = 0
				ingestNow(t, tight{EpisodeStore: inner, max: 1, commits: &n}, fx.watch, path)
				if got := storedEvents(t, inner); !slices.Equal(got, want) {
					t.Errorf("split batches, crash after commit %d of %d: stored events differ from a clean pass:\n%s", crash, total, eventsDiff(got, want))
				}
			}
			t.Logf("%d events in %d commits; a crash after each gives the same", len(want), total)
		})
	}
}
