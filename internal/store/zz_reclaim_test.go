package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/medallionhq/medallion/internal/transcript"
)

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func TestZZReclaim(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	dir := t.TempDir()
	ctx := context.Background()
	text := strings.Repeat("lorem ipsum dolor sit amet go test ./... ", 30) // ~1.2 KB
	var total int64
	b, err := Open(dir, Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for s := 0; s < 100; s++ {
		session := fmt.Sprintf("0b7e5f0e-3c1d-4b7a-9f1e-%012d", s)
		fs := FileState{Key: fmt.Sprintf("2049:%d", s), Path: "/x/" + session + ".jsonl", Dev: 2049, Ino: uint64(s), Format: "claude-code", Watch: "claude"}
		seq := uint64(0)
		for batch := 0; batch < 10; batch++ {
			evs := make([]transcript.Event, 100)
			for i := range evs {
				evs[i] = transcript.Event{ID: fmt.Sprintf("cc:%d:%d:%d", s, batch, i), Kind: transcript.KindAssistantMessage, Time: time.Now(), SessionID: session, Agent: transcript.AgentClaudeCode, CWD: "/x", Text: text + fmt.Sprint(i)}
				js, _ := json.Marshal(&evs[i])
				total += int64(len(js))
			}
			fs.Offset += 100000
			fs.Events += 100
			if _, err := b.Ingest(ctx, IngestBatch{File: fs, Events: evs, Scopes: map[string][]string{session: {"repo:x"}}}); err != nil {
				t.Fatal(err)
			}
			seq += 100
			if err := b.ClearEpisode(ctx, session, seq); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(2500 * time.Millisecond)
	t.Logf("ingested %d MB; dir %d MB; du %d MB", total>>20, dirSize(dir)>>20, b.DiskUsage()>>20)
	start := time.Now()
	b.mu.Lock()
	key := []byte("\x00zzflush")
	if err := b.db.Update(func(txn *badger.Txn) error { return txn.Set(key, nil) }); err != nil {
		t.Fatal(err)
	}
	if err := b.db.DropPrefix(key); err != nil {
		t.Fatal(err)
	}
	t.Logf("dropprefix %s; levels %+v", time.Since(start), b.db.Levels()[:2])
	if err := b.db.Flatten(1); err != nil {
		t.Fatal(err)
	}
	b.mu.Unlock()
	t.Logf("flatten %s", time.Since(start))
	b.collectGarbage()
	t.Logf("gc %s: dir %d MB du %d MB", time.Since(start), dirSize(dir)>>20, b.DiskUsage()>>20)
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		fi, _ := e.Info()
		t.Logf("%s %d", e.Name(), fi.Size()>>20)
	}
}
