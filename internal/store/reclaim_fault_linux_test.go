package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"
)

// TestReclaimFlushFails: the memtable flush inside a reclaim's DropPrefix
// can fail (here no file descriptor is left for the new table). Badger
// then returns the error with the current memtable still in its list of
// memtables to flush (DropPrefix, db.go), and when it flushes the next
// full one it finds the list out of order and exits the process (y.Assert:
// log.Fatal, "Assert failed"). The store must outlive the failure and keep
// what was written. The scenario runs in a child process, which without
// that dies.
func TestReclaimFlushFails(t *testing.T) {
	if os.Getenv("MEDALLION_RECLAIM_FLUSH_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReclaimFlushFails$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "MEDALLION_RECLAIM_FLUSH_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestReclaimFlushFails")) {
			if len(out) > 4000 {
				out = out[len(out)-4000:]
			}
			t.Fatalf("the store did not outlive a failed reclaim flush (%v):\n%s", err, out)
		}
		return
	}

	smallReclaims(t, time.Hour)
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		t.Fatal(err)
	}
	// The file descriptors come back as soon as Badger has logged the
	// failed flush, before the store does anything about it.
	var restore sync.Once
	back := func() {
		restore.Do(func() {
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
				panic(err)
			}
		})
	}
	log := &failedFlush{marker: []byte("While trying to flush memtable"), seen: make(chan struct{}), back: back}
	defer back()
	logger := hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Warn, Output: log})
	dir := t.TempDir()
	s, err := Open(dir, Options{Logger: logger, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ids := fillForReclaim(t, s)
	s.foldCounters()
	want := viewOf(t, s, ids)

	// No descriptor left: open returns the lowest free one.
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	low := limit
	low.Cur = uint64(f.Fd())
	f.Close()
	flushStarved(t, s, syscall.RLIMIT_NOFILE, low, log)

	// Two memtables' worth of writes: Badger flushes each as it fills.
	val := bytes.Repeat([]byte("v"), 400)
	for i := range 60 {
		err := s.Write(ctx, func(txn *badger.Txn) error {
			for j := range 1000 {
				if err := txn.Set(fmt.Appendf(nil, "zz/%09d", i*1000+j), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("write %d after the failed flush: %v", i, err)
		}
	}
	check := func(s *Badger) {
		t.Helper()
		if n := countKeys(t, s, []byte("zz/")); n != 60_000 {
			t.Errorf("%d keys written after the failed flush read back, want 60000", n)
		}
		if got := viewOf(t, s, ids); !reflect.DeepEqual(got, want) {
			t.Errorf("after the failed flush the store answers\n%+v\nnot\n%+v", got, want)
		}
	}
	check(s)
	// The writes woke the store's compactions: a reclaim begins once
	// none is in flight.
	for deadline := time.Now().Add(10 * time.Second); !s.flushAndCompact(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no reclaim ran once descriptors were back")
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{Logger: logger, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s)
}

// failedFlush is a log that notes a failed reclaim flush (the first line
// holding marker) and then calls back (which gives back what the test
// took away).
type failedFlush struct {
	marker []byte
	once   sync.Once
	seen   chan struct{}
	back   func()
}

func (l *failedFlush) Write(p []byte) (int, error) {
	if bytes.Contains(p, l.marker) {
		l.back()
		l.once.Do(func() { close(l.seen) })
	}
	os.Stderr.Write(p)
	return len(p), nil
}

// TestReclaimNewMemtableFails: after the reclaim's DropPrefix has flushed
// the memtables it creates a new one, a file Badger creates empty and then
// sizes to 16 MiB (z.OpenMmapFile). When the sizing fails (here the file
// size limit, EFBIG; a full file system without sparse files does the
// same) DropPrefix fails with no memtable left, the store reopens Badger,
// and the empty .mem file is still in the directory, which Badger v4.9.6
// refuses to open (badger#2207). Before the reopen dropped it, the
// read-write open failed ("Create a new file", after sizing the file
// itself) and the store came back read-only, refusing writes until the
// next space check; on a nearly full disk the read-only open failed too
// (Badger cannot size the file read-only, and there was no room for
// anything else) and the store stayed closed until the daemon restarted.
// Either way it must come back at once, as writable as the disk allows,
// holding everything it had.
func TestReclaimNewMemtableFails(t *testing.T) {
	t.Run("room on disk", func(t *testing.T) { reclaimNewMemtableFails(t, 1<<40) })
	t.Run("disk nearly full", func(t *testing.T) { reclaimNewMemtableFails(t, 1<<20) })
}

// reclaimNewMemtableFails runs TestReclaimNewMemtableFails with free bytes
// left when the store reopens.
func reclaimNewMemtableFails(t *testing.T, free int64) {
	smallReclaims(t, time.Hour)
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	disk := newDisk(1 << 40)
	// The limit comes back as soon as the store logs the failed flush,
	// just before it reopens Badger; the disk fills and the empty logs are
	// noted then.
	var empty []string
	var restore sync.Once
	back := func() {
		restore.Do(func() {
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
				panic(err)
			}
			disk.free.Store(free)
			empty = emptyLogs(t, dir)
		})
	}
	log := &failedFlush{marker: []byte("reclaim: flush failed"), seen: make(chan struct{}), back: back}
	defer back()
	opts := disk.options(t)
	opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Warn, Output: log})
	// Only the test gives the disk back: no space check reopens the store
	// read-write until it has.
	opts.SpaceInterval = -1
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	ctx := context.Background()
	ids := fillForReclaim(t, s)
	s.foldCounters()
	want := viewOf(t, s, ids)

	// Below the new memtable's 16 MiB, above the table the flush writes
	// (the value logs are written through their maps).
	low := limit
	low.Cur = 4 << 20
	flushStarved(t, s, syscall.RLIMIT_FSIZE, low, log)
	if len(empty) == 0 {
		t.Fatal("no empty log was left when the store reopened: the test checked nothing")
	}
	t.Logf("empty logs when the store reopened: %v", empty)

	if sp := s.Space(); sp.Writable() == sp.Full {
		t.Fatalf("after the failed flush, with %d MiB free: %+v", free>>20, sp)
	}
	if n, err := s.Count(ctx); err != nil || n != want.Count {
		t.Fatalf("after the failed flush the store counts %d medallions (%v), want %d", n, err, want.Count)
	}
	// viewOf only reads: it works on a store reopened read-only too.
	if got := viewOf(t, s, ids); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the failed flush the store answers\n%+v\nnot\n%+v", got, want)
	}
	if free < opts.Reserve {
		disk.free.Store(1 << 40)
		s.checkSpace() // the space check's reopen
		if sp := s.Space(); !sp.Writable() {
			t.Fatalf("once space is back: %+v", sp)
		}
	}
	if _, err := s.Create(ctx, testMedallion("after")); err != nil {
		t.Fatalf("create after the failed flush: %v", err)
	}
	ids = append(ids, "after")
	want = viewOf(t, s, ids)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	if got := viewOf(t, s, ids); !reflect.DeepEqual(got, want) {
		t.Errorf("after a restart the store answers\n%+v\nnot\n%+v", got, want)
	}
}

// flushStarved runs the store's reclaim flush with resource lowered to low
// (log gives it back once Badger or the store logs the failure, or this
// does after the flush) and fails the test unless the flush failed.
func flushStarved(t *testing.T, s *Badger, resource int, low syscall.Rlimit, log *failedFlush) {
	t.Helper()
	if err := syscall.Setrlimit(resource, &low); err != nil {
		t.Fatal(err)
	}
	ran := s.flushAndCompact()
	log.back()
	select {
	case <-log.seen:
	default:
		t.Fatalf("the reclaim's flush did not fail (ran: %v): the test checked nothing", ran)
	}
}
