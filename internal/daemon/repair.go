package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/config"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// RepairReport is what Repair did.
type RepairReport struct {
	// Aside is where the old store went ("" when there was none).
	Aside string
	// Salvage is what could be read from it; SalvageErr why reading it
	// stopped or failed, when it did.
	Salvage    store.SalvageResult
	SalvageErr error
	// Salvaged counts the medallions stored from the old store, Partial
	// those of them stored without their newest versions (a later
	// version could not be read and no export had the medallion).
	Salvaged, Partial int
	// Export is the export imported ("" when there was none), FromExport
	// the medallions it added.
	Export     string
	FromExport int
}

// Repair builds a new store for cfg's data dir when the old one is
// damaged: it moves the store directory aside (never deleting it), reads
// every medallion version it can from it, adds the medallions of the newest
// automatic export that it could not read whole, and leaves the events to
// the daemon's next start, which re-ingests the transcripts still on disk
// into the empty event store. It refuses while a daemon holds the data dir.
func Repair(ctx context.Context, cfg *config.Config, logger hclog.Logger) (*RepairReport, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	defer privateFiles()()
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("repair: %w (stop it first: medalliond service stop)", err)
	}
	defer lock.release()

	rep := &RepairReport{}
	storeDir := filepath.Join(cfg.DataDir, "store")
	stamp := time.Now().UTC().Format(exportLayout)
	switch _, err := os.Stat(storeDir); {
	case err == nil:
		rep.Aside = storeDir + ".damaged-" + stamp
		if err := os.Rename(storeDir, rep.Aside); err != nil {
			return nil, fmt.Errorf("repair: move the store aside: %w", err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("repair: %w", err)
	}

	// Nothing runs in the new store yet: no collector, checks or polls.
	st, err := store.Open(storeDir, store.Options{Logger: logger.Named("store"), GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		return rep, fmt.Errorf("repair: new store: %w", err)
	}
	defer st.Close()

	// A medallion read whole goes in at once; one with a version missing
	// waits for the export, and failing that goes in up to the gap.
	gapped := map[string][]*medallion.Medallion{}
	salvaged := func(vs []*medallion.Medallion) error {
		id := vs[0].Meta.MedallionID
		if !whole(vs) {
			gapped[id] = vs
			return nil
		}
		switch err := st.Import(ctx, vs); {
		case err == nil:
			rep.Salvaged++
		case errors.Is(err, store.ErrDiskFull):
			return err
		default:
			// Read but not valid (damage that still decoded): the export
			// may have it.
			logger.Warn("repair: a salvaged medallion is not valid; looking for it in the export", "id", id, "error", err)
			gapped[id] = nil
		}
		return nil
	}
	if rep.Aside != "" {
		g := store.NewGroupVersions(salvaged)
		scratch := filepath.Join(cfg.DataDir, "repair-scratch-"+stamp)
		rep.Salvage, rep.SalvageErr = store.Salvage(rep.Aside, scratch, logger.Named("salvage"), g.Add)
		if err := g.Flush(); err != nil {
			return rep, fmt.Errorf("repair: %w", err)
		}
		if errors.Is(rep.SalvageErr, store.ErrDiskFull) {
			return rep, fmt.Errorf("repair: %w", rep.SalvageErr)
		}
	}

	if exports := listExports(filepath.Join(cfg.DataDir, ExportsDir)); len(exports) > 0 {
		rep.Export = exports[len(exports)-1]
		n, err := importFile(ctx, st, rep.Export, func(id string) { delete(gapped, id) })
		rep.FromExport = n
		if err != nil {
			return rep, fmt.Errorf("repair: import %s: %w", rep.Export, err)
		}
	}
	for _, vs := range gapped {
		prefix := vs[:0:0]
		for i, v := range vs {
			if v.Meta.Version != i+1 {
				break
			}
			prefix = append(prefix, v)
		}
		if len(prefix) == 0 {
			continue
		}
		if err := st.Import(ctx, prefix); err != nil {
			return rep, fmt.Errorf("repair: %w", err)
		}
		rep.Salvaged++
		rep.Partial++
	}
	return rep, nil
}

// whole reports whether vs runs 1..n without a gap.
func whole(vs []*medallion.Medallion) bool {
	for i, v := range vs {
		if v.Meta.Version != i+1 {
			return false
		}
	}
	return true
}

// importFile imports an export file into st, skipping ids already stored,
// and returns how many medallions it added; stored is called with each.
func importFile(ctx context.Context, st *store.Badger, path string, stored func(id string)) (int, error) {
	f, err := openExport(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	g := store.NewGroupVersions(func(vs []*medallion.Medallion) error {
		err := st.Import(ctx, vs)
		switch {
		case err == nil:
			n++
			stored(vs[0].Meta.MedallionID)
		case errors.Is(err, store.ErrExists):
		default:
			return err
		}
		return nil
	})
	dec := json.NewDecoder(f)
	for line := 1; ; line++ {
		var m medallion.Medallion
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return n, fmt.Errorf("line %d: %w", line, err)
		}
		if err := g.Add(&m); err != nil {
			return n, err
		}
	}
	return n, g.Flush()
}
