package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/transcript"
)

// rewriteChunksAsJSON turns every chunk of session sid into the format
// older builds wrote (chunkFormatJSON: each event as JSON),
// as an upgrade finds a session buffered by the build before.
func rewriteChunksAsJSON(t *testing.T, s *Badger, sid string) int {
	t.Helper()
	n := 0
	err := s.db.Update(func(txn *badger.Txn) error {
		prefix := chunkPrefix(sid)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		rewritten := map[string][]byte{}
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if v[0] != chunkFormat {
				t.Fatalf("chunk written in format %d, want %d", v[0], chunkFormat)
			}
			last, err := chunkLastSeq(it.Item().Key(), prefix)
			if err != nil {
				return err
			}
			out := append([]byte{chunkFormatJSON}, v[1:chunkHeader]...)
			err = decodeChunk(v, last, func(_ uint64, decode func(*transcript.Event) error) (bool, error) {
				var e transcript.Event
				if err := decode(&e); err != nil {
					return false, err
				}
				// What older builds wrote: encoding/json's bytes, HTML
				// left unescaped, without Encode's newline.
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(&e); err != nil {
					return false, err
				}
				js := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
				out = append(binary.AppendUvarint(out, uint64(len(js))), js...)
				return true, nil
			})
			if err != nil {
				return err
			}
			rewritten[string(it.Item().KeyCopy(nil))] = out
		}
		for k, v := range rewritten {
			if err := txn.Set([]byte(k), v); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEpisodeReadsOlderChunks: a session buffered by an older build (its
// events stored as JSON) and then by this one reads back whole, in order,
// each event as it was ingested, and clears as any other.
func TestEpisodeReadsOlderChunks(t *testing.T) {
	clk := newClock()
	s := openIngest(t, t.TempDir(), clk.now)
	const sid = "upgraded"
	ok, code := false, 2
	older := events(sid, "old", 40)
	older[3].OK, older[3].ExitCode, older[3].Kind = &ok, &code, transcript.KindToolResult
	older[5].FilePaths, older[5].Command = []string{"/a/b.go", "/c d/é.go"}, "go test ./... 2>&1 | tail -n 20\n\t\"quoted\""
	older[7].Todos = []transcript.Todo{{Content: "Fix the count", Status: "in_progress", ActiveForm: "Fixing"}}
	older[9].Text, older[9].TextBytes = strings.Repeat("line\twith\ttabs\n", 400), 99999
	mustIngest(t, s, IngestBatch{File: file("1:1", 100), Events: older})
	if n := rewriteChunksAsJSON(t, s, sid); n == 0 {
		t.Fatal("no chunk to rewrite")
	}
	newer := events(sid, "new", 30)
	mustIngest(t, s, IngestBatch{File: file("1:1", 200), Events: newer})

	got := mustEpisode(t, s, sid, 0, 0)
	want := append(append([]transcript.Event{}, older...), newer...)
	if len(got) != len(want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	for i, be := range got {
		if be.Seq != uint64(i+1) || !reflect.DeepEqual(be.Event, want[i]) {
			t.Fatalf("event %d (seq %d):\n got %+v\nwant %+v", i, be.Seq, be.Event, want[i])
		}
	}
	// Paging starts inside an older chunk as inside a new one.
	if page := mustEpisode(t, s, sid, 35, 10); len(page) != 10 || page[0].Event.ID != "old-35" || page[9].Event.ID != "new-4" {
		t.Fatalf("page after 35: %v", ids(page))
	}
	if err := s.ClearEpisode(t.Context(), sid, 50); err != nil {
		t.Fatal(err)
	}
	if rest := mustEpisode(t, s, sid, 0, 0); len(rest) != 20 || rest[0].Event.ID != "new-10" {
		t.Fatalf("after clearing to 50: %v", ids(rest))
	}
}

// TestChunkDamaged: a chunk of an unknown format, or holding an event its
// format cannot decode, fails the episode's read with an error naming it.
func TestChunkDamaged(t *testing.T) {
	s := openIngest(t, t.TempDir(), newClock().now)
	const sid = "damaged"
	mustIngest(t, s, IngestBatch{File: file("1:1", 100), Events: events(sid, "e", 3)})
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"format", func(v []byte) []byte { v[0] = 9; return v }, "bad chunk 3: header 09"},
		{"event", func(v []byte) []byte {
			_, k := binary.Uvarint(v[chunkHeader:])
			v[chunkHeader+k] = 0xff // the first event's flags
			return v
		}, "decode event 1: bad binary event: flags"},
		{"json event", func(v []byte) []byte { v[0] = chunkFormatJSON; return v }, "decode event 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := chunkKey(sid, 3)
			var orig []byte
			err := s.db.Update(func(txn *badger.Txn) error {
				item, err := txn.Get(key)
				if err != nil {
					return err
				}
				if orig, err = item.ValueCopy(nil); err != nil {
					return err
				}
				return txn.Set(key, tc.edit(bytes.Clone(orig)))
			})
			if err != nil {
				t.Fatal(err)
			}
			defer s.db.Update(func(txn *badger.Txn) error { return txn.Set(key, orig) })
			_, err = s.Episode(t.Context(), sid, 0, 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "episode "+sid) {
				t.Fatalf("episode of a damaged chunk: %v; want an error with %q", err, tc.want)
			}
		})
	}
	if got := mustEpisode(t, s, sid, 0, 0); len(got) != 3 {
		t.Fatalf("after restoring the chunk: %v", ids(got))
	}
}
