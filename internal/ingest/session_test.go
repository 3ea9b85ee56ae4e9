package ingest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/medallionhq/medallion/internal/ingest/fixture"
)

// TestCodexSessionSurvivesRestart: a Codex rollout whose name holds no
// UUID keeps the session its session_meta named when the daemon restarts
// mid-file (the new parser never sees that record): one session, not the
// file name's as a second one.
func TestCodexSessionSurvivesRestart(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "my-session.jsonl")
	gen := fixture.NewCodex("0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001", dir, 3)
	appendFile(t, path, gen.Meta())
	for range 2 {
		for _, l := range gen.Turn() {
			appendFile(t, path, l)
		}
	}
	opts := Options{Watches: []Watch{{Name: "w", Format: "codex"}}}
	p1, err := New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, p1)
	p1.Notify("w", path)
	waitFor(t, "the first turns", func() bool { return equalCounts(stored(t, st), parsed(t, "codex", path)) })
	stop()

	for range 2 {
		for _, l := range gen.Turn() {
			appendFile(t, path, l)
		}
	}
	p2, err := New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	run(t, p2)
	p2.Notify("w", path)
	want := parsed(t, "codex", path)
	waitFor(t, "the rest", func() bool { return len(stored(t, st)) == len(want) })
	sessions, err := st.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 1 || sessions[0].ID != gen.ID || sessions[0].Buffered != int64(len(want)) {
		t.Errorf("sessions after a restart mid-file: %+v", sessions)
	}
}
