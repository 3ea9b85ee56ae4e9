package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
)

// seededSecret is one entry of ../redact/testdata/seeded/secrets.json.
type seededSecret struct{ Kind, Before, Secret, After string }

func readSeeded(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "redact", "testdata", "seeded", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// needles are what must not be found of a secret: itself, JSON-escaped,
// and each line of a multi-line one (a PEM body).
func needles(secret string) []string {
	esc, _ := json.Marshal(secret)
	out := []string{secret, strings.Trim(string(esc), `"`)}
	for _, l := range strings.Split(secret, "\n") {
		if len(l) >= 16 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// TestSeededSecretsThroughTheDaemon is issue 11's check, with a corpus of
// our own: 61 secrets of 61 kinds in a Claude Code transcript, each in a
// prompt, a tool input and a tool output (JSON-escaped as transcripts
// are), with 37 look-alikes around them, ingested and checkpointed by the
// real daemon. No secret may be anywhere: in the raw files of the data
// dir, in any Badger value read back, in the API's answers (sessions,
// events, status, the save file load hands the next agent) or in the log.
// The look-alikes must reach the events as they were.
func TestSeededSecretsThroughTheDaemon(t *testing.T) {
	var secrets []seededSecret
	readSeeded(t, "secrets.json", &secrets)
	var looks []struct{ Kind, Text string }
	readSeeded(t, "lookalikes.json", &looks)

	cfg := testConfig(t)
	root := filepath.Join(t.TempDir(), "transcripts")
	repo := filepath.Join(t.TempDir(), "vault")
	for _, d := range []string{filepath.Join(root, "proj"), filepath.Join(repo, ".git")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Watches = []config.Watch{{Name: "cc", Path: root, Format: "claude-code", Include: config.DefaultInclude, Exclude: []string{}}}
	// One manual checkpoint, after every event has been read back.
	cfg.Checkpoint = config.Checkpoint{MinEvents: 1}

	var lines []string
	n := 0
	add := func(typ, role string, content any) {
		n++
		rec := map[string]any{"type": typ, "sessionId": "seeded", "uuid": fmt.Sprintf("u-%d", n), "cwd": repo,
			"timestamp": fmt.Sprintf("2026-03-02T09:%02d:%02dZ", n/60%60, n%60), "message": map[string]any{"role": role, "content": content}}
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	for i, s := range secrets {
		text := s.Before + s.Secret + s.After
		look := looks[i%len(looks)].Text
		add("user", "user", "please use this: "+text+" (and note "+look+")")
		id := fmt.Sprintf("t-%d", i)
		add("assistant", "assistant", []any{map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": "echo '" + text + "' > config.env"}}})
		add("user", "user", []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "wrote config.env:\n" + text + "\n" + look}})
	}
	for _, l := range looks {
		add("user", "user", "keep this as it is: "+l.Text)
	}
	path := filepath.Join(root, "proj", "seeded.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := start(t, cfg)
	c := client.New(cfg.Socket)
	ctx := context.Background()
	waitFor(t, "every event", func() bool {
		st, err := c.Status(ctx)
		return err == nil && st.Ingest != nil && st.Ingest.Lines == int64(len(lines))
	})
	// The API's answers: status, sessions, the buffered events, and after
	// a checkpoint the medallion and the save file.
	var answers bytes.Buffer
	record := func(v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.NewEncoder(&answers).Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	record(c.Status(ctx))
	record(c.Sessions(ctx))
	// Every buffered event, page by page.
	var all []episode.BufferedEvent
	for after := uint64(0); ; {
		page, err := c.Session(ctx, "seeded", after, 0)
		record(page, err)
		if len(page.Events) == 0 {
			break
		}
		all = append(all, page.Events...)
		after = page.Events[len(page.Events)-1].Seq
	}
	eventsJSON, _ := json.Marshal(all)
	if len(all) < len(lines) {
		t.Fatalf("%d events buffered for %d lines", len(all), len(lines))
	}
	cp, err := c.Checkpoint(ctx, api.CheckpointRequest{SessionID: "seeded"})
	record(cp, err)
	if len(cp.Checkpoints) != 1 || cp.Checkpoints[0].MedallionID == "" {
		t.Fatalf("the checkpoint stored no medallion: %+v", cp.Checkpoints)
	}
	record(c.Load(ctx, api.LoadRequest{CWD: repo, Budget: 100000}))
	record(c.List(ctx, medallion.Scope{GraphNodes: []string{"repo:vault"}}, 10))
	if err := c.Export(ctx, &answers); err != nil {
		t.Fatal(err)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	haystacks := map[string]string{"API answers": answers.String(), "log": r.log.String()}
	// Every value Badger holds, read back (values in tables are
	// compressed on disk, so the raw files alone would not show them).
	db, err := badger.Open(badger.DefaultOptions(filepath.Join(cfg.DataDir, "store")).WithReadOnly(true).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			dump.Write(it.Item().Key())
			if err := it.Item().Value(func(v []byte) error { dump.Write(v); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	haystacks["every Badger value"] = dump.String()
	if !strings.Contains(dump.String(), "keep this as it is") {
		t.Fatal("the dump holds no event text: the scan would prove nothing")
	}
	err = filepath.WalkDir(cfg.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		haystacks[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	leaks := 0
	for _, s := range secrets {
		for where, text := range haystacks {
			for _, nd := range needles(s.Secret) {
				if strings.Contains(text, nd) {
					t.Errorf("%s: found in %s", s.Kind, where)
					leaks++
					break
				}
			}
		}
	}
	// False positives: each look-alike must reach the events whole.
	var fps []string
	for _, l := range looks {
		esc, _ := json.Marshal(l.Text)
		if !strings.Contains(string(eventsJSON), strings.Trim(string(esc), `"`)) {
			fps = append(fps, l.Kind)
		}
	}
	t.Logf("%d secrets of %d kinds in %d placements: %d found anywhere; %d look-alikes, redacted by mistake: %v",
		len(secrets), len(secrets), 3*len(secrets), leaks, len(looks), fps)
	if len(fps) > 0 {
		t.Errorf("look-alikes redacted: %v", fps)
	}
}
