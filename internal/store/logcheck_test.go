package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
)

// garbage is n random bytes with no zero among them.
func garbage(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(1 + r.IntN(255))
	}
	return b
}

// writeAt overwrites part of a file in place, as a bad sector or a stray
// dd would.
func writeAt(t *testing.T, path string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// uncleanStore writes a store in a new directory and leaves it as a killed
// daemon does, with its memtable log to replay.
func uncleanStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUncleanStop$")
	cmd.Env = append(os.Environ(), "MEDALLION_UNCLEAN_STORE="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	return dir
}

func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == lockFileName || e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestDamagedLogsRefused: garbage in the middle of a value log or of a
// memtable log is found before Badger would cut the file, Open refuses with
// a sentence that names the file and the way back, and no file changes.
// Garbage in the last value-log entry after a crash looks like a write the
// crash cut short, so Badger opens and cuts it; the tables still point at
// it, and the read-back at Open refuses then.
func TestDamagedLogsRefused(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T) (dir, file string)
		// want is in the message; cut means Badger has cut the file.
		want string
		cut  bool
	}{
		{"value log with entries after the damage", func(t *testing.T) (string, string) {
			dir := t.TempDir()
			s, err := Open(dir, Options{GCInterval: -1, Reserve: -1})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				mustIngest(t, s, IngestBatch{File: file("f", int64(i+1)), Events: bigEvents(fmt.Sprintf("b%d", i), 4, 1, 8, 8<<10)})
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return dir, "000001.vlog"
		}, "up to an intact entry", false},
		{"value log, last entry, after a clean close", func(t *testing.T) (string, string) {
			dir := t.TempDir()
			fillStore(t, dir)
			return dir, "000001.vlog"
		}, "although the store was closed cleanly", false},
		{"memtable log after a crash", func(t *testing.T) (string, string) {
			return uncleanStore(t), "00001.mem"
		}, "up to an intact entry", false},
		{"value log after a crash", func(t *testing.T) (string, string) {
			return uncleanStore(t), "000001.vlog"
		}, "values that cannot be read: ", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, file := tt.make(t)
			path := filepath.Join(dir, file)
			clean, err := checkLog(path)
			if err != nil {
				t.Fatal(err)
			}
			if clean.end > clean.stop || clean.stop <= logHeaderSize {
				t.Fatalf("undamaged %s: %+v", file, clean)
			}
			// Damage the middle third, so intact entries follow.
			n := max((clean.stop-logHeaderSize)/3, 16)
			writeAt(t, path, logHeaderSize+n/2, garbage(int(min(n, 4096))))
			before := snapshot(t, dir)

			_, err = Open(dir, Options{GCInterval: -1, Reserve: -1})
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("open: %v, want ErrDamaged", err)
			}
			for _, want := range []string{"the store under " + dir + " is damaged", tt.want, "medalliond repair"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message lacks %q: %v", want, err)
				}
			}
			if tt.cut {
				return
			}
			after := snapshot(t, dir)
			for name, b := range before {
				if !bytes.Equal(after[name], b) {
					t.Errorf("%s changed", name)
				}
			}
		})
	}
}

// TestTornTailOpens: after a crash, bytes after the last entry that hold
// no intact entry (a write the crash left unfinished) are what Badger
// rightly drops: the store opens, keeps everything, and the drop is
// logged.
func TestTornTailOpens(t *testing.T) {
	dir := uncleanStore(t)
	path := filepath.Join(dir, "000001.vlog")
	res, err := checkLog(path)
	if err != nil {
		t.Fatal(err)
	}
	writeAt(t, path, res.stop, garbage(300))
	var logs lockedLog
	s := openSpace(t, dir, Options{GCInterval: -1, Reserve: -1,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})})
	checkFilled(t, s)
	if !strings.Contains(logs.String(), "a write cut short by a crash is dropped") || !strings.Contains(logs.String(), "bytes=300") {
		t.Errorf("no warning:\n%s", logs.String())
	}
}

// lockedLog is a log sink a test may read while the store writes.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestDamagedTableRefused: a damaged table block, which Badger reads only
// when a lookup lands on it (a full scan silently stopped there), fails
// the checksum pass at Open; one Badger trips over while opening is named
// as damage too.
func TestDamagedTableRefused(t *testing.T) {
	tests := []struct {
		name   string
		fill   func(t *testing.T, dir string)
		offset func(size int64) int64
		want   string
	}{
		{"the index, read at open", fillStore, func(size int64) int64 { return size - 100 }, "a table cannot be opened"},
		{"a middle block", func(t *testing.T, dir string) {
			s, err := Open(dir, Options{GCInterval: -1, Reserve: -1})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				mustIngest(t, s, IngestBatch{File: file(fmt.Sprintf("f%d", i), 1), Events: events(fmt.Sprintf("s%02d", i), fmt.Sprintf("e%02d", i), 100)})
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}, func(size int64) int64 { return size / 3 }, "a table fails its checksum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.fill(t, dir)
			tables, err := filepath.Glob(filepath.Join(dir, "*.sst"))
			if err != nil || len(tables) == 0 {
				t.Fatalf("no table: %v", err)
			}
			fi, err := os.Stat(tables[0])
			if err != nil {
				t.Fatal(err)
			}
			writeAt(t, tables[0], tt.offset(fi.Size()), garbage(64))
			_, err = Open(dir, Options{GCInterval: -1, Reserve: -1})
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("open: %v", err)
			}
		})
	}
}

// TestVerifyWhileRunning: damage that appears while the store is open is
// found by the periodic pass, logged once and reported by Damage, and the
// store keeps serving.
func TestVerifyWhileRunning(t *testing.T) {
	dir := t.TempDir()
	var logs lockedLog
	s := openSpace(t, dir, Options{GCInterval: -1, Reserve: -1, VerifyInterval: 20 * time.Millisecond,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})})
	for i := range 10 {
		mustIngest(t, s, IngestBatch{File: file(fmt.Sprintf("f%d", i), 1), Events: bigEvents(fmt.Sprintf("b%d", i), 4, 1, 8, 8<<10)})
	}
	if s.Damage() != nil {
		t.Fatalf("damage before any: %v", s.Damage())
	}
	res, err := checkLog(filepath.Join(dir, "000001.vlog"))
	if err != nil {
		t.Fatal(err)
	}
	writeAt(t, filepath.Join(dir, "000001.vlog"), res.stop/2, garbage(64))
	waitFor(t, "the damage found", func() bool { return s.Damage() != nil })
	if err := s.Damage(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "values that cannot be read: ") {
		t.Errorf("damage: %v", err)
	}
	waitFor(t, "another pass", func() bool { return strings.Count(logs.String(), "badger error") >= 2 })
	if n := strings.Count(logs.String(), "the store is damaged"); n != 1 {
		t.Errorf("%d damage lines, want 1:\n%s", n, logs.String())
	}
	if fs, err := s.FileState(context.Background(), "f0"); err != nil || fs == nil {
		t.Errorf("file state: %+v, %v", fs, err)
	}
}

// logEntryBytes encodes one log entry as Badger writes it.
func logEntryBytes(meta byte, key []byte, version uint64, value []byte) []byte {
	k := binary.BigEndian.AppendUint64(append([]byte{}, key...), ^version)
	b := []byte{meta, 0}
	b = binary.AppendUvarint(b, uint64(len(k)))
	b = binary.AppendUvarint(b, uint64(len(value)))
	b = binary.AppendUvarint(b, 0)
	b = append(append(b, k...), value...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// TestUnfinishedTransactionIsNoDamage: kill -9 between two writes of one
// transaction leaves its first entries intact in the memtable log with no
// commit entry after them. Badger drops them, rightly; the store opens,
// it is no damage. (Found by the e2e crash test: the daemon refused to
// start after a kill -9.)
func TestUnfinishedTransactionIsNoDamage(t *testing.T) {
	dir := uncleanStore(t)
	path := filepath.Join(dir, "00001.mem")
	res, err := checkLog(path)
	if err != nil {
		t.Fatal(err)
	}
	var tail []byte
	for i := range 3 {
		tail = append(tail, logEntryBytes(bitTxn, []byte(fmt.Sprintf("k/%d", i)), 1<<40, []byte("value"))...)
	}
	writeAt(t, path, res.stop, tail)
	if got, err := checkLog(path); err != nil || got.intactAfter >= 0 {
		t.Fatalf("checkLog = %+v, %v: an unfinished transaction read as damage", got, err)
	}
	st, err := Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatalf("open after a crash mid-transaction: %v", err)
	}
	st.Close()
}

// TestVerifyBigStoreInBackground: a store too big to read back within the
// start's budget opens, and is read back at once in the background:
// damage is reported by Damage, not by Open (issue 12: start ≤ 300 ms).
func TestVerifyBigStoreInBackground(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		mustIngest(t, s, IngestBatch{File: file(fmt.Sprintf("f%d", i), 1), Events: events(fmt.Sprintf("s%02d", i), fmt.Sprintf("e%02d", i), 100)})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tables, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(tables) == 0 {
		t.Fatalf("no table: %v", err)
	}
	fi, err := os.Stat(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	writeAt(t, tables[0], fi.Size()/3, garbage(64))

	prev, prevDelay := verifyAtOpenMax, verifyDelay
	verifyAtOpenMax, verifyDelay = 0, 10*time.Millisecond
	t.Cleanup(func() { verifyAtOpenMax, verifyDelay = prev, prevDelay })
	s, err = Open(dir, Options{GCInterval: -1, Reserve: -1})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	waitFor(t, "the damage found", func() bool { return s.Damage() != nil })
	if err := s.Damage(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "a table fails its checksum") {
		t.Errorf("damage: %v", err)
	}
}

// TestOpenAfterCrashLeftEmptyLogs: Badger deletes a memtable or value log
// by truncating it to 0 bytes and then removing it, and creates one empty
// before it sizes it; a kill -9 in between leaves an empty log, which
// Badger v4.9.6 refuses to open ("Create a new file"; TestReclaimCrash
// found it). Open removes it and keeps everything, read-write and, on a
// full disk, read-only; Salvage reads the store whole from its tables.
func TestOpenAfterCrashLeftEmptyLogs(t *testing.T) {
	smallReclaims(t, time.Hour)
	base := t.TempDir()
	s := openIngest(t, base, nil)
	ids := fillForReclaim(t, s)
	// The collector frees value logs. The reclaim gives up while the
	// store's own compaction of the writes holds a call open.
	waitFor(t, "a reclaim", s.reclaimIfDue)
	want := viewOf(t, s, ids)
	crashClose(t, s)
	var vlogs []int
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".vlog"); ok {
			n, err := strconv.Atoi(id)
			if err != nil {
				t.Fatal(err)
			}
			vlogs = append(vlogs, n)
		}
	}
	newest := slices.Max(vlogs)
	collected := 0 // a value log the collector deleted, below the newest
	for id := 1; id < newest; id++ {
		if !slices.Contains(vlogs, id) {
			collected = id
			break
		}
	}
	if collected < 1 {
		t.Fatalf("the collector freed no value log: %v", vlogs)
	}

	for _, tc := range []struct{ name, empty string }{
		{"memtable log deleted after its flush", "00007.mem"},
		{"value log deleted by the collector", fmt.Sprintf("%06d.vlog", collected)},
		{"value log just created", fmt.Sprintf("%06d.vlog", newest+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			copyVerbatim(t, base, dir)
			empty := filepath.Join(dir, tc.empty)
			leave := func() {
				t.Helper()
				if err := os.WriteFile(empty, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}

			leave()
			var salvaged int
			res, err := Salvage(dir, filepath.Join(t.TempDir(), "scratch"), nil, func(*medallion.Medallion) error { salvaged++; return nil })
			if err != nil || res.FromLogs != 0 || salvaged != len(want.Export) {
				t.Errorf("salvage: %d versions, %d of them only from the logs (%v); want the %d stored, all from the tables",
					salvaged, res.FromLogs, err, len(want.Export))
			}

			s := openIngest(t, dir, nil)
			// Gone, or (the newest value log's id) Badger's new one.
			if fi, err := os.Stat(empty); err == nil && fi.Size() == 0 {
				t.Error("the empty log is still there")
			}
			if got := viewOf(t, s, ids); !reflect.DeepEqual(got, want) {
				t.Errorf("the store answers\n%+v\nnot\n%+v", got, want)
			}
			if err := s.verify(); err != nil {
				t.Error(err)
			}
			dump := storeDump(t, s)
			crashClose(t, s)

			leave()
			s = openSpace(t, dir, newDisk(1).options(t))
			if !s.readOnly.Load() {
				t.Error("the store did not open read-only on a full disk")
			}
			if d := diffDumps(dump, storeDump(t, s)); d != "" {
				t.Errorf("read-only, the store changed: %s", d)
			}
		})
	}
}

// copyVerbatim copies every file of the directory from into a new
// directory to as it is, lock files included, keeping the holes of
// Badger's sparse logs (they are allocated far beyond what is written).
func copyVerbatim(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 64<<10)
	buf := make([]byte, len(zero))
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		err := func() error {
			src, err := os.Open(filepath.Join(from, e.Name()))
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := os.OpenFile(filepath.Join(to, e.Name()), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			defer dst.Close()
			var off int64
			for {
				n, err := io.ReadFull(src, buf)
				if n > 0 && !bytes.Equal(buf[:n], zero[:n]) {
					if _, err := dst.WriteAt(buf[:n], off); err != nil {
						return err
					}
				}
				off += int64(n)
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					return dst.Truncate(off)
				}
				if err != nil {
					return err
				}
			}
		}()
		if err != nil {
			t.Fatalf("copy the store: %v", err)
		}
	}
}

// TestDamageBeforeAnEmptyLogRefused: an empty value log after the newest
// written one (Badger creates a log empty before it sizes it) is dropped
// when Badger opens, so the log Badger replays is the one before, and
// damage there is still found.
func TestDamageBeforeAnEmptyLogRefused(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir)
	path := filepath.Join(dir, "000001.vlog")
	clean, err := checkLog(path)
	if err != nil {
		t.Fatal(err)
	}
	n := max((clean.stop-logHeaderSize)/3, 16)
	writeAt(t, path, logHeaderSize+n/2, garbage(int(min(n, 4096))))
	if err := os.WriteFile(filepath.Join(dir, "000002.vlog"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{GCInterval: -1, Reserve: -1})
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "000001.vlog") {
		t.Fatalf("open: %v, want ErrDamaged naming 000001.vlog", err)
	}
}
