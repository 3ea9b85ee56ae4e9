package daemon

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/atomicfile"
	"github.com/medallionhq/medallion/internal/store"
)

// The daemon exports every medallion to the data dir on its own, so that a
// damaged store has a recent copy to come back from (medalliond repair
// imports the newest) even when nobody ran medallionctl export.
const (
	// ExportsDir is the folder under the data dir holding the exports.
	ExportsDir = "exports"
	// exportPrefix and exportSuffix frame an export's name around its UTC
	// time, which sorts like the time. Exports are JSON Lines compressed
	// with zstd; plainSuffix names the uncompressed ones older builds
	// wrote, which are still listed, imported and pruned.
	exportPrefix = "medallions-"
	exportSuffix = ".jsonl.zst"
	plainSuffix  = ".jsonl"
	exportLayout = "20060102T150405Z"
	// markSuffix names the mark beside an export (see exportMark).
	markSuffix = ".state"
	// storeIDKey is the aux record holding the store's export identity.
	storeIDKey = "exports/store"
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
// when a medallion was written since the newest, and keeps the newest
// DefaultExportKeep.
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
		// The store's export identity is made (once in a store's life)
		// now, among the work of the store's opening, whose pages the
		// store's first idle check hands back anyway. Made by the first
		// export, that one write woke the store's compaction, which counts
		// as calls, and the next idle check handed everything back once
		// more after the export had (14-40 ms of CPU on this VM, issue
		// 12). A failure is the export's to report: it tries again.
		_, _ = e.storeID(context.Background())
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
			wrote, err := e.export(context.Background())
			if err != nil {
				e.log.Error("automatic export failed; the next is tried at the next interval", "dir", e.dir, "error", err)
			}
			// An export reads every version: hand back the store's pages,
			// the heap it wrote them through and the code it ran now, not
			// up to a minute later at the store's next idle check (an
			// automatic export is most often the only work of an idle
			// daemon; issue 12's idle RSS), which then does not do it
			// again. A skipped one read keys only.
			if wrote {
				e.st.ReleaseIdle() // OnIdle: releaseMemory
			} else {
				e.st.PageOut()
			}
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
// leaves a partial export under an export's name), its mark, and prunes
// old ones; it reports whether it wrote one. It writes none when the
// newest export holds what this one would (see unchanged), nor on a full
// disk: the space is the store's.
func (e *exporter) export(ctx context.Context) (bool, error) {
	if sp := e.st.Space(); !sp.Writable() {
		e.log.Warn("automatic export skipped: disk full", "dir", e.dir, "free_mib", sp.Free>>20)
		return false, nil
	}
	all := e.exports()
	if empty, err := e.nothingYet(ctx, all); err != nil {
		return false, fmt.Errorf("export: %w", err)
	} else if empty {
		e.log.Debug("automatic export skipped: no medallion yet", "dir", e.dir)
		return false, nil
	}
	storeID, err := e.storeID(ctx)
	if err != nil {
		return false, fmt.Errorf("export: %w", err)
	}
	if newest, same, err := e.unchanged(ctx, storeID, all); err != nil {
		return false, fmt.Errorf("export: %w", err)
	} else if same {
		e.log.Info("automatic export skipped: no medallion was written since the newest export", "path", newest)
		return false, nil
	}
	if err := os.MkdirAll(e.dir, 0o700); err != nil {
		return false, fmt.Errorf("export: %w", err)
	}
	name := exportPrefix + e.now().UTC().Format(exportLayout) + exportSuffix
	tmp, err := os.CreateTemp(e.dir, "."+name+".*")
	if err != nil {
		return false, fmt.Errorf("export: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	zw, err := newExportWriter(tmp)
	if err != nil {
		tmp.Close()
		return false, fmt.Errorf("export: %w", err)
	}
	w := bufio.NewWriterSize(zw, 64<<10)
	n, jsonBytes := 0, int64(0)
	state, err := e.st.ExportJSON(ctx, func(line []byte) error {
		n++
		jsonBytes += int64(len(line))
		_, err := w.Write(line)
		return err
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = tmp.Sync()
	}
	var size int64 // what the mark checks the export against
	if err == nil {
		var fi os.FileInfo
		if fi, err = tmp.Stat(); err == nil {
			size = fi.Size()
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("export: %w", err)
	}
	path := filepath.Join(e.dir, name)
	// The mark of an export this one replaces (a second export within
	// the second) must not outlive it.
	if err := os.Remove(path + markSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("export: %w", err)
	}
	e.log.Info("exported medallions", "path", path, "versions", n, "json_mib", jsonBytes>>20, "file_kib", size>>10)
	if err := writeMark(path, exportMark{Store: storeID, State: state, Bytes: size}); err != nil {
		// The export is whole; without its mark the next one is
		// written even when nothing changed.
		e.log.Warn("write export mark", "path", path+markSuffix, "error", err)
	}
	e.prune()
	return true, nil
}

// nothingYet reports whether the store holds no medallion version and no
// export was ever written (all: the exports, as export listed them): a new
// daemon's first export, due a minute after its start, would write an
// empty file (and a mark, and the store's export identity) and then hand
// its memory back, 60-90 ms of CPU in the minute a daemon with nothing to
// do is measured over (issue 12; 0.10-0.15 % of that minute against 0.1).
// Once an export exists, the store's state against the newest one's mark
// decides (unchanged), empty or not.
func (e *exporter) nothingYet(ctx context.Context, all []string) (bool, error) {
	if len(all) > 0 {
		return false, nil
	}
	state, err := e.st.ExportState(ctx)
	if err != nil {
		return false, err
	}
	return state.Versions == 0, nil
}

// exportMark is written beside each export (its name and markSuffix):
// the store it was read from, the store's ExportState in the snapshot it
// was read from, and its size. An export is skipped when the store and
// its state are those of the newest export's mark and that export still
// has its size (issue 12: each export of an idle daemon wrote the same
// file again, the one idle minute above 0.1 % CPU).
type exportMark struct {
	// Store is the store's export identity, a random text kept in the
	// store (storeIDKey): a store made again (medalliond repair imports
	// into a new one) starts its commit timestamps again, so its state
	// alone could match the old store's.
	Store string            `json:"store"`
	State store.ExportState `json:"state"`
	Bytes int64             `json:"bytes"`
}

// storeID returns the store's export identity, made and kept in the store
// the first time it is asked for (when the exporter starts).
func (e *exporter) storeID(ctx context.Context) (string, error) {
	v, err := e.st.GetAux(ctx, storeIDKey)
	if err != nil || len(v) > 0 {
		return string(v), err
	}
	id := rand.Text()
	if err := e.st.PutAux(ctx, storeIDKey, []byte(id)); err != nil {
		return "", err
	}
	return id, nil
}

// unchanged reports whether the newest of all exports (returned; all as
// e.exports lists them) holds what an export of the store, storeID, would
// hold now: its mark names this store and its current state, and the
// export is the size it was written. Anything it cannot read makes it
// false: the export is then written.
func (e *exporter) unchanged(ctx context.Context, storeID string, all []string) (string, bool, error) {
	if len(all) == 0 {
		return "", false, nil
	}
	newest := all[len(all)-1]
	data, err := os.ReadFile(newest + markSuffix)
	if err != nil {
		return newest, false, nil
	}
	var mark exportMark
	if err := json.Unmarshal(data, &mark); err != nil || mark.Store != storeID {
		return newest, false, nil
	}
	if fi, err := os.Stat(newest); err != nil || fi.Size() != mark.Bytes {
		return newest, false, nil
	}
	state, err := e.st.ExportState(ctx)
	if err != nil {
		return newest, false, err
	}
	return newest, state == mark.State, nil
}

// writeMark writes an export's mark (atomicfile: a torn mark would only
// cost an export, but a whole one is as cheap).
func writeMark(export string, mark exportMark) error {
	data, err := json.Marshal(mark)
	if err != nil {
		return err
	}
	return atomicfile.Write(export+markSuffix, data)
}

// exports lists the export files, oldest first.
func (e *exporter) exports() []string {
	return listExports(e.dir)
}

// listExports lists the export files in dir, oldest first: the
// compressed ones and the plain ones older builds wrote.
func listExports(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, en := range entries {
		if _, ok := exportTime(en.Name()); ok && en.Type().IsRegular() {
			out = append(out, filepath.Join(dir, en.Name()))
		}
	}
	slices.Sort(out)
	return out
}

// exportTime is the time an export's file name gives, if name is one.
func exportTime(name string) (time.Time, bool) {
	stem, ok := strings.CutPrefix(name, exportPrefix)
	if !ok {
		return time.Time{}, false
	}
	if s, ok := strings.CutSuffix(stem, exportSuffix); ok {
		stem = s
	} else if s, ok := strings.CutSuffix(stem, plainSuffix); ok {
		stem = s
	} else {
		return time.Time{}, false
	}
	t, err := time.Parse(exportLayout, stem)
	return t, err == nil
}

// newest is the time of the newest export.
func (e *exporter) newest() (time.Time, bool) {
	all := e.exports()
	if len(all) == 0 {
		return time.Time{}, false
	}
	return exportTime(filepath.Base(all[len(all)-1]))
}

// prune removes all but the newest keep exports, with their marks, and
// the marks of exports removed by hand.
func (e *exporter) prune() {
	all := e.exports()
	for _, p := range all[:max(len(all)-e.keep, 0)] {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			e.log.Warn("remove old export", "path", p, "error", err)
		}
	}
	marks, _ := filepath.Glob(filepath.Join(e.dir, exportPrefix+"*"+markSuffix))
	for _, m := range marks {
		if _, err := os.Stat(strings.TrimSuffix(m, markSuffix)); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := os.Remove(m); err != nil && !errors.Is(err, os.ErrNotExist) {
			e.log.Warn("remove the mark of an old export", "path", m, "error", err)
		}
	}
}
