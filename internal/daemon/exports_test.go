package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	for range DefaultExportKeep + 3 {
		if err := e.export(context.Background()); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Hour)
	}
	all := e.exports()
	if len(all) != DefaultExportKeep {
		t.Fatalf("%d exports kept, want %d: %v", len(all), DefaultExportKeep, all)
	}
	if got, want := filepath.Base(all[len(all)-1]), "medallions-20260301T210000Z.jsonl"; got != want {
		t.Errorf("newest export %s, want %s", got, want)
	}
	fi, err := os.Stat(all[0])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("export mode %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(all[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), "\n") != 1 || !strings.Contains(string(data), `"medallion_id":"m1"`) {
		t.Errorf("export: %s", data)
	}
	if newest, ok := e.newest(); !ok || !newest.Equal(clock.Add(-time.Hour)) {
		t.Errorf("newest %v, %v", newest, ok)
	}
}

// TestDaemonExportsByItself: a running daemon writes its first export
// soon after start.
func TestDaemonExportsByItself(t *testing.T) {
	exportSeams(t, time.Hour, 10*time.Millisecond, 10*time.Millisecond)
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
	b, err := os.ReadFile(listExports(dir)[0])
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != writes {
		t.Errorf("the export holds %d versions, want all %d", n, writes)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
