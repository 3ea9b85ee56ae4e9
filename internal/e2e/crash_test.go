package e2e

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/transcript"
)

// TestCrashLosesNothing appends to several transcript files at once, in
// chunks that split lines, while the real daemon ingests them and is killed
// with SIGKILL at random moments and restarted. When the writers are done
// and the daemon has caught up, every session must hold exactly the events
// of a clean run over the final files: no event lost, none stored twice.
// The Claude Code sessions hold prompts queued while the agent was busy and
// delivered a few records later: a kill between the two must not make the
// delivery a second prompt (issue 14).
func TestCrashLosesNothing(t *testing.T) {
	// Not parallel: it needs at least three kill-and-restart rounds while its
	// writers run, and daemons that restart slowly on a busy machine fit fewer.
	if testing.Short() {
		t.Skip("kills and restarts the daemon for several seconds")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	root := t.TempDir()

	// The final contents, written in pieces below.
	files := map[string][]byte{}
	for i := range 4 {
		id := []string{"c1c1c1c1", "c2c2c2c2", "c3c3c3c3", "c4c4c4c4"}[i] + "-0000-4000-8000-000000000001"
		g := fixture.NewClaude(id, "/home/dev/muse", seed+uint64(i))
		g.MaxResult, g.Plain, g.Queued = 3000, true, 40
		files[filepath.Join(root, "-home-dev-muse", id+".jsonl")] = turns(g, 70)
	}
	cx := fixture.NewCodex("019c9a10-4444-7aaa-8bbb-0123456789ab", "/home/dev/importer", seed)
	// Plain: nothing fires a "significant" checkpoint, so every event stays
	// buffered and the ids can be compared.
	cx.Plain = true
	codex := cx.Meta()
	for range 150 {
		for _, l := range cx.Turn() {
			codex = append(codex, l...)
		}
	}
	files[filepath.Join(root, "codex", "2026", "03", "02", "rollout-2026-03-02T10-00-00-"+cx.ID+".jsonl")] = codex
	lines := 0
	for path, data := range files {
		lines += bytes.Count(data, []byte("\n"))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d files, %d lines", len(files), lines)

	d := newIngestd(t, root, "")
	d.start()

	// Writers: random chunk sizes (most split a line), random pauses.
	var wg sync.WaitGroup
	for path, data := range files {
		wr := rand.New(rand.NewPCG(rng.Uint64(), 2))
		wg.Go(func() {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for len(data) > 0 {
				n := min(len(data), 1+wr.IntN(3000))
				if _, err := f.Write(data[:n]); err != nil {
					t.Error(err)
					return
				}
				data = data[n:]
				time.Sleep(time.Duration(wr.IntN(20)) * time.Millisecond)
			}
		})
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	started := time.Now()
	kills, duringWrites := 3+rng.IntN(3), 0
	for k := range kills {
		time.Sleep(time.Duration(200+rng.IntN(700)) * time.Millisecond)
		d.kill()
		select {
		case <-writing:
		default:
			duringWrites++
		}
		t.Logf("kill -9 #%d at %s", k+1, time.Since(started).Round(time.Millisecond))
		d.start()
	}
	<-writing
	t.Logf("writers done after %s; %d of %d kills while they wrote", time.Since(started).Round(time.Millisecond), duringWrites, kills)
	if duringWrites < 3 {
		t.Errorf("only %d kills happened while the files were written; want at least 3", duringWrites)
	}
	crashed := d.caughtUp(60 * time.Second)
	got := collect(t, d)
	gotPrompts, gotQueued := prompts(d)
	d.stop()

	// A clean run over the final files, on a fresh data dir.
	clean := newIngestd(t, root, "")
	clean.start()
	cleanStatus := clean.caughtUp(60 * time.Second)
	want := collect(t, clean)
	wantPrompts, wantQueued := prompts(clean)
	clean.stop()

	if wantQueued == 0 {
		t.Error("no queued prompts in the clean run: the stream does not test them")
	}
	if gotPrompts != wantPrompts || gotQueued != wantQueued {
		t.Errorf("user prompts: %d (%d queued) after the crashes, %d (%d queued) in a clean run", gotPrompts, gotQueued, wantPrompts, wantQueued)
	}

	if len(want) != 5 {
		t.Errorf("clean run found %d sessions, want 5", len(want))
	}
	total := 0
	for id, w := range want {
		total += len(w)
		g := got[id]
		if len(g) != len(w) {
			t.Errorf("session %s: %d events after the crashes, %d in a clean run", id, len(g), len(w))
			continue
		}
		for i := range w {
			if g[i] != w[i] {
				t.Errorf("session %s: event ids differ from a clean run (first at %d: %s vs %s)", id, i, g[i], w[i])
				break
			}
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("session %s exists only after the crashes", id)
		}
	}
	// The clean run is itself right: as many events as a direct parse of
	// the files finds distinct ids.
	if n := directCount(t, files); n != total {
		t.Errorf("clean run stored %d events, a direct parse finds %d", total, n)
	}
	if crashed.BacklogBytes != 0 || cleanStatus.BacklogBytes != 0 {
		t.Errorf("backlog: %d after the crashes, %d in the clean run", crashed.BacklogBytes, cleanStatus.BacklogBytes)
	}
	t.Logf("%d kills; %d events in %d sessions match a clean run; %d user prompts, %d of them queued", kills, total, len(want), wantPrompts, wantQueued)
}

// prompts counts the user prompts d stores, and those queued while the
// agent was busy.
func prompts(d *ingestd) (all, queued int) {
	for id := range d.sessions() {
		for _, e := range d.events(id) {
			if e.Event.Kind == transcript.KindUserPrompt {
				all++
				if e.Event.Subtype == transcript.SubtypeQueued {
					queued++
				}
			}
		}
	}
	return all, queued
}

// collect returns each session's buffered event ids, sorted, failing on an
// id buffered twice.
func collect(t *testing.T, d *ingestd) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for id, s := range d.sessions() {
		events := d.events(id)
		if int64(len(events)) != s.Events || s.Buffered != s.Events {
			t.Errorf("session %s: %d events buffered, summary says %d events, %d buffered", id, len(events), s.Events, s.Buffered)
		}
		seen := map[string]bool{}
		var ids []string
		for _, e := range events {
			if seen[e.Event.ID] {
				t.Errorf("session %s: event %s stored twice", id, e.Event.ID)
			}
			seen[e.Event.ID] = true
			ids = append(ids, e.Event.ID)
		}
		sort.Strings(ids)
		out[id] = ids
	}
	return out
}

// directCount parses the files with fresh parsers and counts distinct ids.
func directCount(t *testing.T, files map[string][]byte) int {
	t.Helper()
	ids := map[string]bool{}
	for path, data := range files {
		format := transcript.FormatClaudeCode
		if filepath.Base(filepath.Dir(path)) == "02" {
			format = transcript.FormatCodex
		}
		p, err := transcript.New(format, transcript.Options{})
		if err != nil {
			t.Fatal(err)
		}
		off := int64(0)
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			for _, e := range p.ParseLine(bytes.TrimSuffix(l, []byte("\n")), transcript.Position{Path: path, Offset: off}) {
				ids[e.ID] = true
			}
			off += int64(len(l))
		}
	}
	return len(ids)
}
