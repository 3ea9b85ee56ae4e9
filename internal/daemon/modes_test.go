package daemon

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/client"
)

// TestDataDirIsPrivate: every file and folder the daemon makes in the data
// dir (Badger's .vlog, .mem, DISCARD and LOCK included, which Badger
// creates 0644) is readable by its owner only, while it runs and after.
func TestDataDirIsPrivate(t *testing.T) {
	// The export, due once a medallion is stored (an export of a store
	// that never held one is skipped), writes its file and its mark.
	exportSeams(t, exportInterval, 2*time.Second, 10*time.Millisecond)
	cfg, path := watchConfig(t)
	r := start(t, cfg)
	appendLines(t, path, "s-1", 0, 3)
	c := client.New(cfg.Socket)
	if _, err := c.Create(context.Background(), testMedallion("m1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the events", func() bool { return buffered(c, "s-1") == 3 })
	// The export is done once its mark is beside it: the mark is written
	// after the export, through a temporary file renamed into place.
	waitFor(t, "an export and its mark", func() bool {
		marks, _ := filepath.Glob(filepath.Join(cfg.DataDir, ExportsDir, "*"+markSuffix))
		return len(listExports(filepath.Join(cfg.DataDir, ExportsDir))) > 0 && len(marks) > 0
	})
	checkPrivate(t, cfg.DataDir)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	checkPrivate(t, cfg.DataDir)
}

func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			// Gone since the walk listed its folder: a running daemon
			// renames its temporary files into place (Badger, the
			// exports). What stays is checked after the daemon stopped.
			return nil
		}
		if err != nil {
			return err
		}
		n++
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v", p, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 8 {
		t.Errorf("only %d entries under %s", n, dir)
	}
}
