package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/store"
	"github.com/medallionhq/medallion/internal/transcript"
)

// benchWords make event texts that look like prose and code rather than
// one repeated byte.
var benchWords = strings.Fields(`the func return err nil if for range go build test ./internal/store
package main import fmt context ctx session episode checkpoint medallion watcher tailer offset
inode fingerprint badger transaction commit conflict retry error failed passed ok --- PASS FAIL
src/muse/cli/main.go README.md Makefile git diff status branch feature fix refactor rename`)

// benchText is about n bytes of words.
func benchText(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(benchWords[rng.IntN(len(benchWords))])
		if rng.IntN(12) == 0 {
			sb.WriteByte('\n')
		} else {
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}

// benchBatch is a Claude-Code-shaped batch of n events of one session:
// prompts, replies, tool calls and results with texts of about 1 KB.
func benchBatch(rng *rand.Rand, session string, n int) []transcript.Event {
	return benchBatchText(rng, session, n, 800)
}

// benchBatchText is benchBatch with texts of textLen to 1.5×textLen bytes.
func benchBatchText(rng *rand.Rand, session string, n, textLen int) []transcript.Event {
	kinds := []transcript.Kind{transcript.KindUserPrompt, transcript.KindAssistantMessage,
		transcript.KindToolCall, transcript.KindToolResult, transcript.KindToolResult, transcript.KindReasoning}
	ok := true
	evs := make([]transcript.Event, n)
	for i := range evs {
		e := transcript.Event{
			Kind:      kinds[i%len(kinds)],
			Time:      time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second),
			SessionID: session,
			Agent:     transcript.AgentClaudeCode,
			CWD:       "/home/dev/src/muse",
			GitBranch: "feature/ingest",
			MessageID: "msg_01XFDUDYJgAACzvnptvVoYEL",
			Text:      benchText(rng, textLen+rng.IntN(textLen/2)),
			Source: transcript.Source{
				File:   "9f2c4e1a7b3d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8",
				Path:   "/home/dev/.claude/projects/-home-dev-src-muse/" + session + ".jsonl",
				Offset: int64(i) * 1400,
			},
		}
		switch e.Kind {
		case transcript.KindToolCall:
			e.Tool, e.ToolCallID, e.Command = "Bash", fmt.Sprintf("toolu_%020d", i), "go test ./internal/store/..."
		case transcript.KindToolResult:
			e.Tool, e.ToolCallID, e.OK = "Bash", fmt.Sprintf("toolu_%020d", i-1), &ok
		}
		evs[i] = e
	}
	return evs
}

// BenchmarkIngest stores batches of 500 new ~1 KB events (as one file read
// hands them over); bytes are the events' JSON.
func BenchmarkIngest(b *testing.B) { benchIngest(b, 500, 800) }

// BenchmarkIngestShort stores batches of 4000 new events of ~100 bytes of
// text: a backfill's tool calls and short replies, where the per-event
// costs (the dedupe marker's lookup and write) weigh most.
func BenchmarkIngestShort(b *testing.B) { benchIngest(b, 4000, 80) }

func benchIngest(b *testing.B, perBatch, textLen int) {
	s, err := store.Open(b.TempDir(), store.Options{GCInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	session := "0b7e5f0e-3c1d-4b7a-9f1e-2a6d8c4e9b10"
	evs := benchBatchText(rng, session, perBatch, textLen)
	var size int64
	for i := range evs {
		evs[i].ID = fmt.Sprintf("cc:rec:%036d", i)
		js, err := json.Marshal(&evs[i])
		if err != nil {
			b.Fatal(err)
		}
		size += int64(len(js))
	}
	b.SetBytes(size)
	fs := store.FileState{Key: "2049:1234567", Path: evs[0].Source.Path, Dev: 2049, Ino: 1234567, Format: "claude-code", Watch: "claude"}

	n := 0
	for ; b.Loop(); n++ {
		// Fixed-width ids keep the measured bytes equal to size;
		// formatting them takes well under 1% of the time.
		for i := range evs {
			evs[i].ID = fmt.Sprintf("cc:rec:%018d%018d", n, i)
		}
		fs.Offset += size
		fs.Events += int64(perBatch)
		res, err := s.Ingest(ctx, store.IngestBatch{File: fs, Events: evs,
			Scopes: map[string][]string{session: {"repo:muse"}}})
		if err != nil {
			b.Fatal(err)
		}
		if res.Added != perBatch {
			b.Fatalf("added %d of %d", res.Added, perBatch)
		}
	}
	b.ReportMetric(float64(n*perBatch)/b.Elapsed().Seconds(), "events/s")
}
