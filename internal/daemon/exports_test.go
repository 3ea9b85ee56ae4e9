package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

func testMedallion(id string) *medallion.Medallion {
	return &medallion.Medallion{
		Meta:    medallion.Meta{MedallionID: id, SchemaVersion: medallion.SchemaVersion, Model: "user"},
		Scope:   medallion.Scope{GraphNodes: []string{"repo:x"}},
		Summary: medallion.Summary{HighLevel: "summary of " + id},
	}
}

// TestExporterKeepsTheNewest: each export is complete JSON Lines under a
// time-stamped name, 0600, and only the newest DefaultExportKeep stay.
func TestExporterKeepsTheNewest(t *testing.T) {
	dataDir := t.TempDir()
	st, err := store.Open(filepath.Join(dataDir, "store"), store.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Create(context.Background(), testMedallion("m1")); err != nil {
		t.Fatal(err)
	}
	e := newExporter(st, dataDir, hclog.NewNullLogger())
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return clock }
	for i := range DefaultExportKeep + 3 {
		if i > 0 { // a write between exports: none is skipped
			if _, err := st.Create(context.Background(), testMedallion(fmt.Sprintf("m%d", i+1))); err != nil {
				t.Fatal(err)
			}
		}
		if wrote, err := e.export(context.Background()); err != nil || !wrote {
			t.Fatalf("export %d: wrote %v, %v", i+1, wrote, err)
		}
		clock = clock.Add(time.Hour)
	}
	all := e.exports()
	if len(all) != DefaultExportKeep {
		t.Fatalf("%d exports kept, want %d: %v", len(all), DefaultExportKeep, all)
	}
	if got, want := filepath.Base(all[len(all)-1]), "medallions-20260301T210000Z.jsonl.zst"; got != want {
		t.Errorf("newest export %s, want %s", got, want)
	}
	fi, err := os.Stat(all[0])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("export mode %v, want 0600", fi.Mode().Perm())
	}
	if data := readExport(t, all[0]); strings.Count(data, "\n") != 4 || !strings.Contains(data, `"medallion_id":"m1"`) {
		t.Errorf("export: %s", data)
	}
	if newest, ok := e.newest(); !ok || !newest.Equal(clock.Add(-time.Hour)) {
		t.Errorf("newest %v, %v", newest, ok)
	}
	// Each export kept has its mark, and only those.
	marks, err := filepath.Glob(filepath.Join(dataDir, ExportsDir, "*"+markSuffix))
	if err != nil || len(marks) != DefaultExportKeep || marks[0] != all[0]+markSuffix {
		t.Errorf("marks %v, %v; exports %v", marks, err, all)
	}
}

// TestDaemonExportsByItself: a running daemon writes its first export
// soon after start.
func TestDaemonExportsByItself(t *testing.T) {
	// Due after the medallion is created: an export due while the
	// store is empty is skipped (TestExportSkippedWhileEmpty).
	exportSeams(t, time.Hour, 2*time.Second, 10*time.Millisecond)
	r, dir := startWithMedallion(t)
	waitFor(t, "an export", func() bool { return len(listExports(dir)) == 1 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestExporterStopsBeforeTheStore: on shutdown the exporter stops before
// the store closes, so an export due then neither fails on a closed store
// nor logs an error. The exporter here exports without pause, so one is
// due whenever the daemon stops.
func TestExporterStopsBeforeTheStore(t *testing.T) {
	exportSeams(t, time.Nanosecond, time.Nanosecond, 10*time.Millisecond)
	r, dir := startWithMedallion(t)
	waitFor(t, "an export", func() bool { return len(listExports(dir)) >= 1 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if log := r.log.String(); strings.Contains(log, "automatic export failed") {
		t.Errorf("an export ran against the closed store:\n%s", log)
	}
}

// exportSeams sets the exporter's interval, first delay and quiet for
// one test.
func exportSeams(t *testing.T, interval, delay, quiet time.Duration) {
	prevInterval, prevDelay, prevQuiet := exportInterval, exportDelay, exportQuiet
	exportInterval, exportDelay, exportQuiet = interval, delay, quiet
	t.Cleanup(func() { exportInterval, exportDelay, exportQuiet = prevInterval, prevDelay, prevQuiet })
}

// startWithMedallion starts a daemon, stores one medallion in it, and
// returns the daemon and its exports folder.
func startWithMedallion(t *testing.T) (*running, string) {
	t.Helper()
	cfg := testConfig(t)
	r := start(t, cfg)
	if _, err := client.New(cfg.Socket).Create(context.Background(), testMedallion("m1")); err != nil {
		t.Fatal(err)
	}
	return r, filepath.Join(cfg.DataDir, ExportsDir)
}

// TestExportWaitsForQuiet: an export due while the store is written to
// (a backfill) runs once the writes stop, not among them, so it holds
// everything they wrote.
func TestExportWaitsForQuiet(t *testing.T) {
	exportSeams(t, time.Hour, 10*time.Millisecond, time.Second)
	cfg := testConfig(t)
	r := start(t, cfg)
	c := client.New(cfg.Socket)
	dir := filepath.Join(cfg.DataDir, ExportsDir)
	const writes = 20
	for i := range writes {
		if _, err := c.Create(context.Background(), testMedallion(fmt.Sprintf("m%d", i))); err != nil {
			t.Fatal(err)
		}
		if n := len(listExports(dir)); n > 0 {
			t.Fatalf("an export ran after %d of %d writes, 100 ms apart", i+1, writes)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitFor(t, "an export once the writes stopped", func() bool { return len(listExports(dir)) == 1 })
	if n := strings.Count(readExport(t, listExports(dir)[0]), "\n"); n != writes {
		t.Errorf("the export holds %d versions, want all %d", n, writes)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestExportSkippedWhenUnchanged: an export whose store has had no
// medallion written since the newest export is not written again, also
// after a restart; a write, a new store (as repair makes), an export
// without its mark or not the size it was written all make the next
// export be written.
func TestExportSkippedWhenUnchanged(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	open := func(dir string) *store.Badger { return openQuiet(t, filepath.Join(dataDir, dir)) }
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	newAt := func(st *store.Badger) *exporter {
		e := newExporter(st, dataDir, hclog.NewNullLogger())
		e.now = func() time.Time { clock = clock.Add(time.Hour); return clock }
		return e
	}
	export := func(e *exporter, want bool, why string) {
		t.Helper()
		before := len(e.exports())
		wrote, err := e.export(ctx)
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		if wrote != want || len(e.exports()) != before+map[bool]int{true: 1}[want] {
			t.Fatalf("%s: wrote %v (%d exports, %d before), want %v", why, wrote, len(e.exports()), before, want)
		}
	}

	st := open("store")
	m, err := st.Create(ctx, testMedallion("m1"))
	// The writes to this store are made again to another one below.
	if err != nil {
		t.Fatal(err)
	}
	e := newAt(st)
	export(e, true, "the first export")
	export(e, false, "nothing written since")
	// Writes that are not medallions (sessions, counters) do not count.
	if err := st.PutAux(ctx, "test/other", []byte("x")); err != nil {
		t.Fatal(err)
	}
	export(e, false, "only another record written since")

	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open("store")
	e = newAt(st)
	export(e, false, "nothing written since, after a restart")

	m.Summary.HighLevel = "changed"
	if _, err := st.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	export(e, true, "an update since")
	export(e, false, "nothing written since the update's export")

	newest := e.exports()[len(e.exports())-1]
	if err := os.Remove(newest + markSuffix); err != nil {
		t.Fatal(err)
	}
	export(e, true, "the newest export has no mark (an older build wrote it)")
	newest = e.exports()[len(e.exports())-1]
	if err := os.Truncate(newest, 10); err != nil {
		t.Fatal(err)
	}
	export(e, true, "the newest export was cut short")

	// A new store written the same way (as repair writes one): its commit
	// timestamps begin again, so its state is the old one's, but its
	// versions are not (their times differ).
	want, err := st.ExportState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	other := open("store2")
	if m, err = other.Create(ctx, testMedallion("m1")); err != nil {
		t.Fatal(err)
	}
	if _, err := newAt(other).storeID(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.PutAux(ctx, "test/other", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	other = open("store2")
	t.Cleanup(func() { other.Close() })
	m.Summary.HighLevel = "changed"
	if _, err := other.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, err := other.ExportState(ctx); err != nil || got != want {
		t.Fatalf("the new store's state %+v, %v; the test needs the old one's, %+v", got, err, want)
	}
	e = newAt(other)
	export(e, true, "another store in the same state")
	export(e, false, "nothing written to the other store since")
}

// readExport is an export's JSON Lines, decompressed.
func readExport(t *testing.T, path string) string {
	t.Helper()
	r, err := openExport(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(data)
}

// TestPlainExportsOfOlderBuilds: the uncompressed exports an older build
// wrote are listed with the new ones, count as the newest when they are,
// are pruned in turn with their marks, and import as they are.
func TestPlainExportsOfOlderBuilds(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	st := openQuiet(t, filepath.Join(dataDir, "store"))
	for _, id := range []string{"m1", "m2"} {
		if _, err := st.Create(ctx, testMedallion(id)); err != nil {
			t.Fatal(err)
		}
	}
	var plain strings.Builder
	if _, err := st.ExportJSON(ctx, func(line []byte) error { plain.Write(line); return nil }); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataDir, ExportsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "medallions-20260301T120000Z.jsonl")
	if err := os.WriteFile(old, []byte(plain.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old+markSuffix, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newExporter(st, dataDir, hclog.NewNullLogger())
	if newest, ok := e.newest(); !ok || !newest.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("newest export %v, %v; want the plain one's time", newest, ok)
	}

	// It imports as it is.
	fresh := openQuiet(t, filepath.Join(dataDir, "fresh"))
	if n, err := importFile(ctx, fresh, old, func(string) {}); err != nil || n != 2 {
		t.Fatalf("imported %d medallions from the plain export (%v), want 2", n, err)
	}

	// Compressed exports follow it, and it is pruned in turn.
	e.keep = 2
	clock := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	e.now = func() time.Time { clock = clock.Add(time.Hour); return clock }
	for i := range 2 {
		if _, err := st.Create(ctx, testMedallion(fmt.Sprintf("n%d", i))); err != nil {
			t.Fatal(err)
		}
		if wrote, err := e.export(ctx); err != nil || !wrote {
			t.Fatalf("export %d: wrote %v, %v", i+1, wrote, err)
		}
	}
	all := e.exports()
	if len(all) != 2 || slices.Contains(all, old) {
		t.Fatalf("exports %v: want the two compressed ones", all)
	}
	if _, err := os.Stat(old + markSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the plain export's mark outlived it: %v", err)
	}
	if data := readExport(t, all[1]); strings.Count(data, "\n") != 4 {
		t.Errorf("newest export holds %d versions, want 4", strings.Count(data, "\n"))
	}
}

// TestExportSkippedWhileEmpty: a store that never held a medallion is not
// exported, and the skip writes nothing, in the exports folder or the
// store; the first medallion's export is written.
func TestExportSkippedWhileEmpty(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	st := openQuiet(t, filepath.Join(dataDir, "store"))
	e := newExporter(st, dataDir, hclog.NewNullLogger())
	if wrote, err := e.export(ctx); err != nil || wrote {
		t.Fatalf("export of an empty store: wrote %v, %v; want skipped", wrote, err)
	}
	if ents, err := os.ReadDir(e.dir); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("exports folder after the skip: %d entries, %v; want none", len(ents), err)
	}
	if v, err := st.GetAux(ctx, storeIDKey); err != nil || len(v) != 0 {
		t.Fatalf("store's export identity after the skip: %q, %v; want none written", v, err)
	}
	if _, err := st.Create(ctx, testMedallion("m1")); err != nil {
		t.Fatal(err)
	}
	if wrote, err := e.export(ctx); err != nil || !wrote || len(e.exports()) != 1 {
		t.Fatalf("export after the first medallion: wrote %v, %v, %d exports; want 1", wrote, err, len(e.exports()))
	}
}

// TestExportIdentityMadeAtStart: the store's export identity is made when
// the exporter starts, not by the first export: there, after a backfill
// done well before it, that one write made the store's idle check hand
// everything back once more after the export had (issue 12). The export
// then names that identity.
func TestExportIdentityMadeAtStart(t *testing.T) {
	exportSeams(t, time.Hour, time.Hour, time.Second)
	ctx := context.Background()
	dataDir := t.TempDir()
	st := openQuiet(t, filepath.Join(dataDir, "store"))
	e := newExporter(st, dataDir, hclog.NewNullLogger())
	e.start()
	var id []byte
	waitFor(t, "the store's export identity", func() bool {
		var err error
		id, err = st.GetAux(ctx, storeIDKey)
		return err == nil && len(id) > 0
	})
	e.close()
	if all := e.exports(); len(all) != 0 {
		t.Fatalf("exports %v an hour before the first was due", all)
	}
	if _, err := st.Create(ctx, testMedallion("m1")); err != nil {
		t.Fatal(err)
	}
	if wrote, err := e.export(ctx); err != nil || !wrote {
		t.Fatalf("export: wrote %v, %v", wrote, err)
	}
	data, err := os.ReadFile(e.exports()[0] + markSuffix)
	if err != nil {
		t.Fatal(err)
	}
	var mark exportMark
	if err := json.Unmarshal(data, &mark); err != nil {
		t.Fatal(err)
	}
	if mark.Store != string(id) {
		t.Errorf("the export names store %q, want the identity made at start, %q", mark.Store, id)
	}
}

// openQuiet opens a store at path for an exporter test, without a
// collector or a disk reserve, closed when the test ends (a store the
// test closed itself is not closed twice: Close is idempotent).
func openQuiet(t *testing.T, path string) *store.Badger {
	t.Helper()
	st, err := store.Open(path, store.Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
