package transcript

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkLazy holds a lazyText made of the JSON strings raws, joined by
// newlines, to what the parser did before it: decode each whole
// (jsonString), join, bound (boundText). Both of bound's routes (the whole
// decode of a text not much longer than max, the cut of a longer one) are
// checked, and so is the start toolResult looks at.
func checkLazy(t *testing.T, raws [][]byte, max int) {
	t.Helper()
	lazy := func() *lazyText {
		var lazy lazyText
		for i, raw := range raws {
			if i > 0 {
				lazy.addString("\n")
			}
			lazy.addJSON(raw)
		}
		return &lazy
	}
	parts := make([]string, len(raws))
	for i, raw := range raws {
		parts[i] = jsonString(raw)
	}
	full := strings.Join(parts, "\n")
	if got := lazy().String(); got != full {
		t.Fatalf("String of %q = %q, want %q", raws, got, full)
	}
	want, wantBytes := boundText(full, max)
	for route, bound := range map[string]func(*lazyText) (string, int){
		"bound": func(l *lazyText) (string, int) { return l.bound(max) },
		"cut":   func(l *lazyText) (string, int) { return l.cut(max) },
	} {
		if got, gotBytes := bound(lazy()); got != want || gotBytes != wantBytes {
			t.Fatalf("%s(%d) of %.300q:\n got %d bytes of %d: %.300q\nwant %d bytes of %d: %.300q", route, max, raws, len(got), gotBytes, got, len(want), wantBytes, want)
		}
	}
	for _, max := range []int{max, 0} { // 0: never decoded whole
		head := resultHead(lazy(), max)
		if !strings.HasPrefix(full, head) || len(head) < min(len(full), resultHeadBytes) {
			t.Fatalf("resultHead %q is not the start of %.300q", head, full)
		}
		for _, p := range []string{"<tool_use_error>", "The user doesn't want to proceed with this tool use"} {
			if strings.HasPrefix(head, p) != strings.HasPrefix(full, p) {
				t.Fatalf("resultHead %q and the text %.300q differ on the prefix %q", head, full, p)
			}
		}
		headRest, headOK := strings.CutPrefix(head, "Exit code ")
		fullRest, fullOK := strings.CutPrefix(full, "Exit code ")
		hn, hok := parseExitCode(headRest)
		fn, fok := parseExitCode(fullRest)
		if headOK != fullOK || headOK && (hn != fn || hok != fok) {
			t.Fatalf("resultHead %q reads exit code %d %v, the text %.300q %d %v", head, hn, hok, full, fn, fok)
		}
	}
}

// quoted writes s as JSON, \t and \n escaped as Claude Code writes them.
func quoted(s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestLazyBound holds the lazy bound to the whole decode over texts shaped
// like tool results, and over the escapes and bytes that need care: \u
// escapes of one to four bytes, surrogate pairs and lone halves, \u without
// hex digits, invalid UTF-8, an escaped byte from 0x80, base64 runs, and
// bounds that cut in the middle of each.
func TestLazyBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	atoms := []string{
		"plain words ", `\n`, `\t`, `\"`, `\\`, `\/`, "é", "→", "😀", `\u00e9`, `\u2192`, `\ud83d\ude00`,
		`\ud83d`, `\ude00x`, `\ud83d\u0041`, `\u12`, `\uzzzz`, `\x`, "\xff", "\xe2\x82", "\\\xc3\xa9", "\\\xff", "\\\xe2", "\x00", "\xe0\x80\x80", "\xe0\xa0\x80", "\xed\xa0\x80", "\xed\x9f\xbf", "\xc0\xaf", "\xc2\x80", "\xf4\x90\x80\x80", "\xf0\x9f\x98", "\xef\xbf\xbd",
		strings.Repeat("QUJD", 200), "Exit code ", "00000000000000000000000000000001", "-", "<tool_use_error>",
		"The user doesn't want to proceed with this tool use", "deadbeef", "u", `\u0000`,
	}
	for n := range 3000 {
		var raws [][]byte
		for range 1 + rng.IntN(3) {
			var b strings.Builder
			b.WriteByte('"')
			for range rng.IntN(200) {
				b.WriteString(atoms[rng.IntN(len(atoms))])
			}
			b.WriteByte('"')
			raws = append(raws, []byte(b.String()))
		}
		max := 48 + rng.IntN(3000)
		if n%3 == 0 {
			max = minText + rng.IntN(64)
		}
		checkLazy(t, raws, max)
	}
	// Numbered source lines, as the backfill's results hold, at every
	// length around the bounds.
	src := numberedLines(20000)
	for _, n := range []int{0, 1, 255, 256, 257, 4095, 4096, 4097, 4200, 10000, 20000} {
		text := src[:n]
		for _, max := range []int{minText, DefaultMaxText, DefaultMaxMessageText} {
			checkLazy(t, [][]byte{quoted(text)}, max)
			checkLazy(t, [][]byte{quoted(text[:n/2]), quoted(text[n/2:]), []byte("null")}, max)
		}
	}
}

// numberedLines is about n bytes of a file read as Claude Code shows it:
// numbered lines, a tab after the number, quotes and a non-ASCII letter.
func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%6d→\tfunc (s *Server) handle(w \"x\") { return café } // %d\n", i, i*i)
	}
	return b.String()[:n]
}

// BenchmarkBoundResult bounds tool results as the parser did (decode, then
// cut: "whole") and does (lazyText): numbered lines as in the backfill's
// sessions, and Go code as genClaudeCode writes it (json.Marshal's \u0026
// for &, \\\" for an escaped quote: an escape every ten bytes).
func BenchmarkBoundResult(b *testing.B) {
	code := strings.Repeat(`func (s *Server) handle(w http.ResponseWriter, r *http.Request) {`+"\n\t"+
		`if err := json.NewDecoder(r.Body).Decode(&req); err != nil {`+"\n\t\t"+
		`http.Error(w, "bad request: \"" + err.Error() + "\"", 400) // café ✓`+"\n\t}\n}\n", 400)
	for _, text := range []struct {
		name string
		text string
	}{{"lines", numberedLines(64 << 10)}, {"code", code}} {
		for _, size := range []int{6 << 10, 16 << 10, 64 << 10} {
			raw := quoted(text.text[:size])
			b.Run(fmt.Sprintf("%s/%dK/whole", text.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					boundText(jsonString(raw), DefaultMaxText)
				}
			})
			b.Run(fmt.Sprintf("%s/%dK/lazy", text.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					var t lazyText
					t.addJSON(raw)
					t.cut(DefaultMaxText)
				}
			})
		}
	}
}

// TestEscapeBoundary: decoding from any boundary escapeBoundary returns
// gives the end of the whole decode, over bodies dense with escapes.
func TestEscapeBoundary(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	atoms := []string{`\n`, `\\`, `\"`, `\u0041`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ud83d\u0041`, `\u12`, "u", "a", "0", " ", "é", `\`}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(atoms[rng.IntN(len(atoms))])
		}
		s := []byte(b.String())
		if _, fast := measureJSONString(s); !fast {
			continue
		}
		whole := string(appendUnescaped(nil, s, len(s)*4))
		for i := 0; i <= len(s); i++ {
			j := escapeBoundary(s, i)
			if j > i {
				t.Fatalf("escapeBoundary(%q, %d) = %d", s, i, j)
			}
			if tail := string(appendUnescaped(nil, s[j:], len(s)*4)); !strings.HasSuffix(whole, tail) {
				t.Fatalf("%q decoded from %d (boundary before %d) is %q, not the end of %q", s, j, i, tail, whole)
			}
		}
	}
}

// FuzzLazyBound holds the lazy bound to boundText(jsonString(raw), max)
// for arbitrary string bodies, cut into up to three JSON strings.
func FuzzLazyBound(f *testing.F) {
	f.Add([]byte(`line one\n\tline two \u00e9\ud83d\ude00 \ud83d tail`), uint16(60), uint16(5), uint16(40))
	f.Add([]byte("Exit code 000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001\n"), uint16(0), uint16(0), uint16(0))
	f.Add([]byte("bad \xff\xfe bytes \\\xc3\xa9 and \\u12 \\"), uint16(10), uint16(3), uint16(9))
	f.Add([]byte(strings.Repeat(`QUJDRA==\u0041`, 120)), uint16(300), uint16(700), uint16(1300))
	f.Fuzz(func(t *testing.T, body []byte, m, cut1, cut2 uint16) {
		max := 48 + int(m)%4096
		a, b := int(cut1)%(len(body)+1), int(cut2)%(len(body)+1)
		if a > b {
			a, b = b, a
		}
		var raws [][]byte
		for _, part := range [][]byte{body[:a], body[a:b], body[b:]} {
			raws = append(raws, append(append([]byte{'"'}, part...), '"'))
		}
		checkLazy(t, raws[:1+int(m)%3], max)
		checkLazy(t, [][]byte{append(append([]byte{'"'}, body...), '"')}, max)
	})
}
