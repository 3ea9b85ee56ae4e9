package tail

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// appendFile appends s to the file at path, creating it.
func appendFile(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// readAll calls Read until it reports no more, collecting the lines.
func readAll(t testing.TB, path string, prev *Position, opts Options) ([]string, Result) {
	t.Helper()
	var lines []string
	var total Result
	for {
		res, err := Read(path, prev, opts, func(l Line) error {
			lines = append(lines, string(l.Data))
			return nil
		})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		checkPosition(t, path, res.Pos)
		if total.Restart == "" {
			total.Restart = res.Restart
		}
		total.Pos, total.Lines, total.Bytes = res.Pos, total.Lines+res.Lines, total.Bytes+res.Bytes
		for k, v := range res.Skipped {
			if total.Skipped == nil {
				total.Skipped = map[string]int{}
			}
			total.Skipped[k] += v
		}
		prev = &res.Pos
		if !res.More {
			return lines, total
		}
	}
}

// checkPosition checks the invariants of a Position against the file.
func checkPosition(t testing.TB, path string, p Position) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Offset < 0 || p.Offset > p.Size || p.Size > int64(len(data)) {
		t.Fatalf("offset %d, size %d, file %d bytes", p.Offset, p.Size, len(data))
	}
	if p.Offset > 0 && data[p.Offset-1] != '\n' {
		t.Fatalf("offset %d is not just past a newline", p.Offset)
	}
	wantLen := min(len(data), FingerprintSize)
	if p.FingerprintLen != wantLen || p.Fingerprint != fingerprint(data[:wantLen]) {
		t.Fatalf("fingerprint over %d bytes, want %d", p.FingerprintLen, wantLen)
	}
}

func TestReadScenarios(t *testing.T) {
	type step struct {
		do      func(t *testing.T, path string)
		opts    Options
		want    []string
		restart string
		skipped map[string]int
	}
	app := func(s string) func(*testing.T, string) {
		return func(t *testing.T, path string) { appendFile(t, path, s) }
	}
	overwrite := func(s string) func(*testing.T, string) {
		// Same inode: write at offset 0 without truncating.
		return func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte(s), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	small := Options{MaxLine: 10}
	tests := []struct {
		name  string
		steps []step
	}{
		{"append in pieces", []step{
			{do: app("a\n"), want: []string{"a"}},
			{do: app("b\nc\n"), want: []string{"b", "c"}},
			{},
			{do: app("d\n"), want: []string{"d"}},
		}},
		{"half-written last line completed later", []step{
			{do: app(`{"x":1}` + "\n" + `{"y"`), want: []string{`{"x":1}`}},
			{},
			{do: app(`:2`)},
			{do: app("}\n"), want: []string{`{"y":2}`}},
		}},
		{"truncation", []step{
			{do: app("aaa\nbbb\n"), want: []string{"aaa", "bbb"}},
			{do: func(t *testing.T, path string) {
				if err := os.Truncate(path, 0); err != nil {
					t.Fatal(err)
				}
				appendFile(t, path, "c\n")
			}, want: []string{"c"}, restart: RestartTruncated},
			{do: app("d\n"), want: []string{"d"}},
		}},
		{"replacement by rename over the path", []step{
			{do: app("old1\nold2\n"), want: []string{"old1", "old2"}},
			{do: func(t *testing.T, path string) {
				tmp := path + ".tmp"
				appendFile(t, tmp, "new1\nnew2\nnew3\n")
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			}, want: []string{"new1", "new2", "new3"}, restart: RestartReplaced},
		}},
		{"rewrite in place with different first bytes", []step{
			{do: app("aaaa\n"), want: []string{"aaaa"}},
			{do: overwrite("bbbb\ncc\n"), want: []string{"bbbb", "cc"}, restart: RestartRewritten},
		}},
		{"rewrite detected in the extended fingerprint", []step{
			{do: app("head\n"), want: []string{"head"}},
			{do: app(strings.Repeat("x", 100) + "\n"), want: []string{strings.Repeat("x", 100)}},
			{do: overwrite("head\nyyy"), want: []string{"head", "yyy" + strings.Repeat("x", 97)}, restart: RestartRewritten},
		}},
		{"crlf", []step{
			{do: app("a\r\nb\r\n"), want: []string{"a", "b"}},
			{do: app("c\r"), want: nil},
			{do: app("\n"), want: []string{"c"}},
		}},
		{"blank lines skipped silently", []step{
			{do: app("\n\r\n  \t\na\n\n"), want: []string{"a"}},
		}},
		{"binary junk", []step{
			{do: app("a\n\x00\x01\x02junk\x00\nb\n"), want: []string{"a", "b"}, skipped: map[string]int{SkipBinary: 1}},
		}},
		{"line over the cap", []step{
			{do: app("short\n" + strings.Repeat("x", 20) + "\nnext\n"), opts: small,
				want: []string{"short", "next"}, skipped: map[string]int{SkipLineTooLong: 1}},
		}},
		{"line exactly at the cap", []step{
			{do: app(strings.Repeat("x", 10) + "\n"), opts: small, want: []string{strings.Repeat("x", 10)}},
		}},
		{"line over the cap written in two halves", []step{
			{do: app("a\n" + strings.Repeat("x", 15)), opts: small, want: []string{"a"}},
			{opts: small},
			{do: app(strings.Repeat("x", 5) + "\nnext\n"), opts: small,
				want: []string{"next"}, skipped: map[string]int{SkipLineTooLong: 1}},
			{do: app("last\n"), opts: small, want: []string{"last"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			var prev *Position
			for i, s := range tt.steps {
				if s.do != nil {
					s.do(t, path)
				}
				lines, res := readAll(t, path, prev, s.opts)
				if !slices.Equal(lines, s.want) {
					t.Errorf("step %d: lines %q, want %q", i, lines, s.want)
				}
				if res.Restart != s.restart {
					t.Errorf("step %d: restart %q, want %q", i, res.Restart, s.restart)
				}
				if !maps.Equal(res.Skipped, s.skipped) {
					t.Errorf("step %d: skipped %v, want %v", i, res.Skipped, s.skipped)
				}
				if res.Lines != len(s.want) {
					t.Errorf("step %d: Lines = %d, want %d", i, res.Lines, len(s.want))
				}
				prev = &res.Pos
			}
		})
	}
}

func TestReadLineOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	appendFile(t, path, "one\r\n\ntwo\nthree\n")
	var got []int64
	if _, err := Read(path, nil, Options{}, func(l Line) error {
		got = append(got, l.Offset)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 6, 10}; !slices.Equal(got, want) {
		t.Fatalf("offsets %v, want %v", got, want)
	}
}

// TestReadHugeLines uses the default cap: a line longer than the read
// buffer but under the cap is delivered whole; a 20 MiB line written in two
// halves is skipped exactly once and the next line is read.
func TestReadHugeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	big := strings.Repeat("b", 3<<20)
	appendFile(t, path, "a\n"+big+"\n")
	lines, res := readAll(t, path, nil, Options{MaxBatchBytes: 64 << 20})
	if len(lines) != 2 || lines[0] != "a" || lines[1] != big || res.Skipped != nil {
		t.Fatalf("got %d lines, skipped %v", len(lines), res.Skipped)
	}

	half := strings.Repeat("h", 10<<20)
	appendFile(t, path, half)
	prev := res.Pos
	lines, res = readAll(t, path, &prev, Options{})
	if len(lines) != 0 || res.Skipped != nil || res.Pos.Offset != prev.Offset {
		t.Fatalf("first half: %d lines, skipped %v, offset %d (was %d)", len(lines), res.Skipped, res.Pos.Offset, prev.Offset)
	}
	appendFile(t, path, half+"\nnext\n")
	lines, res = readAll(t, path, &res.Pos, Options{})
	if !slices.Equal(lines, []string{"next"}) || res.Skipped[SkipLineTooLong] != 1 {
		t.Fatalf("second half: lines %q, skipped %v", lines, res.Skipped)
	}
	lines, res = readAll(t, path, &res.Pos, Options{})
	if len(lines) != 0 || res.Skipped != nil || res.Bytes != 0 {
		t.Fatalf("again: lines %q, skipped %v, bytes %d", lines, res.Skipped, res.Bytes)
	}
}

func TestReadBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var want []string
	var b strings.Builder
	for i := range 200 {
		line := fmt.Sprintf(`{"i":%d,"pad":%q}`, i, strings.Repeat("p", i%37))
		want = append(want, line)
		b.WriteString(line + "\n")
	}
	b.WriteString(`{"partial"`)
	appendFile(t, path, b.String())

	opts := Options{MaxBatchBytes: 500}
	var got []string
	var prev *Position
	calls := 0
	for {
		calls++
		res, err := Read(path, prev, opts, func(l Line) error {
			got = append(got, string(l.Data))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Bytes > 500+64 {
			t.Fatalf("call %d consumed %d bytes, batch is 500", calls, res.Bytes)
		}
		if res.Bytes != res.Pos.Offset-offsetOf(prev) {
			t.Fatalf("Bytes %d, offset moved %d", res.Bytes, res.Pos.Offset-offsetOf(prev))
		}
		prev = &res.Pos
		if !res.More {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	if calls < 10 {
		t.Fatalf("%d calls: the batch limit did not stop Read", calls)
	}
	// Only the partial line is left: More was false and nothing remains.
	res, err := Read(path, prev, opts, func(Line) error { t.Fatal("line delivered twice"); return nil })
	if err != nil || res.Bytes != 0 || res.More {
		t.Fatalf("after the last batch: bytes %d, more %v, err %v", res.Bytes, res.More, err)
	}
}

func offsetOf(p *Position) int64 {
	if p == nil {
		return 0
	}
	return p.Offset
}

func TestReadCallbackError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	appendFile(t, path, "a\nbb\nccc\ndddd\n")
	stop := errors.New("stop")
	var got []string
	res, err := Read(path, nil, Options{}, func(l Line) error {
		if string(l.Data) == "ccc" {
			return stop
		}
		got = append(got, string(l.Data))
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the callback's", err)
	}
	if !slices.Equal(got, []string{"a", "bb"}) || res.Lines != 2 || res.Pos.Offset != 5 || res.Bytes != 5 {
		t.Fatalf("lines %q, Lines %d, offset %d, bytes %d", got, res.Lines, res.Pos.Offset, res.Bytes)
	}
	lines, _ := readAll(t, path, &res.Pos, Options{})
	if !slices.Equal(lines, []string{"ccc", "dddd"}) {
		t.Fatalf("resumed with %q", lines)
	}
}

func TestReadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if _, err := Read(path, nil, Options{}, func(Line) error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("never existed: err = %v", err)
	}
	appendFile(t, path, "a\n")
	_, res := readAll(t, path, nil, Options{})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path, &res.Pos, Options{}, func(Line) error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("deleted: err = %v", err)
	}
	if _, _, _, err := Identify(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Identify deleted: err = %v", err)
	}
}

func TestIdentifyFollowsRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	appendFile(t, path, "one\n")
	_, res := readAll(t, path, nil, Options{})
	dev, ino, size, err := Identify(path)
	if err != nil {
		t.Fatal(err)
	}
	if dev != res.Pos.Dev || ino != res.Pos.Ino || size != 4 || Key(dev, ino) != res.Pos.Key() {
		t.Fatalf("Identify = %d:%d size %d; Read saw %s", dev, ino, size, res.Pos.Key())
	}
	moved := filepath.Join(dir, "b.jsonl")
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	appendFile(t, moved, "two\n")
	lines, res2 := readAll(t, moved, &res.Pos, Options{})
	if !slices.Equal(lines, []string{"two"}) || res2.Restart != "" {
		t.Fatalf("after rename: lines %q, restart %q", lines, res2.Restart)
	}
}

// TestReadRandomSplits writes random lines in random chunks and reads after
// each chunk: every line must be delivered exactly once, in order, whatever
// the split points, batch sizes and line lengths.
func TestReadRandomSplits(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			const maxLine = 200
			var content []byte
			var want []string
			wantSkipped := 0
			for range 300 {
				n := 1 + rng.IntN(300)
				line := make([]byte, n)
				for i := range line {
					line[i] = 'a' + byte(rng.IntN(26))
				}
				if n > maxLine {
					wantSkipped++
				} else {
					want = append(want, string(line))
				}
				content = append(append(content, line...), '\n')
			}
			path := filepath.Join(t.TempDir(), "r.jsonl")
			opts := Options{MaxLine: maxLine, MaxBatchBytes: 1 + rng.IntN(2000)}
			var got []string
			skipped := 0
			var prev *Position
			for written := 0; written < len(content); {
				chunk := min(1+rng.IntN(700), len(content)-written)
				appendFile(t, path, string(content[written:written+chunk]))
				written += chunk
				lines, res := readAll(t, path, prev, opts)
				if res.Restart != "" {
					t.Fatalf("restart %q on a file only appended to", res.Restart)
				}
				got = append(got, lines...)
				skipped += res.Skipped[SkipLineTooLong]
				prev = &res.Pos
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d lines, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
			}
			if skipped != wantSkipped {
				t.Fatalf("skipped %d, want %d", skipped, wantSkipped)
			}
		})
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// FuzzRead checks that reading a file written in two pieces, with a read
// after each, delivers the same lines and skips as one read of the whole.
func FuzzRead(f *testing.F) {
	f.Add([]byte("a\nb\r\n\nc"), 3, 4)
	f.Add([]byte("xxxxxxxxxxxxxxx\nshort\n\x00bin\n"), 7, 10)
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\n"), 8, 1)
	f.Fuzz(func(t *testing.T, data []byte, split, maxLine int) {
		if split < 0 || split > len(data) || maxLine < 1 || maxLine > 64 {
			t.Skip()
		}
		opts := Options{MaxLine: maxLine, MaxBatchBytes: 16}
		dir := t.TempDir()
		whole := filepath.Join(dir, "whole")
		appendFile(t, whole, string(data))
		wantLines, wantRes := readAll(t, whole, nil, opts)

		pieces := filepath.Join(dir, "pieces")
		appendFile(t, pieces, string(data[:split]))
		lines, res := readAll(t, pieces, nil, opts)
		appendFile(t, pieces, string(data[split:]))
		more, res2 := readAll(t, pieces, &res.Pos, opts)
		lines = append(lines, more...)
		for k, v := range res2.Skipped {
			if res.Skipped == nil {
				res.Skipped = map[string]int{}
			}
			res.Skipped[k] += v
		}
		if !slices.Equal(lines, wantLines) || !maps.Equal(res.Skipped, wantRes.Skipped) {
			t.Fatalf("in pieces: %q skipped %v; whole: %q skipped %v", lines, res.Skipped, wantLines, wantRes.Skipped)
		}
		if res2.Pos.Offset != wantRes.Pos.Offset || res2.Restart != "" {
			t.Fatalf("offset %d (restart %q), whole %d", res2.Pos.Offset, res2.Restart, wantRes.Pos.Offset)
		}
		for _, l := range lines {
			if l == "" || strings.HasSuffix(l, "\r") || strings.Contains(l, "\n") || strings.IndexByte(l, 0) >= 0 || len(l) > maxLine {
				t.Fatalf("delivered %q", l)
			}
		}
	})
}

// BenchmarkRead reads a 100 MB file of ~2 KB JSON lines in default batches.
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	var buf bytes.Buffer
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 72)
	for i := 0; buf.Len() < 100<<20; i++ {
		fmt.Fprintf(&buf, `{"type":"assistant","uuid":"%08d-0000-4000-8000-000000000000","sessionId":"s","message":{"role":"assistant","content":[{"type":"text","text":%q}]}}`+"\n", i, pad)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	size := int64(buf.Len())
	buf = bytes.Buffer{}
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		var prev *Position
		lines := 0
		for {
			res, err := Read(path, prev, Options{}, func(Line) error { lines++; return nil })
			if err != nil {
				b.Fatal(err)
			}
			prev = &res.Pos
			if !res.More {
				break
			}
		}
		if prev.Offset != size {
			b.Fatalf("read %d of %d bytes", prev.Offset, size)
		}
	}
}
