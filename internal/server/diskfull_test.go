package server

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/store"
)

// TestDiskFull: on a full disk a write is refused with 507 and the store's
// sentence, without an error line per request (the daemon logs the full
// disk once), reads keep working, and status carries what Config.Disk
// reports.
func TestDiskFull(t *testing.T) {
	var free atomic.Int64
	free.Store(1 << 30)
	opts := store.Options{GCInterval: -1, SpaceInterval: -1, Reserve: 64 << 20,
		FreeSpace: func(string) (int64, error) { return free.Load(), nil }}
	e := startStore(t, opts, func(c *Config, st *store.Badger) {
		c.Disk = func() *api.DiskStatus {
			sp := st.Space()
			return &api.DiskStatus{FreeBytes: sp.Free, ReserveBytes: sp.Reserve, Full: sp.Full, ReadOnly: sp.ReadOnly}
		}
	})
	e.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m1", "repo:muse"), nil)

	free.Store(10 << 20)
	res := e.do(t, "POST", "/v1/medallions", sample("m2", "repo:muse"), nil)
	checkError(t, res, http.StatusInsufficientStorage, api.CodeDiskFull, "disk full under ", "10 MiB free")
	e.want(t, http.StatusOK, "GET", "/v1/medallions/m1", nil, nil)
	var st api.Status
	e.want(t, http.StatusOK, "GET", "/v1/status", nil, &st)
	if st.Disk == nil || !st.Disk.Full || st.Disk.FreeBytes != 10<<20 || st.Disk.ReserveBytes != 64<<20 || st.Medallions != 1 {
		t.Errorf("status on a full disk: %+v, disk %+v", st, st.Disk)
	}
	if l := e.logs.String(); strings.Contains(l, "request failed") {
		t.Errorf("a refused write was logged as a failure:\n%s", l)
	}

	free.Store(1 << 30)
	e.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m2", "repo:muse"), nil)
}
