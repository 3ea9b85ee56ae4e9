package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/transcript"
)

// These tests are internal (package store) because some look at keys and
// TTLs Badger holds, and simulate a crash between two transactions.

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openIngest opens a store in dir that is closed when the test ends
// (closing twice is fine, so a test may close it early to reopen).
func openIngest(t testing.TB, dir string, now func() time.Time) *Badger {
	t.Helper()
	logger := hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Warn, Output: t.Output()})
	s, err := Open(dir, Options{Logger: logger, Now: now, GCInterval: -1})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

var t0 = time.Date(2026, 2, 27, 9, 0, 0, 0, time.UTC)

// ev is an event of session sid; n orders it in time.
func ev(sid, id string, n int, kind transcript.Kind) transcript.Event {
	return transcript.Event{
		ID:        id,
		Kind:      kind,
		Time:      t0.Add(time.Duration(n) * time.Second),
		SessionID: sid,
		Agent:     transcript.AgentClaudeCode,
		Text:      fmt.Sprintf("text of %s: %s", id, strings.Repeat("x", n%50)),
		Source:    transcript.Source{File: "fp", Path: "/t/" + sid + ".jsonl", Offset: int64(n * 100)},
	}
}

// events makes n user prompts of sid with ids prefix-0 … prefix-(n-1).
func events(sid, prefix string, n int) []transcript.Event {
	out := make([]transcript.Event, n)
	for i := range out {
		out[i] = ev(sid, fmt.Sprintf("%s-%d", prefix, i), i, transcript.KindUserPrompt)
	}
	return out
}

func file(key string, offset int64) FileState {
	return FileState{Key: key, Path: "/t/" + key + ".jsonl", Dev: 1, Ino: 2, Offset: offset, Size: offset,
		Format: "claude-code", Watch: "claude", UpdatedAt: t0}
}

func mustIngest(t testing.TB, s *Badger, b IngestBatch) IngestResult {
	t.Helper()
	res, err := s.Ingest(context.Background(), b)
	if err != nil {
		t.Fatalf("ingest: %v", err)
	}
	return res
}

// ids lists the ids of buffered events; seqs their seqs.
func ids(evs []episode.BufferedEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Event.ID
	}
	return out
}

func mustEpisode(t *testing.T, s *Badger, sid string, after uint64, limit int) []episode.BufferedEvent {
	t.Helper()
	evs, err := s.Episode(context.Background(), sid, after, limit)
	if err != nil {
		t.Fatalf("episode %s: %v", sid, err)
	}
	return evs
}

func mustSession(t *testing.T, s *Badger, sid string) *episode.SessionInfo {
	t.Helper()
	si, err := s.Session(context.Background(), sid)
	if err != nil {
		t.Fatalf("session %s: %v", sid, err)
	}
	if si == nil {
		t.Fatalf("session %s: not found", sid)
	}
	return si
}

func TestIngestReadBack(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s := openIngest(t, t.TempDir(), clk.now)

	parent := "7f1c2a9e-parent"
	sub := parent + "/agent-a1b2" // subagent ids hold a slash
	ok := true
	batchEvents := []transcript.Event{
		{ID: "e1", Kind: transcript.KindUserPrompt, Time: t0.Add(2 * time.Second), SessionID: parent,
			Agent: "claude-code", CWD: "/src/muse", GitBranch: "main", Text: "fix the build", Source: transcript.Source{Offset: 0}},
		{ID: "e2", Kind: transcript.KindToolCall, Time: t0.Add(time.Second), SessionID: parent, // out of order in time
			Agent: "claude-code", Tool: "Bash", Command: "go build ./...", Source: transcript.Source{Offset: 100}},
		{ID: "e3", Kind: transcript.KindToolResult, SessionID: parent, // no time
			Agent: "claude-code", OK: &ok, Source: transcript.Source{Offset: 200}},
		{ID: "e4", Kind: transcript.KindUserPrompt, Time: t0.Add(3 * time.Second), SessionID: sub, ParentSessionID: parent,
			Agent: "claude-code", CWD: "/src/muse/cli", Boilerplate: true, Subtype: transcript.SubtypeSubagentPrompt, Source: transcript.Source{Offset: 300}},
		{ID: "e5", Kind: transcript.KindAssistantMessage, Time: t0.Add(4 * time.Second), SessionID: parent,
			Agent: "claude-code", CWD: "/src/muse", GitBranch: "feature", Text: "done", Source: transcript.Source{Offset: 400}},
	}
	fs := file("1:42", 500)
	fs.Lines, fs.Events, fs.Skipped = 5, 5, map[string]int64{"noise:progress": 2}
	res := mustIngest(t, s, IngestBatch{File: fs, Events: batchEvents,
		Scopes: map[string][]string{parent: {"repo:muse"}}})

	if res.Added != 5 || res.Duplicates != 0 {
		t.Errorf("added %d, duplicates %d; want 5, 0", res.Added, res.Duplicates)
	}
	now := clk.now()
	wantParent := episode.SessionInfo{
		ID: parent, Agent: "claude-code", CWD: "/src/muse", GitBranch: "feature",
		Scope: []string{"repo:muse"}, Events: 4, Buffered: 4,
		ByKind:       map[string]int64{"user_prompt": 1, "tool_call": 1, "tool_result": 1, "assistant_message": 1},
		FirstEventAt: t0.Add(time.Second), LastEventAt: t0.Add(4 * time.Second), LastIngestAt: now,
		Files: []string{fs.Path},
	}
	wantSub := episode.SessionInfo{
		ID: sub, ParentID: parent, Agent: "claude-code", CWD: "/src/muse/cli",
		Scope: []string{}, Events: 1, Buffered: 1, ByKind: map[string]int64{"user_prompt": 1},
		FirstEventAt: t0.Add(3 * time.Second), LastEventAt: t0.Add(3 * time.Second), LastIngestAt: now,
		Files: []string{fs.Path},
	}
	if want := []episode.SessionInfo{wantParent, wantSub}; !reflect.DeepEqual(res.Sessions, want) {
		t.Errorf("result sessions:\n got %+v\nwant %+v", res.Sessions, want)
	}
	if got := mustSession(t, s, parent); !reflect.DeepEqual(*got, wantParent) {
		t.Errorf("session %s:\n got %+v\nwant %+v", parent, *got, wantParent)
	}
	if got := mustSession(t, s, sub); !reflect.DeepEqual(*got, wantSub) {
		t.Errorf("session %s:\n got %+v\nwant %+v", sub, *got, wantSub)
	}

	got := mustEpisode(t, s, parent, 0, 0)
	want := []episode.BufferedEvent{{Seq: 1, Event: batchEvents[0]}, {Seq: 2, Event: batchEvents[1]}, {Seq: 3, Event: batchEvents[2]}, {Seq: 4, Event: batchEvents[4]}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("episode %s:\n got %+v\nwant %+v", parent, got, want)
	}
	if got := mustEpisode(t, s, sub, 0, 0); !reflect.DeepEqual(got, []episode.BufferedEvent{{Seq: 1, Event: batchEvents[3]}}) {
		t.Errorf("episode %s: got %+v", sub, got)
	}

	gotFS, err := s.FileState(ctx, "1:42")
	if err != nil || gotFS == nil || !reflect.DeepEqual(*gotFS, fs) {
		t.Errorf("file state: got %+v, %v; want %+v", gotFS, err, fs)
	}
	if n, buffered, checkpoints, err := s.EpisodeTotals(ctx); err != nil || n != 2 || buffered != 5 || checkpoints != 0 {
		t.Errorf("totals: %d sessions, %d buffered, %d checkpoints, %v; want 2, 5, 0", n, buffered, checkpoints, err)
	}

	// A later batch: scope kept when none is given, files grow, counts add.
	clk.advance(time.Minute)
	fs2 := file("1:43", 10)
	res = mustIngest(t, s, IngestBatch{File: fs2, Events: []transcript.Event{ev(parent, "e6", 9, transcript.KindError)}})
	p := res.Sessions[0]
	if p.Events != 5 || p.Buffered != 5 || p.ByKind["error"] != 1 || !slices.Equal(p.Scope, []string{"repo:muse"}) ||
		!slices.Equal(p.Files, []string{fs.Path, fs2.Path}) || !p.LastIngestAt.Equal(clk.now()) || p.GitBranch != "feature" {
		t.Errorf("after second batch: %+v", p)
	}
	if got := mustEpisode(t, s, parent, 4, 0); len(got) != 1 || got[0].Seq != 5 || got[0].Event.ID != "e6" {
		t.Errorf("episode after 4: %+v", got)
	}
}

func TestIngestFilesBounded(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	for i := range maxSessionFiles + 5 {
		mustIngest(t, s, IngestBatch{File: file(fmt.Sprintf("k%d", i), 1), Events: events("s", fmt.Sprintf("b%d", i), 1)})
	}
	// The same file again adds nothing.
	mustIngest(t, s, IngestBatch{File: file("k24", 2), Events: events("s", "again", 1)})
	files := mustSession(t, s, "s").Files
	if len(files) != maxSessionFiles || files[0] != "/t/k5.jsonl" || files[len(files)-1] != "/t/k24.jsonl" {
		t.Errorf("files: %q", files)
	}
}

func TestIngestDuplicates(t *testing.T) {
	tests := []struct {
		name    string
		batches [][]string // event ids per batch
		want    []int      // duplicates per batch
		stored  []string
	}{
		{"within a batch", [][]string{{"a", "b", "a", "c", "b"}}, []int{2}, []string{"a", "b", "c"}},
		{"across batches", [][]string{{"a", "b"}, {"b", "c", "a"}}, []int{0, 2}, []string{"a", "b", "c"}},
		{"both", [][]string{{"a"}, {"a", "a", "b", "b"}}, []int{0, 3}, []string{"a", "b"}},
		{"batch of repeats only", [][]string{{"a", "b"}, {"b", "a"}}, []int{0, 2}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openIngest(t, t.TempDir(), nil)
			for i, batch := range tt.batches {
				var evs []transcript.Event
				for j, id := range batch {
					evs = append(evs, ev("s", id, j, transcript.KindUserPrompt))
				}
				res := mustIngest(t, s, IngestBatch{File: file("f", int64(i+1)), Events: evs})
				if res.Duplicates != tt.want[i] || res.Added != len(batch)-tt.want[i] {
					t.Errorf("batch %d: added %d, duplicates %d; want %d, %d", i, res.Added, res.Duplicates, len(batch)-tt.want[i], tt.want[i])
				}
			}
			if got := ids(mustEpisode(t, s, "s", 0, 0)); !slices.Equal(got, tt.stored) {
				t.Errorf("stored %q, want %q", got, tt.stored)
			}
			si := mustSession(t, s, "s")
			if si.Events != int64(len(tt.stored)) || si.Buffered != int64(len(tt.stored)) {
				t.Errorf("session counts %d events, %d buffered; want %d", si.Events, si.Buffered, len(tt.stored))
			}
			// The offset of the last batch is stored even when it added nothing.
			if fs, err := s.FileState(context.Background(), "f"); err != nil || fs.Offset != int64(len(tt.batches)) {
				t.Errorf("file state %+v, %v", fs, err)
			}
		})
	}
}

func TestIngestDuplicateAcrossSessions(t *testing.T) {
	// An id is an event's identity whatever session the copy claims
	// (history copied on resume lands in the new session's file).
	s := openIngest(t, t.TempDir(), nil)
	mustIngest(t, s, IngestBatch{File: file("f1", 1), Events: []transcript.Event{ev("old", "x", 1, transcript.KindUserPrompt)}})
	res := mustIngest(t, s, IngestBatch{File: file("f2", 1), Events: []transcript.Event{
		ev("new", "x", 1, transcript.KindUserPrompt), ev("new", "y", 2, transcript.KindUserPrompt)}})
	if res.Added != 1 || res.Duplicates != 1 {
		t.Errorf("added %d, duplicates %d", res.Added, res.Duplicates)
	}
	if got := ids(mustEpisode(t, s, "new", 0, 0)); !slices.Equal(got, []string{"y"}) {
		t.Errorf("new session holds %q", got)
	}
}

// tooLargeForBadger is a batch that passes the event and byte limits but
// not Badger's: many sessions with long ids, each with a record and a
// chunk under the value threshold, which count in full.
func tooLargeForBadger(prefix string) IngestBatch {
	var evs []transcript.Event
	for i := range 1500 {
		sid := fmt.Sprintf("%s-%04d-%s", prefix, i, strings.Repeat("s", 900))
		evs = append(evs, ev(sid, fmt.Sprintf("%s-big-%d", prefix, i), i, transcript.KindUserPrompt))
	}
	return IngestBatch{File: file("f", 999), Events: evs}
}

// bigEvents makes n events of sessions s0…s(sessions-1) (session ids of
// sidLen bytes) whose JSON totals about total bytes.
func bigEvents(prefix string, n, sessions, sidLen, total int) []transcript.Event {
	sids := make([]string, sessions)
	for i := range sids {
		sids[i] = fmt.Sprintf("%s%03d", strings.Repeat("s", max(0, sidLen-3)), i)
	}
	evs := make([]transcript.Event, n)
	text := strings.Repeat("y", total/n-len(sids[0])-300)
	for i := range evs {
		evs[i] = transcript.Event{ID: fmt.Sprintf("%s-%d", prefix, i), Kind: transcript.KindToolResult,
			SessionID: sids[i%sessions], Agent: "codex", Text: text, Source: transcript.Source{Offset: int64(i)}}
	}
	return evs
}

func TestIngestBatchLimits(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, t.TempDir(), nil)
	// What is stored before the refused batches, which must not change.
	mustIngest(t, s, IngestBatch{File: file("f", 100), Events: events("s000", "first", 3)})

	tests := []struct {
		name  string
		batch IngestBatch
		why   string
	}{
		{"too many events", IngestBatch{File: file("f", 999), Events: events("s000", "many", MaxIngestEvents+1)}, "8193 events (limit 8192)"},
		{"too many bytes", IngestBatch{File: file("f", 999), Events: bigEvents("bytes", 1000, 1, 10, MaxIngestBytes+(1<<20))}, "more than 16777216 bytes"},
		{"too large for one transaction", tooLargeForBadger("txn"), "1500 events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sessions, buffered, _, err := s.EpisodeTotals(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Ingest(ctx, tt.batch)
			if !errors.Is(err, ErrBatchTooLarge) {
				t.Fatalf("got %v, want ErrBatchTooLarge", err)
			}
			if !strings.Contains(err.Error(), tt.why) {
				t.Errorf("got %v, want it to say %q", err, tt.why)
			}
			// Neither the offset nor any event, marker or session.
			if fs, err := s.FileState(ctx, "f"); err != nil || fs.Offset != 100 {
				t.Errorf("file state %+v, %v; want offset 100", fs, err)
			}
			if n, b, _, err := s.EpisodeTotals(ctx); err != nil || n != sessions || b != buffered {
				t.Errorf("totals %d sessions, %d buffered, %v; want %d, %d", n, b, err, sessions, buffered)
			}
			sub := IngestBatch{File: file("g", 1), Events: tt.batch.Events[len(tt.batch.Events)-2:]}
			res, err := s.Ingest(ctx, sub)
			if err != nil || res.Added != 2 {
				t.Errorf("re-ingesting 2 events of the refused batch: %+v, %v; want 2 added", res, err)
			}
		})
	}

	// The documented envelope always fits: MaxIngestEvents events of
	// MaxIngestSessions sessions with ids of MaxSessionIDLen bytes, just
	// under MaxIngestBytes.
	evs := bigEvents("fits", MaxIngestEvents, MaxIngestSessions, MaxSessionIDLen, MaxIngestBytes-(64<<10))
	res, err := s.Ingest(ctx, IngestBatch{File: file("h", 1), Events: evs})
	if err != nil || res.Added != MaxIngestEvents || len(res.Sessions) != MaxIngestSessions {
		t.Fatalf("batch at the limits: added %d, %d sessions, %v", res.Added, len(res.Sessions), err)
	}
	if got := mustEpisode(t, s, evs[5].SessionID, 0, 0); len(got) != MaxIngestEvents/MaxIngestSessions {
		t.Errorf("session holds %d events, want %d", len(got), MaxIngestEvents/MaxIngestSessions)
	}
}

func TestIngestInvalid(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, t.TempDir(), nil)
	good := ev("s", "ok", 1, transcript.KindUserPrompt)
	with := func(f func(e *transcript.Event)) []transcript.Event {
		e := good
		f(&e)
		return []transcript.Event{good, e}
	}
	tests := []struct {
		name  string
		batch IngestBatch
		want  string
	}{
		{"no file key", IngestBatch{Events: []transcript.Event{good}}, "without a key"},
		{"no id", IngestBatch{File: file("f", 1), Events: with(func(e *transcript.Event) { e.ID = "" })}, "empty id"},
		{"no session", IngestBatch{File: file("f", 1), Events: with(func(e *transcript.Event) { e.ID, e.SessionID = "x", "" })}, "empty session id"},
		{"NUL in session", IngestBatch{File: file("f", 1), Events: with(func(e *transcript.Event) { e.ID, e.SessionID = "x", "a\x00b" })}, "NUL"},
		{"long session", IngestBatch{File: file("f", 1), Events: with(func(e *transcript.Event) {
			e.ID, e.SessionID = "x", strings.Repeat("a", MaxSessionIDLen+1)
		})}, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Ingest(ctx, tt.batch)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if fs, _ := s.FileState(ctx, "f"); fs != nil {
				t.Errorf("file state stored: %+v", fs)
			}
			if si, _ := s.Session(ctx, "s"); si != nil {
				t.Errorf("session stored: %+v", si)
			}
		})
	}
}

func TestIngestSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openIngest(t, dir, nil)
	sid := "ßession/ünï/😀"
	mustIngest(t, s, IngestBatch{File: file("f", 10), Events: events(sid, "a", 5), Scopes: map[string][]string{sid: {"repo:x"}}})
	if err := s.ClearEpisode(ctx, sid, 2); err != nil {
		t.Fatal(err)
	}
	before := mustSession(t, s, sid)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openIngest(t, dir, nil)
	if got := mustSession(t, s, sid); !reflect.DeepEqual(got, before) {
		t.Errorf("session after reopen:\n got %+v\nwant %+v", got, before)
	}
	if got := ids(mustEpisode(t, s, sid, 0, 0)); !slices.Equal(got, []string{"a-2", "a-3", "a-4"}) {
		t.Errorf("episode after reopen: %q", got)
	}
	if fs, err := s.FileState(ctx, "f"); err != nil || fs == nil || fs.Offset != 10 {
		t.Errorf("file state after reopen: %+v, %v", fs, err)
	}
	// The dedupe set survived too, and seqs go on.
	res := mustIngest(t, s, IngestBatch{File: file("f", 20), Events: append(events(sid, "a", 5), ev(sid, "b", 1, transcript.KindSystem))})
	if res.Added != 1 || res.Duplicates != 5 {
		t.Errorf("after reopen: added %d, duplicates %d; want 1, 5", res.Added, res.Duplicates)
	}
	if got := mustEpisode(t, s, sid, 5, 0); len(got) != 1 || got[0].Seq != 6 {
		t.Errorf("new event: %+v", got)
	}
}

func TestClearEpisode(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s := openIngest(t, t.TempDir(), clk.now)
	// Three chunks: seqs 1–4, 5–7, 8–10.
	mustIngest(t, s, IngestBatch{File: file("f", 1), Events: events("s", "a", 4)})
	mustIngest(t, s, IngestBatch{File: file("f", 2), Events: events("s", "b", 3)})
	mustIngest(t, s, IngestBatch{File: file("f", 3), Events: events("s", "c", 3)})

	steps := []struct {
		upto     uint64
		ingest   int // events ingested after the clear
		wantSeqs []uint64
	}{
		{0, 0, seqRange(1, 10)},    // a checkpoint of nothing
		{5, 0, seqRange(6, 10)},    // the middle of a chunk
		{3, 0, seqRange(6, 10)},    // an older watermark changes nothing
		{7, 2, seqRange(8, 12)},    // end of a chunk; later events stay
		{100, 0, nil},              // beyond the last seq: what there is
		{100, 2, seqRange(13, 14)}, // …and later events are not hidden
	}
	for i, st := range steps {
		clk.advance(time.Second)
		if err := s.ClearEpisode(ctx, "s", st.upto); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if st.ingest > 0 {
			mustIngest(t, s, IngestBatch{File: file("f", int64(10+i)), Events: events("s", fmt.Sprintf("step%d", i), st.ingest)})
		}
		got := mustEpisode(t, s, "s", 0, 0)
		var seqs []uint64
		for _, e := range got {
			seqs = append(seqs, e.Seq)
		}
		if !slices.Equal(seqs, st.wantSeqs) {
			t.Errorf("step %d (upto %d): seqs %v, want %v", i, st.upto, seqs, st.wantSeqs)
		}
		si := mustSession(t, s, "s")
		if si.Buffered != int64(len(st.wantSeqs)) || si.Checkpoints != int64(i+1) || !si.LastCheckpointAt.Equal(clk.now()) {
			t.Errorf("step %d: buffered %d, checkpoints %d at %v; want %d, %d at %v",
				i, si.Buffered, si.Checkpoints, si.LastCheckpointAt, len(st.wantSeqs), i+1, clk.now())
		}
	}
	// Cleared chunks are deleted, the partly cleared one kept.
	if n := countKeys(t, s, chunkPrefix("s")); n != 1 {
		t.Errorf("%d chunks stored, want 1", n)
	}
	if err := s.ClearEpisode(ctx, "nobody", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("clear of an unknown session: %v, want ErrNotFound", err)
	}
}

func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func countKeys(t *testing.T, s *Badger, prefix []byte) int {
	t.Helper()
	n := 0
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestClearEpisodeCrashAndManyChunks(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, t.TempDir(), nil)
	old := clearBatchKeys
	clearBatchKeys = 3
	t.Cleanup(func() { clearBatchKeys = old })

	for i := range 10 { // ten chunks of two events
		mustIngest(t, s, IngestBatch{File: file("f", int64(i)), Events: events("s", fmt.Sprintf("c%d", i), 2)})
	}
	// A crash right after ClearEpisode's first transaction: the watermark
	// moved, the chunks below it are still stored.
	err := s.db.Update(func(txn *badger.Txn) error {
		rec, err := getSession(txn, "s")
		if err != nil {
			return err
		}
		rec.ClearedUpto, rec.Buffered, rec.Checkpoints = 15, 5, 1
		v, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return txn.Set(sessionKey("s"), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustEpisode(t, s, "s", 0, 0); len(got) != 5 || got[0].Seq != 16 {
		t.Errorf("after the crash: %d events from seq %d, want 5 from 16", len(got), got[0].Seq)
	}
	if got := mustEpisode(t, s, "s", 3, 2); len(got) != 2 || got[0].Seq != 16 {
		t.Errorf("page after 3: %+v", got)
	}
	if n := countKeys(t, s, chunkPrefix("s")); n != 10 {
		t.Fatalf("%d chunks before the next clear, want 10", n)
	}
	// The next checkpoint deletes the leftovers in several transactions.
	if err := s.ClearEpisode(ctx, "s", 18); err != nil {
		t.Fatal(err)
	}
	if n := countKeys(t, s, chunkPrefix("s")); n != 1 {
		t.Errorf("%d chunks after the next clear, want 1 (seqs 19–20)", n)
	}
	si := mustSession(t, s, "s")
	if si.Buffered != 2 || si.Checkpoints != 2 {
		t.Errorf("buffered %d, checkpoints %d; want 2, 2", si.Buffered, si.Checkpoints)
	}
	if got := ids(mustEpisode(t, s, "s", 0, 0)); !slices.Equal(got, []string{"c9-0", "c9-1"}) {
		t.Errorf("left: %q", got)
	}
}

// deletedUpto reads a session's DeletedUpto from its record.
func deletedUpto(t *testing.T, s *Badger, sid string) uint64 {
	t.Helper()
	var rec *sessionRecord
	err := s.db.View(func(txn *badger.Txn) error {
		var err error
		rec, err = getSession(txn, sid)
		return err
	})
	if err != nil || rec == nil {
		t.Fatalf("session %s: %v, %v", sid, rec, err)
	}
	return rec.DeletedUpto
}

// TestClearEpisodeDeletedUpto checks where checkpoints start deleting:
// after one that finished, at its watermark; after one interrupted between
// its transactions (as by a crash), where the interrupted one started, so
// the next deletes the leftovers.
func TestClearEpisodeDeletedUpto(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	old := clearBatchKeys
	clearBatchKeys = 3
	t.Cleanup(func() {
		clearBatchKeys = old
		beforeCommit = nil
	})
	for i := range 10 { // ten chunks of two events: seqs 1–20
		mustIngest(t, s, IngestBatch{File: file("f", int64(i)), Events: events("s", fmt.Sprintf("c%d", i), 2)})
	}
	ctx := context.Background()
	if err := s.ClearEpisode(ctx, "s", 5); err != nil { // chunks 2, 4
		t.Fatal(err)
	}
	if got := deletedUpto(t, s, "s"); got != 5 {
		t.Errorf("deleted up to %d after the first clear, want 5", got)
	}
	if n := countKeys(t, s, chunkPrefix("s")); n != 8 {
		t.Errorf("%d chunks, want 8", n)
	}

	// Interrupted after its first transaction, which deletes 3 of the
	// chunks 6, 8, …, 16: the record still says 5.
	cctx, cancel := context.WithCancel(ctx)
	beforeCommit = func(op string) {
		if op == "clear" {
			cancel()
		}
	}
	if err := s.ClearEpisode(cctx, "s", 16); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted clear: %v, want context.Canceled", err)
	}
	beforeCommit = nil
	if got := deletedUpto(t, s, "s"); got != 5 {
		t.Errorf("deleted up to %d after the interrupted clear, want 5", got)
	}
	if n := countKeys(t, s, chunkPrefix("s")); n != 5 {
		t.Errorf("%d chunks after the interrupted clear, want 5", n)
	}
	if got := mustEpisode(t, s, "s", 0, 0); len(got) != 4 || got[0].Seq != 17 {
		t.Errorf("after the interrupted clear: %d events from seq %d, want 4 from 17", len(got), got[0].Seq)
	}

	// The next clear deletes the leftovers in two transactions.
	if err := s.ClearEpisode(ctx, "s", 18); err != nil {
		t.Fatal(err)
	}
	if got := deletedUpto(t, s, "s"); got != 18 {
		t.Errorf("deleted up to %d after the last clear, want 18", got)
	}
	if n := countKeys(t, s, chunkPrefix("s")); n != 1 {
		t.Errorf("%d chunks after the last clear, want 1 (seqs 19–20)", n)
	}
	if got := ids(mustEpisode(t, s, "s", 0, 0)); !slices.Equal(got, []string{"c9-0", "c9-1"}) {
		t.Errorf("left: %q", got)
	}
}

func TestEpisodePaging(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	// Chunks of several sizes: batches of 1, 3 and 7 events, and one batch
	// of events large enough to be cut into several chunks.
	var all []string
	for i, n := range []int{1, 3, 7, 1} {
		evs := events("s", fmt.Sprintf("b%d", i), n)
		mustIngest(t, s, IngestBatch{File: file("f", int64(i)), Events: evs})
		for _, e := range evs {
			all = append(all, e.ID)
		}
	}
	big := bigEvents("big", 10, 1, 1, 10*(20<<10))
	for i := range big {
		big[i].SessionID = "s"
		all = append(all, big[i].ID)
	}
	mustIngest(t, s, IngestBatch{File: file("f", 9), Events: big})
	if n := countKeys(t, s, chunkPrefix("s")); n < 6 {
		t.Errorf("%d chunks, want the big batch cut in several", n)
	}

	for _, limit := range []int{1, 2, 3, 5, 100} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			var got []string
			var after uint64
			for {
				page := mustEpisode(t, s, "s", after, limit)
				if len(page) == 0 {
					break
				}
				if len(page) > limit {
					t.Fatalf("page of %d events, limit %d", len(page), limit)
				}
				for i, e := range page {
					if e.Seq != after+uint64(i)+1 {
						t.Fatalf("seq %d after %d at %d", e.Seq, after, i)
					}
				}
				got = append(got, ids(page)...)
				after = page[len(page)-1].Seq
			}
			if !slices.Equal(got, all) {
				t.Errorf("pages gave %q, want %q", got, all)
			}
		})
	}
	if got := mustEpisode(t, s, "s", uint64(len(all)), 0); len(got) != 0 {
		t.Errorf("after the last seq: %d events", len(got))
	}
	if got := mustEpisode(t, s, "unknown", 0, 0); len(got) != 0 {
		t.Errorf("unknown session: %d events", len(got))
	}
}

func TestSessionIDs(t *testing.T) {
	// Ids that share prefixes, and ids with slashes and unicode: each
	// reads its own events only.
	sids := []string{"a", "a/b", "a/b/agent-1", "a\x01", "ab", "日本/セッション", "😀", "a b"}
	s := openIngest(t, t.TempDir(), nil)
	var evs []transcript.Event
	for i, sid := range sids {
		evs = append(evs, events(sid, fmt.Sprintf("id%d", i), i+1)...)
	}
	mustIngest(t, s, IngestBatch{File: file("f", 1), Events: evs})
	for i, sid := range sids {
		got := mustEpisode(t, s, sid, 0, 0)
		if len(got) != i+1 {
			t.Errorf("%q: %d events, want %d", sid, len(got), i+1)
		}
		for _, e := range got {
			if e.Event.SessionID != sid {
				t.Errorf("%q holds an event of %q", sid, e.Event.SessionID)
			}
		}
		if err := s.ClearEpisode(context.Background(), sid, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, sid := range sids {
		if si := mustSession(t, s, sid); si.Buffered != 0 {
			t.Errorf("%q: %d buffered after clearing all", sid, si.Buffered)
		}
	}
	if n := countKeys(t, s, []byte(prefixChunk)); n != 0 {
		t.Errorf("%d chunks left", n)
	}
}

func TestSessionsOrder(t *testing.T) {
	clk := newClock()
	s := openIngest(t, t.TempDir(), clk.now)
	ingest := func(sids ...string) {
		var evs []transcript.Event
		for _, sid := range sids {
			evs = append(evs, ev(sid, "id-"+sid+clk.now().String(), 1, transcript.KindUserPrompt))
		}
		mustIngest(t, s, IngestBatch{File: file("f", 1), Events: evs})
		clk.advance(time.Second)
	}
	ingest("old")
	ingest("c", "b") // same instant: by id
	ingest("new")
	ingest("old") // active again
	got, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, si := range got {
		order = append(order, si.ID)
	}
	if want := []string{"old", "new", "b", "c"}; !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
}

func TestFileStates(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, t.TempDir(), nil)
	for _, k := range []string{"2:7", "1:9", "1:10"} {
		mustIngest(t, s, IngestBatch{File: file(k, 5)})
	}
	list, err := s.FileStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, fs := range list {
		keys = append(keys, fs.Key)
	}
	if want := []string{"1:10", "1:9", "2:7"}; !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	for _, k := range []string{"1:9", "1:9", "absent"} {
		if err := s.DeleteFileState(ctx, k); err != nil {
			t.Errorf("delete %s: %v", k, err)
		}
	}
	if fs, err := s.FileState(ctx, "1:9"); fs != nil || err != nil {
		t.Errorf("deleted state: %+v, %v", fs, err)
	}
	if list, _ := s.FileStates(ctx); len(list) != 2 {
		t.Errorf("%d states left, want 2", len(list))
	}
	// UpdatedAt is set when the caller left it zero.
	fs := file("z", 1)
	fs.UpdatedAt = time.Time{}
	mustIngest(t, s, IngestBatch{File: fs})
	if got, _ := s.FileState(ctx, "z"); got == nil || got.UpdatedAt.IsZero() {
		t.Errorf("updated_at not set: %+v", got)
	}
}

func TestDedupeMarkerTTL(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	mustIngest(t, s, IngestBatch{File: file("f", 1), Events: events("s", "a", 3)})
	lo := uint64(time.Now().Add(DedupeTTL - time.Minute).Unix())
	hi := uint64(time.Now().Add(DedupeTTL + time.Minute).Unix())
	n := 0
	err := s.db.View(func(txn *badger.Txn) error {
		for _, id := range []string{"a-0", "a-1", "a-2"} {
			item, err := txn.Get(markerKey(id))
			if err != nil {
				return fmt.Errorf("marker of %s: %w", id, err)
			}
			if exp := item.ExpiresAt(); exp < lo || exp > hi {
				t.Errorf("marker of %s expires at %d, want about now + %v", id, exp, DedupeTTL)
			}
			n++
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("%d markers, %v", n, err)
	}
	if got := countKeys(t, s, []byte(prefixMarker)); got != 3 {
		t.Errorf("%d markers stored, want 3", got)
	}
}

// TestIngestClearRace runs an ingester and a checkpointer on one session
// at once, as the daemon's two goroutines do: every event is either still
// buffered or was handed to exactly one checkpoint.
func TestIngestClearRace(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, t.TempDir(), nil)
	const batches, perBatch = 60, 25
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := range batches {
			_, err := s.Ingest(ctx, IngestBatch{File: file("f", int64(i)), Events: events("s", fmt.Sprintf("b%d", i), perBatch)})
			if err != nil {
				t.Errorf("ingest %d: %v", i, err)
				return
			}
		}
	}()
	var cleared []string
	go func() {
		defer wg.Done()
		for !done.Load() || len(cleared) == 0 {
			evs, err := s.Episode(ctx, "s", 0, 0)
			if err != nil {
				t.Errorf("episode: %v", err)
				return
			}
			if len(evs) == 0 {
				continue
			}
			if err := s.ClearEpisode(ctx, "s", evs[len(evs)-1].Seq); err != nil {
				t.Errorf("clear: %v", err)
				return
			}
			cleared = append(cleared, ids(evs)...)
		}
	}()
	wg.Wait()

	left := mustEpisode(t, s, "s", 0, 0)
	si := mustSession(t, s, "s")
	all := append(slices.Clone(cleared), ids(left)...)
	if len(all) != batches*perBatch || si.Buffered != int64(len(left)) || si.Events != batches*perBatch {
		t.Errorf("cleared %d + buffered %d (session says %d) of %d events (session says %d)",
			len(cleared), len(left), si.Buffered, batches*perBatch, si.Events)
	}
	slices.Sort(all)
	if len(slices.Compact(all)) != len(all) {
		t.Error("an event was handed to two checkpoints")
	}
	t.Logf("%d checkpoints, %d events cleared, %d left", si.Checkpoints, len(cleared), len(left))
	checkTotals(t, s)
}

// checkTotals checks that the totals kept in memory, and the counters
// stored, equal the sums of the stored session records.
func checkTotals(t *testing.T, s *Badger) {
	t.Helper()
	var want totalsDelta
	err := s.db.View(func(txn *badger.Txn) (err error) { want, err = sumSessions(txn); return err })
	if err != nil {
		t.Fatal(err)
	}
	n, buffered, checkpoints, err := s.EpisodeTotals(context.Background())
	if err != nil || n != want.sessions || buffered != want.buffered || checkpoints != want.checkpoints {
		t.Errorf("totals %d sessions, %d buffered, %d checkpoints (%v); the records sum to %+v",
			n, buffered, checkpoints, err, want)
	}
	checkCounters(t, s)
}

// TestEpisodeTotalsKept checks the kept totals against the records after
// every kind of write, a refused batch, and a reopen.
func TestEpisodeTotalsKept(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openIngest(t, dir, nil)
	checkTotals(t, s)
	mustIngest(t, s, IngestBatch{File: file("f", 1), Events: events("a", "a1", 5)})
	checkTotals(t, s)
	// Two sessions in one batch, one new, one known.
	two := append(events("a", "a2", 3), events("b", "b1", 4)...)
	mustIngest(t, s, IngestBatch{File: file("f", 2), Events: two})
	checkTotals(t, s)
	// Duplicates only: nothing changes.
	mustIngest(t, s, IngestBatch{File: file("f", 3), Events: two})
	checkTotals(t, s)
	if err := s.ClearEpisode(ctx, "a", 6); err != nil {
		t.Fatal(err)
	}
	checkTotals(t, s)
	if err := s.ClearEpisode(ctx, "b", 100); err != nil {
		t.Fatal(err)
	}
	checkTotals(t, s)
	if err := s.ClearEpisode(ctx, "nobody", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("clear of an unknown session: %v", err)
	}
	// A refused batch stores nothing and counts nothing.
	if _, err := s.Ingest(ctx, IngestBatch{File: file("f", 4), Events: events("c", "c1", MaxIngestEvents+1)}); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("oversized batch: %v", err)
	}
	checkTotals(t, s)
	n, buffered, checkpoints, _ := s.EpisodeTotals(ctx)
	if n != 2 || buffered != 2 || checkpoints != 2 {
		t.Errorf("totals %d, %d, %d; want 2 sessions, 2 buffered, 2 checkpoints", n, buffered, checkpoints)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openIngest(t, dir, nil)
	if n2, b2, c2, _ := s.EpisodeTotals(ctx); n2 != n || b2 != buffered || c2 != checkpoints {
		t.Errorf("after reopening: %d, %d, %d; want %d, %d, %d", n2, b2, c2, n, buffered, checkpoints)
	}
}

// TestIngestClearConflict makes each writer commit in the middle of the
// other's transaction: the loser must start over and lose nothing.
func TestIngestClearConflict(t *testing.T) {
	tests := []struct {
		victim, other string // the op whose commit is raced, the one that wins
	}{
		{"ingest", "clear"},
		{"clear", "ingest"},
	}
	for _, tt := range tests {
		t.Run(tt.victim, func(t *testing.T) {
			ctx := context.Background()
			s := openIngest(t, t.TempDir(), nil)
			mustIngest(t, s, IngestBatch{File: file("f", 1), Events: events("s", "a", 4)})
			ingest := func() error {
				_, err := s.Ingest(ctx, IngestBatch{File: file("f", 2), Events: events("s", "b", 3)})
				return err
			}
			clear := func() error { return s.ClearEpisode(ctx, "s", 4) }
			ops := map[string]func() error{"ingest": ingest, "clear": clear}
			attempts := 0
			beforeCommit = func(op string) {
				if op != tt.victim {
					return
				}
				if attempts++; attempts == 1 {
					if err := ops[tt.other](); err != nil {
						t.Errorf("%s: %v", tt.other, err)
					}
				}
			}
			t.Cleanup(func() { beforeCommit = nil })
			if err := ops[tt.victim](); err != nil {
				t.Fatalf("%s: %v", tt.victim, err)
			}
			if attempts != 2 {
				t.Errorf("%s ran %d times, want 2 (a conflict, then success)", tt.victim, attempts)
			}
			si := mustSession(t, s, "s")
			got := ids(mustEpisode(t, s, "s", 0, 0))
			if want := []string{"b-0", "b-1", "b-2"}; !slices.Equal(got, want) || si.Buffered != 3 || si.Events != 7 || si.Checkpoints != 1 {
				t.Errorf("buffered %q (%d), %d events, %d checkpoints; want %q, 7 events, 1 checkpoint",
					got, si.Buffered, si.Events, si.Checkpoints, want)
			}
			checkTotals(t, s)
		})
	}
}

func TestEpisodeClosedAndCancelled(t *testing.T) {
	s := openIngest(t, t.TempDir(), nil)
	mustIngest(t, s, IngestBatch{File: file("f", 1), Events: events("s", "a", 1)})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]func(ctx context.Context) error{
		"ingest": func(ctx context.Context) error {
			_, err := s.Ingest(ctx, IngestBatch{File: file("f", 2), Events: events("s", "b", 1)})
			return err
		},
		"file state":    func(ctx context.Context) error { _, err := s.FileState(ctx, "f"); return err },
		"file states":   func(ctx context.Context) error { _, err := s.FileStates(ctx); return err },
		"delete state":  func(ctx context.Context) error { return s.DeleteFileState(ctx, "f") },
		"sessions":      func(ctx context.Context) error { _, err := s.Sessions(ctx); return err },
		"session":       func(ctx context.Context) error { _, err := s.Session(ctx, "s"); return err },
		"episode":       func(ctx context.Context) error { _, err := s.Episode(ctx, "s", 0, 0); return err },
		"clear":         func(ctx context.Context) error { return s.ClearEpisode(ctx, "s", 1) },
		"episode total": func(ctx context.Context) error { _, _, _, err := s.EpisodeTotals(ctx); return err },
	}
	for name, call := range calls {
		if err := call(cancelled); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", name, err)
		}
	}
	// Nothing above changed the store.
	if si := mustSession(t, s, "s"); si.Events != 1 || si.Checkpoints != 0 {
		t.Errorf("session changed: %+v", si)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, call := range calls {
		if err := call(context.Background()); !errors.Is(err, errClosed) {
			t.Errorf("%s on a closed store: %v", name, err)
		}
	}
}

// TestParserState: a parser state is stored with the offset it belongs to,
// kept when a batch says so, replaced or deleted otherwise, survives a
// reopen, goes with its file, and is bounded.
func TestParserState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openIngest(t, dir, nil)
	state := func(key string) string {
		t.Helper()
		b, err := s.ParserState(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := state("1:1"); got != "" {
		t.Errorf("state of an unknown file: %q", got)
	}
	mustIngest(t, s, IngestBatch{File: file("1:1", 10), Events: events("s1", "a", 2), ParserState: []byte(`{"v":1}`)})
	if got := state("1:1"); got != `{"v":1}` {
		t.Errorf("state %q after the first batch", got)
	}
	mustIngest(t, s, IngestBatch{File: file("1:1", 20), KeepParserState: true})
	if got := state("1:1"); got != `{"v":1}` {
		t.Errorf("state %q after a batch that kept it", got)
	}
	mustIngest(t, s, IngestBatch{File: file("1:1", 30), ParserState: []byte(`{"v":2}`)})
	mustIngest(t, s, IngestBatch{File: file("2:2", 5), ParserState: []byte(`{"v":3}`)})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openIngest(t, dir, nil)
	if got := state("1:1"); got != `{"v":2}` {
		t.Errorf("state %q after a reopen", got)
	}
	mustIngest(t, s, IngestBatch{File: file("1:1", 40)})
	if got := state("1:1"); got != "" {
		t.Errorf("state %q after a batch without one", got)
	}
	if err := s.DeleteFileState(ctx, "2:2"); err != nil {
		t.Fatal(err)
	}
	if got := state("2:2"); got != "" {
		t.Errorf("state %q of a deleted file", got)
	}
	// Too large: refused before anything is stored.
	_, err := s.Ingest(ctx, IngestBatch{File: file("1:1", 50), Events: events("s1", "b", 1), ParserState: make([]byte, MaxParserState+1)})
	if err == nil || errors.Is(err, ErrBatchTooLarge) {
		t.Errorf("oversized state: %v, want an error other than ErrBatchTooLarge (splitting cannot help)", err)
	}
	if fs, _ := s.FileState(ctx, "1:1"); fs.Offset != 40 {
		t.Errorf("offset %d after a refused batch, want 40", fs.Offset)
	}
}

// TestIngestPooledChunksReadBack: batches whose chunks come from buffers
// earlier batches gave back (chunkBufs) store exactly their own events.
// A buffer given back while its transaction still holds it (released at
// a mid-batch flush, say) is filled again with the batch's next events,
// and shows here as a wrong text. Every fifth batch is a few short events,
// so that some chunks are under the value threshold and go to the
// memtable rather than the value log.
func TestIngestPooledChunksReadBack(t *testing.T) {
	s := openIngest(t, t.TempDir(), newClock().now)
	sessions := []string{"pool-a", "pool-b"}
	want := map[string][]string{}
	n := 0
	for batch := range 24 {
		var evs []transcript.Event
		// Uneven sizes, so that chunks end at different places in every
		// batch, and a session fills more than one chunk in most.
		small := batch%5 == 4
		count := 50 + batch%7
		if small {
			count = 2 + batch%3
		}
		for i := range count {
			sid := sessions[(batch+i)%len(sessions)]
			e := ev(sid, fmt.Sprintf("p%d-%d", batch, i), n, transcript.KindToolResult)
			size := 2000 + n%3000
			if small {
				size = 10
			}
			e.Text = fmt.Sprintf("%s %d %s", e.ID, n, strings.Repeat(string(rune('a'+n%26)), size))
			want[sid] = append(want[sid], e.Text)
			evs = append(evs, e)
			n++
		}
		res := mustIngest(t, s, IngestBatch{File: file("1:9", int64(batch+1)), Events: evs})
		if res.Added != len(evs) {
			t.Fatalf("batch %d: added %d of %d", batch, res.Added, len(evs))
		}
	}
	for _, sid := range sessions {
		got := mustEpisode(t, s, sid, 0, 0)
		if len(got) != len(want[sid]) {
			t.Fatalf("%s: %d events read back, want %d", sid, len(got), len(want[sid]))
		}
		for i, be := range got {
			if be.Seq != uint64(i+1) || be.Event.Text != want[sid][i] {
				t.Fatalf("%s event %d: seq %d, text %.40q…; want seq %d, %.40q…", sid, i, be.Seq, be.Event.Text, i+1, want[sid][i])
			}
		}
	}
}
