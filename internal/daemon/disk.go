package daemon

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/store"
)

// Test seams: how the store measures the free space under the data dir,
// how often it does so between writes, and how often it reads itself back
// (zero: the store's defaults).
var (
	freeSpace      = store.FreeSpace
	spaceInterval  time.Duration
	verifyInterval time.Duration
)

// disk turns the store's free-space reports into the daemon's: one log
// line when writing stops (the store refuses writes and ingestion pauses)
// and one when it resumes, and the disk part of the status.
type disk struct {
	dir string // the data dir, as the user configured it
	log hclog.Logger

	mu       sync.Mutex
	stopped  bool // writing stopped, as last logged
	space    func() store.Space
	reported store.Space
}

func newDisk(dataDir string, logger hclog.Logger) *disk {
	return &disk{dir: dataDir, log: logger}
}

// onSpace is the store's Options.OnSpace. The store calls it at Open too,
// so a daemon started on a full disk says so before it serves.
func (d *disk) onSpace(s store.Space) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reported = s
	switch {
	case !s.Writable() && !d.stopped:
		d.stopped = true
		// The sentence is the message so that it reads the same in the
		// journal, in a text log and in status.
		d.log.Error(d.sentence(s), "free_bytes", s.Free, "reserve_bytes", s.Reserve, "read_only", s.ReadOnly)
	case s.Writable() && d.stopped:
		d.stopped = false
		d.log.Info(fmt.Sprintf("disk space is back under %s: %d MiB free; ingestion resumed", d.dir, s.Free>>20),
			"free_bytes", s.Free, "reserve_bytes", s.Reserve)
	}
}

// sentence says what a full disk means for the daemon.
func (d *disk) sentence(s store.Space) string {
	msg := fmt.Sprintf("disk full under %s: %d MiB free; ingestion paused", d.dir, s.Free>>20)
	if s.ReadOnly {
		msg += "; the store is open read-only"
	}
	return msg + fmt.Sprintf(" (writing stops below %d MiB free and resumes by itself once space is freed)", s.Reserve>>20)
}

// status is the server's Disk figure, measured now.
func (d *disk) status() *api.DiskStatus {
	d.mu.Lock()
	space := d.space
	d.mu.Unlock()
	if space == nil {
		return nil
	}
	s := space() // may call onSpace: measured outside d.mu
	out := &api.DiskStatus{FreeBytes: s.Free, ReserveBytes: s.Reserve, Full: s.Full, ReadOnly: s.ReadOnly}
	if !s.Writable() {
		out.Message = d.sentence(s)
	}
	return out
}

// attach gives the disk the open store to measure for status.
func (d *disk) attach(st *store.Badger) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.space = st.Space
}
