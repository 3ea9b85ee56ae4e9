package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corpusDir finds the shared transcript corpus: next to the repository
// (CI clones it beside shared/), or at its place on a developer machine.
func corpusDir(t testing.TB) string {
	t.Helper()
	for _, dir := range []string{"../../../shared/corpus", "/work/shared/corpus"} {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
	}
	t.Skip("no transcript corpus at ../../../shared/corpus")
	return ""
}

func corpusFiles(t testing.TB) []string {
	t.Helper()
	dir := corpusDir(t)
	var files []string
	for _, format := range []string{"claude-code", "codex"} {
		m, err := filepath.Glob(filepath.Join(dir, format, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("transcript corpus has no claude-code or codex files")
	}
	return files
}

// TestCorpus runs every line of the real transcripts through the redactor
// and logs what it finds, per kind and with a sample in context, so that a
// person can judge the false positives (the corpus holds no real secret).
// It asserts what must hold whatever the counts: JSON stays valid, a
// second pass changes nothing.
func TestCorpus(t *testing.T) {
	files := corpusFiles(t)
	counts := map[string]int{}
	type sample struct{ kind, file, snippet string }
	var samples []sample
	seen := map[string]bool{}
	lines, bytesIn := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range bytes.Lines(data) {
			line = bytes.TrimRight(line, "\n")
			s := string(line)
			lines++
			bytesIn += len(s)
			spans := Default.find(s)
			if len(spans) == 0 {
				continue
			}
			out, _ := Default.Redact(s)
			if json.Valid(line) && !json.Valid([]byte(out)) {
				t.Errorf("%s: redaction broke the JSON of a line: %.300q", filepath.Base(f), out)
			}
			if again := String(out); again != out {
				t.Errorf("%s: second pass changed a line", filepath.Base(f))
			}
			for _, sp := range spans {
				counts[sp.kind]++
				secret := s[sp.start:sp.end]
				if seen[secret] {
					continue
				}
				seen[secret] = true
				a, b := max(0, sp.start-40), min(len(s), sp.end+20)
				samples = append(samples, sample{sp.kind, filepath.Base(f), s[a:sp.start] + "⟦" + abbreviate(secret) + "⟧" + s[sp.end:b]})
			}
		}
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var summary strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&summary, " %s=%d", k, counts[k])
	}
	t.Logf("%d files, %d lines, %d MB; redactions:%s", len(files), lines, bytesIn>>20, summary.String())
	// Take the sample round-robin over kinds, so that a rare kind is not
	// drowned by a common one.
	byKind := map[string][]sample{}
	for _, sm := range samples {
		byKind[sm.kind] = append(byKind[sm.kind], sm)
	}
	for shown, round := 0, 0; shown < 20 && shown < len(samples); round++ {
		for _, k := range kinds {
			if round < len(byKind[k]) && shown < 20 {
				sm := byKind[k][round]
				t.Logf("%s in %s: %q", sm.kind, sm.file, sm.snippet)
				shown++
			}
		}
	}
}

func abbreviate(s string) string {
	if len(s) <= 60 {
		return s
	}
	return s[:28] + "…" + s[len(s)-28:]
}
