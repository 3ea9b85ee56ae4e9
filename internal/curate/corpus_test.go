package curate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/checkpoint"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/render"
	"github.com/medallionhq/medallion/internal/transcript"
)

// storedEvidence checks that m, evidence from real transcripts included,
// comes back whole from the store's encoding and is written as JSON
// exactly as encoding/json writes it, and returns the encoding's size and
// how much of it is evidence (issue 12: evidence should not dominate).
func storedEvidence(t *testing.T, m *medallion.Medallion) (size, evidence int) {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back medallion.Medallion
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("%s: %v", m.Meta.MedallionID, err)
	}
	want := m.Clone()
	want.Normalize()
	if !reflect.DeepEqual(&back, want) {
		t.Errorf("%s: the store's encoding did not round-trip:\n got %+v\nwant %+v", m.Meta.MedallionID, back.Evidence, want.Evidence)
	}
	js, err := medallion.AppendJSON(nil, b)
	if wantJS, _ := json.Marshal(&back); err != nil || !bytes.Equal(js, wantJS) {
		t.Errorf("%s: AppendJSON = %s, %v\nwant %s", m.Meta.MedallionID, js, err, wantJS)
	}
	bare := m.Clone()
	bare.Evidence = nil
	rest, _ := bare.MarshalBinary()
	return len(b), len(b) - len(rest)
}

// corpusDir is the shared corpus of real sessions, next to the checkout.
var corpusDir = filepath.Join("..", "..", "..", "shared", "corpus")

// The daemon's default checkpoint triggers (config.DefaultCheckpoint): a
// checkpoint every 10 buffered events, then one when the session idles.
const (
	simEveryEvents = 10
	simMinEvents   = 5
)

// simulation is what the checkpoint simulation of one transcript gave.
type simulation struct {
	events      int
	checkpoints int
	items       map[string]int // extracted items by kind, over all checkpoints
	medallions  []*medallion.Medallion
}

// parseFile parses a transcript into events, in file order.
func parseFile(t testing.TB, format transcript.Format, path string) []transcript.Event {
	t.Helper()
	p, err := transcript.New(format, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	var events []transcript.Event
	var off int64
	for sc.Scan() {
		events = append(events, p.ParseLine(sc.Bytes(), transcript.Position{File: filepath.Base(path), Path: path, Offset: off})...)
		off += int64(len(sc.Bytes())) + 1
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return events
}

// checkpoints runs events through the daemon's checkpoints, per session:
// one episode each time simEveryEvents events are buffered (a live
// checkpoint leaves a call still waiting for its result buffered), then a
// final idle checkpoint of the rest, which comes even when nothing is left
// (as the daemon gives an IdleFinisher). ep gets each episode with its
// trigger; sessions lists the session ids in order of first appearance.
func checkpoints(events []transcript.Event, ep func(sid, trigger string, buf []episode.BufferedEvent)) (sessions []string) {
	buffers := map[string][]episode.BufferedEvent{}
	flush := func(sid, trigger string) {
		buf := buffers[sid]
		n := len(buf)
		if trigger != checkpoint.TriggerIdle {
			n = episode.Settled(buf)
		}
		buf, buffers[sid] = buf[:n:n], slices.Clone(buf[n:])
		if len(buf) > 0 || trigger == checkpoint.TriggerIdle {
			ep(sid, trigger, buf)
		}
	}
	for i, e := range events {
		sid := e.SessionID
		if _, ok := buffers[sid]; !ok {
			sessions = append(sessions, sid)
		}
		buffers[sid] = append(buffers[sid], episode.BufferedEvent{Seq: uint64(i + 1), Event: e})
		if len(buffers[sid]) >= max(simEveryEvents, simMinEvents) {
			flush(sid, checkpoint.TriggerEveryEvents)
		}
	}
	for _, sid := range sessions {
		flush(sid, checkpoint.TriggerIdle)
	}
	return sessions
}

// simulate runs a transcript's events through checkpoints as the daemon
// would; each episode is Extracted and Applied to the session scope's
// medallion in memory.
func simulate(t testing.TB, format transcript.Format, path string) simulation {
	t.Helper()
	events := parseFile(t, format, path)
	sim := simulation{events: len(events), items: map[string]int{}}
	meds := map[string]*medallion.Medallion{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	scope := []string{"repo:" + filepath.Base(path)}
	sessions := checkpoints(events, func(sid, _ string, buf []episode.BufferedEvent) {
		if len(buf) == 0 {
			return
		}
		ep := checkpoint.Episode{SessionID: sid, Scope: scope, Agent: string(format), Events: buf, Context: episode.Derive(buf)}
		items := Extract(ep)
		sim.checkpoints++
		for k, n := range countItems(items) {
			sim.items[k] += n
		}
		if items.Empty() {
			return
		}
		now = now.Add(time.Minute)
		m := Apply(meds[sid], scope, items, now)
		m.Meta.Version++ // as the store would
		if err := m.Validate(); err != nil {
			t.Errorf("%s: checkpoint %d: invalid medallion: %v", filepath.Base(path), sim.checkpoints, err)
		}
		meds[sid] = m
	})
	for _, sid := range sessions {
		if m := meds[sid]; m != nil {
			sim.medallions = append(sim.medallions, m)
		}
	}
	return sim
}

func countItems(it Items) map[string]int {
	return map[string]int{
		"avoid_repeating": len(it.AvoidRepeating), "invariants": len(it.Invariants), "decisions": len(it.Decisions),
		"open_questions": len(it.OpenQuestions), "closed": len(it.Closed), "subsystems": len(it.Subsystems),
	}
}

// corpusFiles lists the Claude Code and Codex session files of the corpus.
func corpusFiles(t testing.TB) map[transcript.Format][]string {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("no corpus at %s", corpusDir)
	}
	out := map[transcript.Format][]string{}
	for _, f := range []transcript.Format{transcript.FormatClaudeCode, transcript.FormatCodex} {
		files, err := filepath.Glob(filepath.Join(corpusDir, string(f), "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = files
	}
	return out
}

// TestCorpus: every Claude Code and Codex session of the shared corpus
// yields valid medallions at every checkpoint; per session it logs the
// events in, the items out by kind, and the tokens of the rendered load
// against those of the raw transcript.
func TestCorpus(t *testing.T) {
	files := corpusFiles(t)
	var stored, evidence int // bytes of the medallions as the store keeps them
	defer func() {
		if stored > 0 {
			t.Logf("stored: %d bytes, evidence %d of them (%.0f %%)", stored, evidence, 100*float64(evidence)/float64(stored))
		}
	}()
	for _, format := range []transcript.Format{transcript.FormatClaudeCode, transcript.FormatCodex} {
		for _, path := range files[format] {
			t.Run(string(format)+"/"+filepath.Base(path), func(t *testing.T) {
				sim := simulate(t, format, path)
				for _, m := range sim.medallions {
					n, ev := storedEvidence(t, m)
					stored, evidence = stored+n, evidence+ev
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				load := render.Load(sim.medallions, render.Options{Budget: render.DefaultBudget})
				if load.Tokens > render.DefaultBudget {
					t.Errorf("load of %d tokens over the budget %d", load.Tokens, render.DefaultBudget)
				}
				var kinds []string
				for _, k := range []string{"invariants", "decisions", "avoid_repeating", "open_questions", "closed", "subsystems"} {
					kinds = append(kinds, fmt.Sprintf("%s=%d", k, sim.items[k]))
				}
				t.Logf("events %d, checkpoints %d, medallions %d, items %s; load %d tokens vs raw %d tokens",
					sim.events, sim.checkpoints, len(sim.medallions), strings.Join(kinds, " "), load.Tokens, render.Tokens(string(raw)))
				if os.Getenv("MEDALLION_CORPUS_SHOW") != "" {
					// To read what Tier 0 makes of a session as a user would.
					t.Logf("load:\n%s", load.Text)
				}
			})
		}
	}
}
