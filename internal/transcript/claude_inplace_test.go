package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// parseSkipFirst is ParseLine as it was before records were read in place
// (eachRecordRead): each record skipped whole by eachRecord, then read by
// the old decoders (claude_old_test.go).
func parseSkipFirst(p *ClaudeCode, line []byte, pos Position) []Event {
	var out []Event
	p.eachRecord(line, pos, func(raw []byte, index int) {
		if topLevelType(raw, progressPattern) {
			p.skip(pos, "noise:progress")
			return
		}
		var r ccRecord
		if err := oldDecodeRecord(&r, raw); err != nil {
			p.skip(pos, "invalid_json")
			return
		}
		out = p.record(out, &r, pos, index)
	})
	return p.counted(out)
}

// checkClaudeInPlace parses lines with ParseLine and with parseSkipFirst,
// a parser each, and fails on any difference: events, skips in their
// order, counts, saved state.
func checkClaudeInPlace(t testing.TB, lines [][]byte, opts Options) {
	var skipsNew, skipsOld []string
	optsNew, optsOld := opts, opts
	optsNew.OnSkip = func(_ Position, reason string) { skipsNew = append(skipsNew, reason) }
	optsOld.OnSkip = func(_ Position, reason string) { skipsOld = append(skipsOld, reason) }
	pNew, pOld := NewClaudeCode(optsNew), NewClaudeCode(optsOld)
	var offset int64
	for _, line := range lines {
		pos := Position{File: "f", Path: "/x/5e551011-2222-4333-8444-000000000014.jsonl", Offset: offset}
		a, b := pNew.ParseLine(line, pos), parseSkipFirst(pOld, line, pos)
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(skipsNew, skipsOld) {
			t.Fatalf("line %q:\nin place   %+v, skips %q\nskip first %+v, skips %q", line, a, skipsNew, b, skipsOld)
		}
		offset += int64(len(line) + 1)
	}
	if a, b := pNew.Stats(), pOld.Stats(); !reflect.DeepEqual(a, b) {
		t.Fatalf("stats: in place %+v, skip first %+v", a, b)
	}
	a, _ := pNew.MarshalState()
	b, _ := pOld.MarshalState()
	if !bytes.Equal(a, b) {
		t.Fatalf("state: in place %s, skip first %s", a, b)
	}
}

// inPlaceCases are lines where reading a record in place could part from
// skipping it first: glued records, progress records, values that break
// off inside (a bad literal, a missing comma) or run to the end.
var inPlaceCases = []string{
	`{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}{"type":"user","uuid":"u2","message":{"content":"again"}}`,
	`{"type":"progress","data":{}}{"type":"user","uuid":"u3","message":{"content":"after progress"}}`,
	`{"type":"progress"}{"type":"user","uuid":"u4","message":{"content":"x"}}`,
	`{"type":"user","uuid":"u5","message":{"content":"x"}} {"type":"progress"}`,
	`{"type":"progress" "x":1}`,
	`{"type":"progress","type":"user","uuid":"u0","message":{"content":"a progress record by its first type"}}`,
	`{"type":"progress","x":1} trailing`,
	`{"type":"user","uuid":"u6","message":{"content":"x"}} [1] 2 {"type":"user","uuid":"u7","message":{"content":"y"}}`,
	`{"type":"user","uuid":"u8","message":{"id":"m","id":tru,"content":"x"}}`,
	`{"type":"assistant","uuid":"u9","message":{"id":"m1","content":[{"type":"text","text":"a"},{"type":"text","text":"b" "x":1},tru,{"type":"thinking","thinking":"c"}],"id":tru}}`,
	`{"type":"user","uuid":"u10","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"out"},{"type":"image","source":{"data":"AAAA" "x":1}}]},{"type":"image","source":tru},{"type":"image","source":{"media_type":"image/png","data":"QUFB"}}]},"toolUseResult":{"stdout":"out","file":{"filePath":"/a" 1},"filePath":"/b"}}`,
	`{"type":"user","uuid":"u11","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"x"}]},"toolUseResult":"Error: no"}`,
	`{"type":"user","uuid":"u12","message":{"content":[{"type":"tool_result","tool_use_id":"t3","content":"x"}]},"toolUseResult":{"stdout":tru}}`,
	`{"type":"user","uuid":"u13","message":{"content":[{"type":"tool_result","content":"open`,
	`{"type":"user","uuid":"u14","message":{"content":[}]}`,
	`{"type":"user","uuid":"u15","message":{"content":[1}],"x":1}`,
	`{"type":"system","subtype":"local_command","uuid":"u16","content":"<local-command-stdout>x</local-command-stdout>"}`,
	`{"type":"queue-operation","operation":"enqueue","content":"later"}{"type":"user","uuid":"u17","message":{"content":"later"}}`,
	`{"type":"user","uuid":"u18","message":"plain"}`,
	`{"type":"user","uuid":"u19","message":{"content":"x"},"toolUseResult":[1]}`,
	`{"type":"user","uuid":"u20","message":{"content":"x"},`,
	`{"type":"user" , "uuid" : "u21" , "message" : { "content" : [ { "type" : "text" , "text" : "spaced" } ] } }`,
	`  `, `[]`, `"s"`, `{`, `}{`, `{}{}`, `{} x`,
}

// claudeTestLines is the Claude Code test transcript, line by line.
func claudeTestLines(t testing.TB) [][]byte {
	files, _ := filepath.Glob("testdata/transcripts/claude-code/*.jsonl")
	var lines [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, bytes.Split(data, []byte("\n"))...)
	}
	return lines
}

// TestClaudeInPlace holds ParseLine to parseSkipFirst over the test
// transcript (whole, each line cut short, each glued to the next), the
// generated sessions and inPlaceCases.
func TestClaudeInPlace(t *testing.T) {
	lines := claudeTestLines(t)
	var odd [][]byte
	for i, l := range lines {
		for _, cut := range []int{len(l) / 3, len(l) / 2, len(l) - 1} {
			if cut > 0 {
				odd = append(odd, l[:cut])
			}
		}
		if i+1 < len(lines) {
			odd = append(odd, append(append([]byte(nil), l...), lines[i+1]...))
		}
	}
	for _, c := range inPlaceCases {
		odd = append(odd, []byte(c))
	}
	opts := []Options{{}, {MaxText: 300, MaxMessageText: 600}}
	for _, o := range opts {
		checkClaudeInPlace(t, lines, o)
		checkClaudeInPlace(t, odd, o)
		checkClaudeInPlace(t, genClaudeCode(2<<20), o)
		checkClaudeInPlace(t, fixtureLines(2<<20), o)
	}
}

// FuzzClaudeInPlace is TestClaudeInPlace over any lines (split at '\n').
func FuzzClaudeInPlace(f *testing.F) {
	for _, c := range inPlaceCases {
		f.Add([]byte(c))
	}
	lines := claudeTestLines(f)
	for i := 0; i+2 < len(lines); i += 3 {
		f.Add(bytes.Join(lines[i:i+3], []byte("\n")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkClaudeInPlace(t, bytes.Split(data, []byte("\n")), Options{MaxText: 300, MaxMessageText: 600})
	})
}
