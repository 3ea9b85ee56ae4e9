package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
)

// TestDiskFullRealTmpfs is issue 11's reproduction: the data dir on a
// small tmpfs and more transcripts than it can hold. Before the guard the
// daemon died of SIGBUS in Badger's value-log write, and again on every
// restart. Now ingestion pauses below the 64 MiB reserve, a restart on the
// full disk comes up read-only, and once the tmpfs grows every event is
// stored, once.
func TestDiskFullRealTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root: run this test as root to fill a real disk")
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=80m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	prevInterval := spaceInterval
	spaceInterval = 50 * time.Millisecond
	t.Cleanup(func() { spaceInterval = prevInterval })

	cfg, path := watchConfig(t)
	cfg.DataDir = filepath.Join(mnt, "data")
	// 2,000 prompts of 16 KiB (the longest message text kept): 32 MiB of
	// events for the 16 MiB the tmpfs has above the reserve.
	const lines = 2000
	// Prose, which the redactor leaves alone (hex would go as a secret).
	text := strings.Repeat("the quick brown fox jumps over the lazy dog ", 16<<10/44)
	var b strings.Builder
	for n := range lines {
		fmt.Fprintf(&b, `{"type":"user","sessionId":"s-1","uuid":"u-%d","timestamp":"2026-03-02T09:00:00Z","message":{"role":"user","content":"%d %s"}}`+"\n", n, n, text)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	r := start(t, cfg)
	c := client.New(cfg.Socket)
	ctx := context.Background()
	waitFor(t, "the paused status", func() bool {
		st, err := c.Status(ctx)
		return err == nil && st.Disk != nil && st.Disk.Full
	})
	// The status totals follow each commit a moment after it (they are
	// counters, not a read of every session), so a batch committed just
	// before the pause may show in the session before it shows here.
	var st *api.Status
	waitFor(t, "status and the session to agree", func() bool {
		var err error
		st, err = c.Status(ctx)
		return err == nil && buffered(c, "s-1") == st.Ingest.Events
	})
	t.Logf("paused: %s; %d events stored", st.Disk.Message, st.Ingest.Events)
	if st.Ingest.Events == 0 || st.Ingest.Events >= lines {
		t.Fatalf("events stored before the pause: %d", st.Ingest.Events)
	}
	if !strings.Contains(r.log.String(), "disk full under "+cfg.DataDir+": ") {
		t.Errorf("no disk full line:\n%s", r.log)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("stop on a full disk: %v", err)
	}

	// Closing trims Badger's files, which may free a little: the restart
	// is read-only, or writes up to the reserve again and pauses.
	r = start(t, cfg)
	waitFor(t, "the restart on a full disk to stop writing", func() bool {
		var err error
		st, err = c.Status(ctx)
		return err == nil && st.Disk != nil && (st.Disk.ReadOnly || st.Disk.Full)
	})
	t.Logf("restarted: %s", st.Disk.Message)

	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=256m"); err != nil {
		t.Fatalf("grow tmpfs: %v", err)
	}
	waitFor(t, "every event", func() bool { return buffered(c, "s-1") == lines })
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Disk.Full || st.Disk.ReadOnly || st.Ingest.Duplicates != 0 || len(st.Ingest.Errors) != 0 {
		t.Errorf("status after space came back: disk %+v, ingest %+v", st.Disk, st.Ingest)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(r.log.String(), "\n") {
		if strings.Contains(l, "disk") || strings.Contains(l, "read-") {
			t.Log(l)
		}
	}
}
