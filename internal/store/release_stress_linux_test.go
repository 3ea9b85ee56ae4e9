package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/search"
	"github.com/medallionhq/medallion/internal/store"
)

// TestReleaseUnderLoad tries to break the store's release, which drops the
// pages of its value logs and tables with MADV_DONTNEED: safe only if
// nothing unmaps or moves one of those maps while release holds the
// store's lock. Medallion creates and updates (indexed by the search
// index), big and small records, scans, exports, searches and prefix
// drops run at once, with 1 MiB value logs that turn over all the time,
// the value-log collector every 10 ms, compactions of the memtables the
// small records fill, the verification pass, and a goroutine releasing
// without pause, each time holding the lock a little longer than release
// does. It checks that
//
//   - no stable map went away or moved while the lock was held
//     (ReleaseChecked; such a range could by then hold other memory,
//     which DONTNEED would zero),
//   - anonymous maps made meanwhile, which the kernel places in freed
//     ranges, keep what was written to them,
//   - every value read back matches its checksum, during the run, at the
//     end, and after reopening.
//
// MEDALLION_RELEASE_SOAK=5m runs it longer.
func TestReleaseUnderLoad(t *testing.T) {
	run := 3 * time.Second
	if s := os.Getenv("MEDALLION_RELEASE_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("MEDALLION_RELEASE_SOAK: %v", err)
		}
		run = d
	}
	defer store.SetValueLogFileSize(1 << 20)()
	defer store.SetMappedCheck(20 * time.Millisecond)()
	// The idle check reclaims too, when the value logs grew by a MiB; not
	// under the race detector, where the reclaim's collector would run
	// into Badger's own race (see gcInterval).
	reclaimAfter := int64(1 << 20)
	if store.RaceBuild {
		reclaimAfter = 1 << 62
	}
	defer store.SetReclaim(reclaimAfter, 1<<30)()
	dir := t.TempDir()
	logged := &errorLines{}
	logger := hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Warn, Output: logged})
	// The value-log collector runs every 10 ms, a store call beside the
	// others, but not under the race detector: Badger v4.9.6 reads the
	// memtable's highest version without synchronisation when the
	// collector starts a rewrite (DB.MaxVersion from valueLog.rewrite)
	// while a commit may be writing it (memTable.Put), a race of Badger's
	// own that has nothing to do with release.
	gcInterval := 10 * time.Millisecond
	if store.RaceBuild {
		gcInterval = -1
	}
	open := func() *store.Badger {
		st, err := store.Open(dir, store.Options{Logger: logger, GCInterval: gcInterval,
			SpaceInterval: -1, VerifyInterval: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	ix, err := search.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var (
		wg     sync.WaitGroup
		failMu sync.Mutex
		fails  []string
		counts sync.Map // what each worker did, by name
	)
	fail := func(format string, args ...any) {
		failMu.Lock()
		defer failMu.Unlock()
		if len(fails) < 20 {
			fails = append(fails, fmt.Sprintf(format, args...))
		}
		cancel()
	}
	count := func(name string) {
		n, _ := counts.LoadOrStore(name, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}
	// writeErr sorts a write's error: the run ending, or a failure (a
	// write refused while a prefix is dropped is one: the drop holds the
	// calls off).
	writeErr := func(what string, err error) {
		switch {
		case err == nil:
		case ctx.Err() != nil:
		default:
			fail("%s: %v", what, err)
		}
	}
	// Each worker's calls hold quiet's read side, so that the releaser can
	// stop them for a moment and find the store with no call in flight.
	var quiet sync.RWMutex
	worker := func(name string, pause time.Duration, fn func(rng *rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seed := sha256.Sum256([]byte(name))
			rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:]), 1))
			for ctx.Err() == nil {
				quiet.RLock()
				fn(rng)
				quiet.RUnlock()
				count(name)
				time.Sleep(pause)
			}
		}()
	}

	// Medallions, one writer: latest holds what each last write returned.
	const medallions = 24
	var latestMu sync.Mutex
	latest := make(map[string]*medallion.Medallion)
	worker("medallion writes", 0, func(rng *rand.Rand) {
		id := fmt.Sprintf("med-%02d", rng.IntN(medallions))
		latestMu.Lock()
		prev := latest[id]
		latestMu.Unlock()
		var got *medallion.Medallion
		var err error
		if prev == nil {
			got, err = st.Create(ctx, stressMedallion(id, 1, rng))
		} else {
			next := prev.Clone()
			next.Summary.HighLevel = stressText(id, prev.Meta.Version+1, rng)
			got, err = st.Update(ctx, next)
		}
		writeErr("write "+id, err)
		if err == nil {
			latestMu.Lock()
			latest[id] = got
			latestMu.Unlock()
		}
	})
	// Big records, rewritten again and again: value-log garbage.
	const bigRecords = 16
	worker("big records", 0, func(rng *rand.Rand) {
		key := fmt.Sprintf("stress/big/%02d", rng.IntN(bigRecords))
		writeErr("put "+key, st.PutAux(ctx, key, sealed(rng, 600+rng.IntN(96<<10))))
	})
	// Small records in batches: they stay in the LSM tree and fill
	// memtables, whose flushes the store compacts.
	worker("small batches", 0, func(rng *rand.Rand) {
		gen := rng.Uint64()
		base := rng.IntN(20000)
		writeErr("small batch", st.Write(ctx, func(txn *badger.Txn) error {
			for i := range 1000 {
				key := fmt.Appendf(nil, "zz/%06d", base+i)
				if err := txn.Set(key, smallValue(key, gen)); err != nil {
					return err
				}
			}
			return nil
		}))
	})
	worker("prefix drops", 200*time.Millisecond, func(rng *rand.Rand) {
		writeErr("drop batch", st.Write(ctx, func(txn *badger.Txn) error {
			for i := range 100 {
				if err := txn.Set(fmt.Appendf(nil, "zd/%03d", i), sealed(rng, 2000)); err != nil {
					return err
				}
			}
			return nil
		}))
		if err := st.DropPrefix(ctx, "zd/"); err != nil && ctx.Err() == nil {
			fail("drop prefix: %v", err)
		}
	})

	// Readers check every value they see.
	worker("point reads", 0, func(rng *rand.Rand) {
		id := fmt.Sprintf("med-%02d", rng.IntN(medallions))
		m, err := st.Get(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				fail("get %s: %v", id, err)
			}
			return
		}
		if m != nil {
			if err := checkMedallion(m); err != nil {
				fail("get %s: %v", id, err)
			}
			if _, err := st.History(ctx, id); err != nil && ctx.Err() == nil {
				fail("history %s: %v", id, err)
			}
		}
		key := fmt.Sprintf("stress/big/%02d", rng.IntN(bigRecords))
		v, err := st.GetAux(ctx, key)
		if err == nil && v != nil {
			err = unseal(v)
		}
		if err != nil && ctx.Err() == nil {
			fail("get %s: %v", key, err)
		}
	})
	worker("scans", 0, func(rng *rand.Rand) {
		err := st.View(ctx, func(txn *badger.Txn) error {
			prefix := []byte("zz/")
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: rng.IntN(2) == 0})
			defer it.Close()
			for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
				key := it.Item().KeyCopy(nil)
				if err := it.Item().Value(func(v []byte) error {
					if len(v) < 8 || !bytes.Equal(v, smallValue(key, binary.BigEndian.Uint64(v))) {
						return fmt.Errorf("%s holds %d bytes that are not its value", key, len(v))
					}
					return nil
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			fail("scan: %v", err)
		}
		if _, err := st.LatestForScope(ctx, medallion.Scope{GraphNodes: []string{"repo:stress"}}, 10); err != nil && ctx.Err() == nil {
			fail("scope query: %v", err)
		}
	})
	worker("exports", 0, func(*rand.Rand) {
		err := st.Export(ctx, func(m *medallion.Medallion) error { return checkMedallion(m) })
		if err != nil && ctx.Err() == nil {
			fail("export: %v", err)
		}
		st.PageOut() // what the daemon does after its export
	})
	worker("searches", 0, func(rng *rand.Rand) {
		if _, err := ix.Search(ctx, stressWords[rng.IntN(len(stressWords))], nil, 10); err != nil && ctx.Err() == nil {
			fail("search: %v", err)
		}
	})

	// The releaser, as the store's release does it: only when TryLock finds
	// no call in flight. With the workers running, the store is rarely
	// without a call, so every other time it stops them first (quiet);
	// Badger's own goroutines and the store's loops (compactions, the
	// collector, the fold, the verification pass, the search index's
	// merges) go on regardless.
	var released, stableSeen, churned atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(7, 7))
		for i := 0; ctx.Err() == nil; i++ {
			// A memtable waiting for its flush (two memtable logs) is the
			// moment Badger's flush goroutine works: release then, and
			// hold the lock longer.
			flushing := memtableLogs(t, dir) > 1
			stop := flushing || i%2 == 0
			hold := time.Duration(rng.IntN(3)) * time.Millisecond
			if flushing {
				hold = 10 * time.Millisecond
			}
			if stop {
				quiet.Lock()
			}
			for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
				gone, stable, churn, ran := store.ReleaseChecked(st, hold)
				if len(gone) > 0 {
					fail("maps of stable files went away or moved while release held the lock: %v", gone)
				}
				if ran {
					released.Add(1)
					stableSeen.Add(int64(stable))
					if churn {
						churned.Add(1)
					}
					break
				}
				time.Sleep(50 * time.Microsecond)
			}
			if stop {
				quiet.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	// Reclaims, as the idle check runs them: only when no call is in
	// flight, so every time the workers stop for it (quiet). Each is the
	// flush and compaction, then the collector (not under the race
	// detector: see gcInterval). The idle check's own come besides.
	var reclaims atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(11, 11))
		for ctx.Err() == nil {
			quiet.Lock()
			for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
				if store.Reclaim(st, !store.RaceBuild) {
					reclaims.Add(1)
					break
				}
				time.Sleep(50 * time.Microsecond)
			}
			quiet.Unlock()
			time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond)
		}
	}()
	// Anonymous maps come and go: the kernel puts a new one where a map
	// was just removed, so one released by mistake would lose this data.
	// They run during releases: no quiet for them.
	var canaries atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(9, 9))
		for ctx.Err() == nil {
			if err := canaryMaps(rng); err != nil {
				fail("%v", err)
			}
			canaries.Add(1)
		}
	}()

	// The run lasts run, and then until the collector has removed a value
	// log (when it runs) and release has run a few times (within a minute), so that what
	// the test asserts does not depend on the machine's speed.
	start := time.Now()
	for ctx.Err() == nil {
		_, first := valueLogs(t, dir)
		collected := first > 1 || store.RaceBuild
		if time.Since(start) >= run && collected && released.Load() >= 10 && stableSeen.Load() > 0 && reclaims.Load() >= 3 {
			break
		}
		if time.Since(start) > run+time.Minute {
			t.Errorf("after %v: %d releases, %d stable maps dropped, value logs from number %d on, %d reclaims",
				time.Since(start).Round(time.Second), released.Load(), stableSeen.Load(), first, reclaims.Load())
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	failMu.Lock()
	for _, f := range fails {
		t.Error(f)
	}
	failMu.Unlock()
	counts.Range(func(k, v any) bool {
		t.Logf("%s: %d", k, v.(*atomic.Int64).Load())
		return true
	})
	desc, _ := store.Levels(st)
	t.Logf("releases: %d (%d stable maps dropped in all; %d while Badger mapped or unmapped other files); reclaims: %d; canary rounds: %d; %s",
		released.Load(), stableSeen.Load(), churned.Load(), reclaims.Load(), canaries.Load(), desc)
	vlogs, first := valueLogs(t, dir)
	t.Logf("value logs: %d, the oldest left number %d", vlogs, first)

	// Everything written is read back whole, now and after reopening.
	final := func(st *store.Badger) {
		t.Helper()
		latestMu.Lock()
		defer latestMu.Unlock()
		for id, want := range latest {
			got, err := st.Get(t.Context(), id)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read back %v (err %v), want version %d", id, got != nil, err, want.Meta.Version)
			}
		}
		for i := range bigRecords {
			key := fmt.Sprintf("stress/big/%02d", i)
			v, err := st.GetAux(t.Context(), key)
			if err == nil && v != nil {
				err = unseal(v)
			}
			if err != nil {
				t.Errorf("%s: %v", key, err)
			}
		}
		if err := st.Export(t.Context(), checkMedallion); err != nil {
			t.Errorf("export: %v", err)
		}
	}
	final(st)
	ix.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open()
	defer st.Close()
	final(st)
	if err := st.Damage(); err != nil {
		t.Error(err)
	}
	for _, l := range logged.get() {
		t.Errorf("logged: %s", l)
	}
}

// stressWords are the words of the medallions' summaries.
var stressWords = strings.Fields("value log table release page cache compaction flush memtable collector " +
	"iterator snapshot export search scope medallion version delta index posting checksum")

// stressText is a summary of about 3 KB (over the value threshold, so in
// the value log) carrying its own checksum: "<id> v<n> <sha256> <words>".
func stressText(id string, n int, rng *rand.Rand) string {
	var words strings.Builder
	for words.Len() < 3000 {
		words.WriteString(stressWords[rng.IntN(len(stressWords))])
		words.WriteByte(' ')
	}
	body := words.String()
	sum := sha256.Sum256([]byte(body))
	return fmt.Sprintf("%s v%d %x %s", id, n, sum, body)
}

func stressMedallion(id string, n int, rng *rand.Rand) *medallion.Medallion {
	m := newMedallion(id, []string{"repo:stress"}, []string{"stress"})
	m.Summary.HighLevel = stressText(id, n, rng)
	return m
}

// checkMedallion checks a medallion's summary against its checksum and
// its id and version.
func checkMedallion(m *medallion.Medallion) error {
	f := strings.SplitN(m.Summary.HighLevel, " ", 4)
	if len(f) != 4 {
		return fmt.Errorf("%s version %d: summary %.40q is not a stress summary", m.Meta.MedallionID, m.Meta.Version, m.Summary.HighLevel)
	}
	sum := sha256.Sum256([]byte(f[3]))
	if f[0] != m.Meta.MedallionID || f[1] != fmt.Sprintf("v%d", m.Meta.Version) || f[2] != hex.EncodeToString(sum[:]) {
		return fmt.Errorf("%s version %d: summary of %s %s does not match its checksum", m.Meta.MedallionID, m.Meta.Version, f[0], f[1])
	}
	return nil
}

// sealed is n random bytes followed by their SHA-256.
func sealed(rng *rand.Rand, n int) []byte {
	v := make([]byte, n, n+sha256.Size)
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(v[i:], rng.Uint64())
	}
	sum := sha256.Sum256(v)
	return append(v, sum[:]...)
}

func unseal(v []byte) error {
	if len(v) < sha256.Size {
		return fmt.Errorf("%d bytes, too short for a sealed value", len(v))
	}
	n := len(v) - sha256.Size
	if sum := sha256.Sum256(v[:n]); !bytes.Equal(sum[:], v[n:]) {
		return fmt.Errorf("%d bytes that do not match their checksum", len(v))
	}
	return nil
}

// smallValue is the 400-byte value of key written in generation gen: gen,
// then the key's and gen's SHA-256 over and over.
func smallValue(key []byte, gen uint64) []byte {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 400), gen)
	sum := sha256.Sum256(append(append([]byte{}, key...), v...))
	for len(v) < 400 {
		v = append(v, sum[:min(len(sum), 400-len(v))]...)
	}
	return v
}

// canaryMaps maps a few anonymous ranges, writes every page, lets other
// maps come and go meanwhile, and checks what they hold before unmapping
// them.
func canaryMaps(rng *rand.Rand) error {
	var maps [][]byte
	defer func() {
		for _, m := range maps {
			_ = syscall.Munmap(m)
		}
	}()
	tag := rng.Uint64() | 1
	for range 8 {
		m, err := syscall.Mmap(-1, 0, (1+rng.IntN(64))<<12, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return fmt.Errorf("canary map: %v", err)
		}
		maps = append(maps, m)
		for i := 0; i < len(m); i += 4096 {
			binary.LittleEndian.PutUint64(m[i:], tag+uint64(i))
		}
	}
	time.Sleep(time.Duration(rng.IntN(5)) * time.Millisecond)
	for _, m := range maps {
		for i := 0; i < len(m); i += 4096 {
			if got := binary.LittleEndian.Uint64(m[i:]); got != tag+uint64(i) {
				return fmt.Errorf("anonymous map at %p: page %d holds %#x, not what was written (%#x)", &m[0], i/4096, got, tag+uint64(i))
			}
		}
	}
	return nil
}

// memtableLogs counts the memtable logs in dir: more than one while a
// memtable waits for its flush or is being flushed.
func memtableLogs(t *testing.T, dir string) (n int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Error(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".mem") {
			n++
		}
	}
	return n
}

// valueLogs counts the value-log files in dir and returns the lowest
// number among them.
func valueLogs(t *testing.T, dir string) (n int, first int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var fid int
		if _, err := fmt.Sscanf(e.Name(), "%06d.vlog", &fid); err == nil && strings.HasSuffix(e.Name(), ".vlog") {
			n++
			if first == 0 || fid < first {
				first = fid
			}
		}
	}
	return n, first
}

// errorLines keeps the lines logged at error level.
type errorLines struct {
	mu    sync.Mutex
	lines []string
}

func (e *errorLines) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("[ERROR]")) {
		e.mu.Lock()
		e.lines = append(e.lines, strings.TrimSpace(string(p)))
		e.mu.Unlock()
	}
	return len(p), nil
}

func (e *errorLines) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lines
}

// TestReleaseDuringFlush: release runs while Badger's flush goroutine,
// which no store call waits for, turns a full memtable into a table: it
// maps the new table, adds it to level 0 and unmaps the memtable log, all
// while release holds the store's lock. None of that may touch a map
// release drops with DONTNEED (ReleaseChecked).
func TestReleaseDuringFlush(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir, store.Options{Logger: testLogger(t), GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	val := make([]byte, 400)
	var overlapped, rounds int
	for key := 0; overlapped < 3 && rounds < 40; rounds++ {
		// Fill the memtable (8 MiB) until Badger hands it to its flush.
		for memtableLogs(t, dir) < 2 {
			err := st.Write(t.Context(), func(txn *badger.Txn) error {
				for range 2000 {
					key++
					if err := txn.Set(fmt.Appendf(nil, "zz/%09d", key), val); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
			gone, _, churned, ran := store.ReleaseChecked(st, 30*time.Millisecond)
			if len(gone) > 0 {
				t.Fatalf("maps of stable files went away or moved while release held the lock: %v", gone)
			}
			if ran {
				if churned {
					overlapped++
				}
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	t.Logf("%d of %d releases overlapped a flush", overlapped, rounds)
	if overlapped == 0 {
		t.Error("no release overlapped a flush: the test checked nothing")
	}
}
