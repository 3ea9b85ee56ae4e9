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
	log := &failedFlush{seen: make(chan struct{}), back: back}
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
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	ran := s.flushAndCompact()
	back()
	select {
	case <-log.seen:
	default:
		t.Fatalf("the reclaim's flush did not fail (ran: %v): the test checked nothing", ran)
	}

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

// failedFlush is a log that notes Badger's failed memtable flush (and then
// gives the file descriptors back).
type failedFlush struct {
	once sync.Once
	seen chan struct{}
	back func()
}

func (l *failedFlush) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("While trying to flush memtable")) {
		l.back()
		l.once.Do(func() { close(l.seen) })
	}
	os.Stderr.Write(p)
	return len(p), nil
}
