package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/store"
)

// The daemon exports every medallion to the data dir on its own, so that a
// damaged store has a recent copy to come back from (medalliond repair
// imports the newest) even when nobody ran medallionctl export.
const (
	// ExportsDir is the folder under the data dir holding the exports.
	ExportsDir = "exports"
	// exportPrefix and exportSuffix frame an export's name around its UTC
	// time, which sorts like the time.
	exportPrefix = "medallions-"
	exportSuffix = ".jsonl"
	exportLayout = "20060102T150405Z"
	// DefaultExportInterval is how often the daemon exports.
	DefaultExportInterval = 24 * time.Hour
	// DefaultExportKeep is how many exports are kept, the newest.
	DefaultExportKeep = 7
)

// Test seams for the exporter: how often it exports, and how long after
// start the first one is due when the newest is older than the interval.
var (
	exportInterval = DefaultExportInterval
	exportDelay    = time.Minute
	// An export due while the store is written to (a first start's
	// backfill, checkpoints of a busy session) waits until it has not been
	// written for exportQuiet, for at most exportMaxWait: the export is
	// the way back for medallions, so it should hold the backfill whole,
	// and it should not take a core from it.
	exportQuiet   = 30 * time.Second
	exportMaxWait = time.Hour
)

// exporter writes DATA_DIR/exports/medallions-<time>.jsonl every interval
// and keeps the newest DefaultExportKeep.
type exporter struct {
	st       *store.Badger
	dir      string
	log      hclog.Logger
	interval time.Duration
	keep     int
	now      func() time.Time

	stop chan struct{}
	done chan struct{}
}

func newExporter(st *store.Badger, dataDir string, logger hclog.Logger) *exporter {
	return &exporter{
		st: st, dir: filepath.Join(dataDir, ExportsDir), log: logger,
		interval: exportInterval, keep: DefaultExportKeep, now: time.Now,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
}

// start runs the exporter until close. The first export is due one
// interval after the newest one on disk (soon after start when there is
// none or it is old), so restarts neither skip nor repeat exports. An
// export due while the store is written to waits for it to go quiet
// (exportQuiet, at most exportMaxWait).
func (e *exporter) start() {
	go func() {
		defer close(e.done)
		wait := exportDelay
		if newest, ok := e.newest(); ok {
			wait = max(newest.Add(e.interval).Sub(e.now()), exportDelay)
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		var due time.Time // when the export put off now was due
		for {
			select {
			case <-e.stop:
				return
			case <-t.C:
			}
			now := time.Now() // the clock LastWrite reads
			if due.IsZero() {
				due = now
			}
			if busy := now.Sub(e.st.LastWrite()); busy < exportQuiet && now.Sub(due) < exportMaxWait {
				t.Reset(exportQuiet - busy)
				continue
			}
			due = time.Time{}
			if err := e.export(context.Background()); err != nil {
				e.log.Error("automatic export failed; the next is tried at the next interval", "dir", e.dir, "error", err)
			}
			// An export reads every version: hand back the store's pages,
			// the heap it decoded them into and the code it ran now, not
			// up to a minute later at the store's next idle check (an
			// automatic export is most often the only work of an idle
			// daemon; issue 12's idle RSS).
			e.st.PageOut()
			releaseMemory()
			t.Reset(e.interval)
		}
	}()
}

// close stops the exporter, waiting for an export in progress.
func (e *exporter) close() {
	close(e.stop)
	<-e.done
}

// export writes one export (temporary file, then rename: a crash never
// leaves a partial export under an export's name) and prunes old ones. On
// a full disk it writes nothing: the space is the store's.
func (e *exporter) export(ctx context.Context) error {
	if sp := e.st.Space(); !sp.Writable() {
		e.log.Warn("automatic export skipped: disk full", "dir", e.dir, "free_mib", sp.Free>>20)
		return nil
	}
	if err := os.MkdirAll(e.dir, 0o700); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	name := exportPrefix + e.now().UTC().Format(exportLayout) + exportSuffix
	tmp, err := os.CreateTemp(e.dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	w := bufio.NewWriterSize(tmp, 64<<10)
	n := 0
	err = e.st.ExportJSON(ctx, func(line []byte) error {
		n++
		_, err := w.Write(line)
		return err
	})
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	path := filepath.Join(e.dir, name)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	e.log.Info("exported medallions", "path", path, "versions", n)
	e.prune()
	return nil
}

// exports lists the export files, oldest first.
func (e *exporter) exports() []string {
	return listExports(e.dir)
}

// listExports lists the export files in dir, oldest first.
func listExports(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, en := range entries {
		n := en.Name()
		if en.Type().IsRegular() && strings.HasPrefix(n, exportPrefix) && strings.HasSuffix(n, exportSuffix) {
			if _, err := time.Parse(exportLayout, strings.TrimSuffix(strings.TrimPrefix(n, exportPrefix), exportSuffix)); err == nil {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	slices.Sort(out)
	return out
}

// newest is the time of the newest export.
func (e *exporter) newest() (time.Time, bool) {
	all := e.exports()
	if len(all) == 0 {
		return time.Time{}, false
	}
	n := filepath.Base(all[len(all)-1])
	t, err := time.Parse(exportLayout, strings.TrimSuffix(strings.TrimPrefix(n, exportPrefix), exportSuffix))
	return t, err == nil
}

// prune removes all but the newest keep exports.
func (e *exporter) prune() {
	all := e.exports()
	for _, p := range all[:max(len(all)-e.keep, 0)] {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			e.log.Warn("remove old export", "path", p, "error", err)
		}
	}
}
