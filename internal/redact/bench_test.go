package redact

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// benchEvents returns about size bytes of transcript-like texts, one per
// event as the daemon redacts them: Go code, logs, JSON tool results with
// escaped newlines, paths, commit ids, go.sum lines, a base64 image. With
// secrets, one event in ten carries one.
func benchEvents(size int, secrets bool) []string {
	r := rand.New(rand.NewPCG(1, 2))
	hex := func(n int) string { return fake(hexDigits, n, r.Uint64()) }
	uuid := func() string { return hex(8) + "-" + hex(4) + "-" + hex(4) + "-" + hex(4) + "-" + hex(12) }
	kinds := []func() string{
		func() string {
			return `func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	m, err := s.store.Get(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Errorf("medallion %s: %w", id, err))
		return
	}
	token := r.Header.Get("X-Request-Token")
	s.logger.Debug("get medallion", "id", id, "token_count", len(token), "version", m.Version)
	writeJSON(w, http.StatusOK, m)
}
`
		},
		func() string {
			var b strings.Builder
			for range 8 {
				fmt.Fprintf(&b, "2026-01-02T16:%02d:%02d.%03dZ [INFO] worker-%d: processed job=%s in %dms path=/home/dev/work/project/internal/store/badger.go:%d status=ok\n",
					r.IntN(60), r.IntN(60), r.IntN(1000), r.IntN(8), uuid(), r.IntN(900), r.IntN(400))
			}
			return b.String()
		},
		func() string {
			return fmt.Sprintf(`{"parentUuid":"%s","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/medallion","sessionId":"%s","version":"2.0.14","gitBranch":"main","message":{"id":"msg_01%s","type":"message","role":"assistant","model":"claude-opus-4-5-20251101","content":[{"type":"tool_use","id":"toolu_01%s","name":"Bash","input":{"command":"go test -race ./internal/store/... 2>&1 | tail -20","description":"Run store tests"}}],"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d}},"requestId":"req_011%s","type":"assistant","uuid":"%s","timestamp":"2026-01-02T16:39:45.349Z"}`,
				uuid(), uuid(), fake(alnum, 22, r.Uint64()), fake(alnum, 22, r.Uint64()), r.IntN(5000), r.IntN(5000), r.IntN(90000), r.IntN(2000), fake(alnum, 21, r.Uint64()), uuid())
		},
		func() string {
			return fmt.Sprintf(`{"type":"tool_result","tool_use_id":"toolu_01%s","content":"commit %s\nAuthor: Jane Doe <jane@example.com>\nDate:   Fri Jan 2 16:39:45 2026 +0100\n\n    store: keep one writer goroutine\n\ndiff --git a/internal/store/badger.go b/internal/store/badger.go\nindex %s..%s 100644\n--- a/internal/store/badger.go\n+++ b/internal/store/badger.go\n@@ -10,7 +10,7 @@ import (\n-\t\"github.com/dgraph-io/badger/v4\"\n+\tbadger \"github.com/dgraph-io/badger/v4\"\n","is_error":false}`,
				fake(alnum, 22, r.Uint64()), hex(40), hex(7), hex(7))
		},
		func() string {
			var b strings.Builder
			for range 6 {
				fmt.Fprintf(&b, "github.com/acme/mod%d v1.%d.%d h1:%s=\n", r.IntN(100), r.IntN(20), r.IntN(20), fake(b64, 43, r.Uint64()))
			}
			fmt.Fprintf(&b, "ok  \tgithub.com/medallionhq/medallion/internal/store\t%d.%03ds\n", r.IntN(9), r.IntN(1000))
			fmt.Fprintf(&b, "sha256:%s  dist/medalliond_linux_amd64.tar.gz\n", hex(64))
			return b.String()
		},
		func() string {
			return `## Plan

1. Read internal/store/store.go and the Store interface; the daemon owns the only Badger handle.
2. Add a DiskUsage method: LSM size plus value log size, as Badger reports them.
3. Run the tests with -race and fix the flaky cursor test (it waited with time.Sleep).

The token budget for this step is small, so keep the diff focused. See https://github.com/dgraph-io/badger/issues/1234 for the GC discussion.
`
		},
	}
	image := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` +
		base64.StdEncoding.EncodeToString([]byte(fake(alnum, 15000, 99))) + `"}}`
	secretList := []string{
		"export AWS_ACCESS_KEY_ID=AKIA" + fake(upperNum, 16, 3),
		`{"content":"OPENAI_API_KEY=sk-proj-` + fake(urlsafe, 80, 4) + `\nDEBUG=1"}`,
		"git remote add origin https://deploy:" + fake(alnum, 16, 5) + "@github.com/acme/app.git",
		`curl -H "Authorization: Bearer ` + fake(urlsafe, 40, 6) + `" https://api.example.com`,
		"DB_PASSWORD=" + fake(alnum, 20, 7),
	}
	var events []string
	total, n := 0, 0
	for total < size {
		var e string
		switch {
		case n%50 == 49:
			e = image
		default:
			e = kinds[r.IntN(len(kinds))]()
		}
		if secrets && n%10 == 3 {
			e = e + "\n" + secretList[n/10%len(secretList)] + "\n"
		}
		events = append(events, e)
		total += len(e)
		n++
	}
	return events
}

func benchRedact(b *testing.B, events []string) {
	total := 0
	for _, e := range events {
		total += len(e)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range events {
			_ = String(e)
		}
	}
}

// BenchmarkString measures redaction over 1 MB of transcript-like events,
// without secrets (the common case, which must not allocate) and with a
// secret in one event of ten.
func BenchmarkString(b *testing.B) {
	b.Run("clean", func(b *testing.B) { benchRedact(b, benchEvents(1<<20, false)) })
	b.Run("secrets", func(b *testing.B) { benchRedact(b, benchEvents(1<<20, true)) })
}

// BenchmarkCorpus measures redaction over the lines of the real
// transcripts, when the corpus is there.
func BenchmarkCorpus(b *testing.B) {
	var events []string
	for _, f := range corpusFiles(b) {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for line := range bytes.Lines(data) {
			events = append(events, string(line))
		}
	}
	benchRedact(b, events)
}

func TestBenchEventsAreClean(t *testing.T) {
	// The clean benchmark must measure the path without secrets.
	for _, e := range benchEvents(1<<20, false) {
		if _, n := Default.Redact(e); n != 0 {
			out, _ := Default.Redact(e)
			t.Fatalf("clean benchmark event has %d redactions: %.300q", n, out)
		}
	}
	n := 0
	for _, e := range benchEvents(1<<20, true) {
		_, k := Default.Redact(e)
		n += k
	}
	if n == 0 {
		t.Fatal("secrets benchmark has no secret")
	}
}

// BenchmarkPathological measures inputs built to make a careless scanner
// quadratic: prefixes of keys that never complete, BEGIN lines without
// END, separators after secret names with long values.
func BenchmarkPathological(b *testing.B) {
	inputs := map[string]string{
		"sk-words":    strings.Repeat("sk-abc-", 1<<17),
		"jwt-headers": strings.Repeat("-eyJhbGciOiJIUzI1NiJ9", 1<<15),
		"pem-begins":  strings.Repeat("-----BEGIN RSA PRIVATE KEY-----\"", 1<<15),
		"assignments": strings.Repeat("token=", 1<<17),
		"urls":        strings.Repeat("a://", 1<<18),
		"long-run":    fake(b64, 1<<20, 1),
	}
	for name, in := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				_ = String(in)
			}
		})
	}
}
