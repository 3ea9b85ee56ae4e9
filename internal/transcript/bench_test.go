package transcript

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/cputime"
	"github.com/medallionhq/medallion/internal/ingest/fixture"
	"github.com/medallionhq/medallion/internal/shasum"
)

// The benchmarks hash as the daemon does, with crypto/sha256
// (internal/ingest hands it to internal/shasum); shasum's own tests hold
// its plain Go to the same digests.
func init() { shasum.Use(sha256.Sum256) }

// genClaudeCode builds about size bytes of Claude Code transcript lines
// shaped like the real 2.1.x files: by volume roughly half tool results
// (with the toolUseResult sidecar repeating the output), a sixth assistant
// blocks, a quarter progress records, plus prompts, snapshots and a few
// huge lines (a pasted screenshot, a long file read).
func genClaudeCode(size int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	const session = "258c7280-ae70-4798-800f-63464d01a85d"
	code := `func (s *Server) handle(w http.ResponseWriter, r *http.Request) {` + "\n\t" +
		`if err := json.NewDecoder(r.Body).Decode(&req); err != nil {` + "\n\t\t" +
		`http.Error(w, "bad request: \"" + err.Error() + "\"", 400) // café ✓` + "\n\t}\n}\n"
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(code)
		}
		return b.String()[:n]
	}
	envelope := func(typ string, n int) map[string]any {
		return map[string]any{
			"parentUuid": fmt.Sprintf("%08x-0000-4000-8000-%012x", n-1, n-1), "isSidechain": false,
			"userType": "external", "cwd": "/home/user/projects/spotter", "sessionId": session,
			"version": "2.1.39", "gitBranch": "main", "slug": "modular-petting-thompson", "type": typ,
			"uuid": fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n), "timestamp": "2026-02-11T20:31:53.375Z",
		}
	}
	var lines [][]byte
	total := 0
	add := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		lines = append(lines, b)
		total += len(b) + 1
	}
	for n := 1; total < size; n++ {
		tool := fmt.Sprintf("toolu_01%022d", n)
		switch k := rng.IntN(100); {
		case n%997 == 0: // a pasted screenshot
			r := envelope("user", n)
			r["message"] = map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "what is wrong on this page?"},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 34000)}},
			}}
			add(r)
		case n%1499 == 0: // a long file read
			out := text(400 << 10)
			r := envelope("user", n)
			r["message"] = map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": tool, "type": "tool_result", "content": out}}}
			r["toolUseResult"] = map[string]any{"type": "text", "file": map[string]any{"filePath": "/home/user/projects/spotter/lib/big.ex", "content": out, "numLines": 9000}}
			add(r)
		case k < 30: // assistant block
			r := envelope("assistant", n)
			var block map[string]any
			switch rng.IntN(3) {
			case 0:
				block = map[string]any{"type": "text", "text": text(200 + rng.IntN(800))}
			case 1:
				block = map[string]any{"type": "thinking", "thinking": text(300 + rng.IntN(1500)), "signature": strings.Repeat("EpkC", 100)}
			default:
				block = map[string]any{"type": "tool_use", "id": tool, "name": "Bash", "input": map[string]any{"command": "mix test test/spotter_test.exs", "description": "Run tests"}}
			}
			r["message"] = map[string]any{"model": "claude-opus-4-6", "id": fmt.Sprintf("msg_01%020d", n/3), "type": "message", "role": "assistant",
				"content": []any{block}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 3, "cache_read_input_tokens": 15289, "output_tokens": 12, "service_tier": "standard"}}
			r["requestId"] = "req_011CXL3BXxXpqshf6BAp1chN"
			add(r)
		case k < 55: // tool result with its sidecar
			out := text(500 + rng.IntN(12000))
			r := envelope("user", n)
			r["message"] = map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": tool, "type": "tool_result", "content": out, "is_error": rng.IntN(10) == 0}}}
			r["toolUseResult"] = map[string]any{"stdout": out, "stderr": "", "interrupted": false, "isImage": false}
			r["sourceToolAssistantUUID"] = fmt.Sprintf("%08x-0000-4000-8000-%012x", n-1, n-1)
			add(r)
		case k < 92: // progress
			r := envelope("progress", n)
			if rng.IntN(4) == 0 {
				r["data"] = map[string]any{"type": "bash_progress", "output": text(300), "fullOutput": text(900), "elapsedTimeSeconds": 3, "totalLines": 20}
			} else {
				r["data"] = map[string]any{"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Edit", "command": "/home/user/.claude/hooks/format.sh"}
			}
			r["parentToolUseID"], r["toolUseID"] = tool, tool
			add(r)
		case k < 96:
			r := envelope("user", n)
			r["message"] = map[string]any{"role": "user", "content": "the server still does not start, look at the logs again " + text(rng.IntN(400))}
			add(r)
		default:
			add(map[string]any{"type": "file-history-snapshot", "messageId": fmt.Sprintf("%08x", n), "snapshot": map[string]any{
				"messageId": fmt.Sprintf("%08x", n), "trackedFileBackups": map[string]any{"/home/user/projects/spotter/lib/a.ex": map[string]any{"backupFileName": "a@v1", "version": 1}},
				"timestamp": "2026-02-11T20:31:53.375Z"}, "isSnapshotUpdate": false})
		}
	}
	return lines
}

// BenchmarkClaudeCodeParse measures the Claude Code adapter alone over
// ~20 MB of realistic lines; the whole ingestion pipeline targets 40 MB/s.
func BenchmarkClaudeCodeParse(b *testing.B) {
	benchmarkParse(b, genClaudeCode(20<<20))
}

// benchmarkParse parses lines with a fresh Claude Code parser per round,
// reporting MB/s, the events made and the process's CPU time per round
// (GC included): on a shared machine the wall time moves with the load,
// the CPU time much less.
func benchmarkParse(b *testing.B, lines [][]byte) {
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	events := 0
	cpu, _ := cputime.Self()
	defer func() {
		end, _ := cputime.Self()
		b.ReportMetric(float64(end-cpu)/1e6/float64(b.N), "cpu-ms/op")
	}()
	for b.Loop() {
		p := NewClaudeCode(Options{})
		var offset int64
		for _, l := range lines {
			events += len(p.ParseLine(l, Position{File: "bench", Offset: offset}))
			offset += int64(len(l) + 1)
		}
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}

// fixtureLines returns about size bytes of the sessions the daemon's
// backfill benchmark writes (internal/e2e writeBackfill): numbered source
// lines of 0.5-20 KB in tool results, a \t and a \n escape on every line,
// and three results in a thousand of 500 KB.
func fixtureLines(size int) [][]byte {
	g := fixture.NewClaude("bf000000-0000-4000-8000-000000000000", "/home/dev/proj0", 1)
	g.Big, g.BigSize = 3, 500<<10
	var lines [][]byte
	for n := 0; n < size; {
		for _, l := range g.Turn() {
			lines = append(lines, l[:len(l)-1])
			n += len(l)
		}
	}
	return lines
}

// BenchmarkClaudeCodeFixture measures the Claude Code adapter over ~20 MB
// of those lines: most of their bytes are tool results, cut to
// Options.MaxText.
func BenchmarkClaudeCodeFixture(b *testing.B) {
	benchmarkParse(b, fixtureLines(20<<20))
}

// BenchmarkClaudeCodeState saves and restores the state of a parser at its
// bounds (maxCalls answered tool ids, a few pending calls and queued
// prompts): the most the ingest pipeline writes with one batch's offset,
// and reads back when it resumes a file.
func BenchmarkClaudeCodeState(b *testing.B) {
	p := NewClaudeCode(Options{})
	for i := range maxCalls {
		p.repeated(fmt.Sprintf("toolu_01%024d", i))
	}
	for i := range 8 {
		rememberCall(p.calls, fmt.Sprintf("toolu_02%024d", i), callInfo{tool: "Bash", command: "go test ./internal/stock -run TestReturn", paths: []string{"/home/dev/muse/internal/stock/stock.go"}})
		p.queued = append(p.queued, textKey(fmt.Sprintf("prompt %d", i)))
	}
	state, err := p.MarshalState()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		s, err := p.MarshalState()
		if err != nil {
			b.Fatal(err)
		}
		if err := NewClaudeCode(Options{}).UnmarshalState(s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(state)), "state-bytes")
}
