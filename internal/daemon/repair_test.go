package daemon

import (
	"context"
	"errors"
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

// bigMedallion is over Badger's 512-byte value threshold, so its versions
// live in the value log, as real medallions do.
func bigMedallion(id, text string) *medallion.Medallion {
	m := testMedallion(id)
	m.Summary.HighLevel = text + ": " + strings.Repeat("the parser streams MIDI events ", 30)
	return m
}

// TestRepair damages each kind of store file, shows that the daemon
// refuses to start, runs Repair, and checks what survives: every medallion
// (from the damaged store, or from the export for what it lost), and the
// transcript's events, re-ingested at the next start.
func TestRepair(t *testing.T) {
	// No export but the test's own.
	prevDelay := exportDelay
	exportDelay = time.Hour
	t.Cleanup(func() { exportDelay = prevDelay })

	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		// refused is what Run says; m1Version the least version of m1
		// that must survive (2 once the store is read, 1 from the export).
		refused   error
		m1Version int
	}{
		{"value log, middle", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "000001.vlog")
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			overwrite(t, path, fi.Size()/2, 4096)
		}, store.ErrDamaged, 1},
		{"MANIFEST missing", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "MANIFEST")); err != nil {
				t.Fatal(err)
			}
		}, store.ErrNoManifest, 2},
		{"table block", func(t *testing.T, dir string) {
			tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(tables) == 0 {
				t.Fatal("no table")
			}
			overwrite(t, tables[0], 16, 64)
		}, store.ErrDamaged, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, path := watchConfig(t)
			r := start(t, cfg)
			c := client.New(cfg.Socket)
			appendLines(t, path, "s-1", 0, 2)
			for _, id := range []string{"m1", "m2"} {
				if _, err := c.Create(ctx, bigMedallion(id, id+" version 1")); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, "the events", func() bool { return buffered(c, "s-1") == 2 })
			// An export of m1 and m2, as the daemon writes daily.
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
			exportNow(t, cfg.DataDir)
			r = start(t, cfg)
			// After the export: a second version of m1 and a new m3.
			m1, err := c.Get(ctx, "m1")
			if err != nil {
				t.Fatal(err)
			}
			m1.Summary.HighLevel = bigMedallion("m1", "m1 version 2").Summary.HighLevel
			if _, err := c.Put(ctx, m1); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create(ctx, bigMedallion("m3", "m3 version 1")); err != nil {
				t.Fatal(err)
			}
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}

			storeDir := filepath.Join(cfg.DataDir, "store")
			tt.damage(t, storeDir)
			if err := Run(ctx, cfg, nil); !errors.Is(err, tt.refused) {
				t.Fatalf("start on the damaged store: %v, want %v", err, tt.refused)
			}

			rep, err := Repair(ctx, cfg, nil)
			if err != nil {
				t.Fatalf("repair: %v", err)
			}
			t.Logf("%s: %+v", tt.name, rep)
			if _, err := os.Stat(rep.Aside); err != nil {
				t.Errorf("the damaged store was not kept: %v", err)
			}

			r = start(t, cfg)
			for _, id := range []string{"m1", "m2"} {
				m, err := c.Get(ctx, id)
				if err != nil {
					t.Fatalf("%s after repair: %v", id, err)
				}
				if id == "m1" && m.Meta.Version < tt.m1Version {
					t.Errorf("m1 came back at version %d, want at least %d", m.Meta.Version, tt.m1Version)
				}
			}
			if tt.m1Version == 2 {
				if _, err := c.Get(ctx, "m3"); err != nil {
					t.Errorf("m3, written after the export, is lost: %v", err)
				}
			}
			waitFor(t, "the transcript re-ingested", func() bool { return buffered(c, "s-1") == 2 })
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// exportNow writes an export of the stopped daemon's store.
func exportNow(t *testing.T, dataDir string) {
	t.Helper()
	st, err := store.Open(filepath.Join(dataDir, "store"), store.Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := newExporter(st, dataDir, hclog.NewNullLogger()).export(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// overwrite puts n bytes of 0xa5 at off in path, in place.
func overwrite(t *testing.T, path string, off int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("\xa5", n)), off); err != nil {
		t.Fatal(fmt.Errorf("damage %s: %w", path, err))
	}
}

// TestRepairRefusesWhileRunning: the data dir's lock keeps repair from
// moving a store a running daemon holds.
func TestRepairRefusesWhileRunning(t *testing.T) {
	cfg := testConfig(t)
	start(t, cfg)
	if _, err := Repair(context.Background(), cfg, nil); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("repair while running: %v", err)
	}
}
