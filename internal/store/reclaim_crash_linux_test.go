package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
)

// TestReclaimCrash kills a store with SIGKILL at varied moments of its
// reclaim (the flush: the r/flush write and DropPrefix; the flattening;
// the value-log collector), of its page release, of its own idle check
// (which reclaims and releases when due), of its Open (replaying what the
// previous kill left), and of plain writing. A child process (this test
// binary again) writes medallion versions, ingests and clears sessions and
// bumps a counter, and tells the parent of each write before it begins
// and once the call has returned, through a pipe; its reclaimer goroutine
// names each step before it begins. The parent kills the child, at a
// seeded random delay after the step a round aims at, copies the store as
// the kill left it, and opens the copy through Open (the daemon's own
// path: its log check, Badger's replay, the verification at Open) and
// checks that
//
//   - every write acknowledged is there, and one begun but not
//     acknowledged is there whole or not at all (a medallion version, a
//     session's events, its file state, its clearing, the counter);
//   - a cleared session's events do not come back;
//   - what was stored before the rounds (fillForReclaim) answers as it did;
//   - the counters match a count of every key, the verification passes;
//   - a reclaim runs on it, and everything reads back the same after it.
//
// The next round's child opens the original directory, where the killed
// child's lock file and memtable logs are left. At the end the parent
// opens the original itself. MEDALLION_CRASH_SEED=n replays a run.
func TestReclaimCrash(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("kills a child process in 21 rounds (about 10 s)")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MEDALLION_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("MEDALLION_CRASH_SEED: %v", err)
		}
	}
	t.Logf("seed %d (MEDALLION_CRASH_SEED=%d replays the delays)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	smallReclaims(t, time.Hour)
	dir := t.TempDir()
	s := openIngest(t, dir, nil)
	ids := fillForReclaim(t, s)
	want := keptView(viewOf(t, s, ids))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	model := newCrashModel()
	landed := map[string]int{}
	emptied := 0  // kills that left an empty log
	keyKills := 0 // kills that left the reclaim key
	keyLeft := false
	rounds := crashRounds
	if raceBuild {
		rounds = len(crashAims) // one per aim: each round takes three times as long
	}
	for round := range rounds {
		aim := crashAims[round%len(crashAims)]
		delay := time.Duration(rng.Int64N(int64(aim.delay) + 1))
		nth := 1 + rng.IntN(aim.nth)
		res := runCrashChild(t, dir, round, seed, aim, nth, delay)
		if err := model.read(res.lines); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		where := res.landed()
		landed[where]++
		t.Logf("round %d: %s; landed in %s; %d writes acknowledged", round, res.how, where, res.acks)
		// The next child opens dir as this kill left it; the checks and
		// the reclaim below change a copy.
		copied := filepath.Join(t.TempDir(), "store")
		copyVerbatim(t, dir, copied)
		if empty := emptyLogs(t, dir); len(empty) > 0 {
			// Badger deletes a log by truncating it, then removing it.
			emptied++
			t.Logf("round %d: the kill left empty logs (Badger was creating or deleting them): %s", round, strings.Join(empty, ", "))
		}
		s := openCrashed(t, copied)
		if size := s.DiskUsage(); size > verifyAtOpenMax {
			// Open reads back only a store this small before it returns.
			t.Fatalf("round %d: the store takes %d MiB: Open did not read it back", round, size>>20)
		}
		// A flush that ended drops the key an earlier kill left.
		wasLeft := keyLeft
		keyLeft = countKeys(t, s, reclaimKey) > 0
		if keyLeft && (res.flushed() || !wasLeft) {
			keyKills++
			t.Logf("round %d: the reclaim key is left: the kill came between its write and the end of its DropPrefix", round)
		}
		model.check(t, s, round, false) // Open read it back
		checkKept(t, s, ids, want)
		if t.Failed() {
			t.Fatalf("round %d (seed %d) lost or broke what was written: the kill landed in %s", round, seed, where)
		}
		// A reclaim runs on what the kill left. Open's compactions may
		// hold the read lock a moment: flushAlone gives up then.
		for deadline := time.Now().Add(10 * time.Second); !s.flushAndCompact(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no reclaim ran on the store the kill left", round)
			}
		}
		s.collectGarbage()
		if n := countKeys(t, s, reclaimKey); n != 0 {
			t.Errorf("round %d: %d reclaim keys after a reclaim", round, n)
		}
		model.check(t, s, round, true)
		checkKept(t, s, ids, want)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			t.Fatalf("round %d (seed %d): the store answered differently after a reclaim", round, seed)
		}
		// The next child counts on from the value this round left.
		model.auxFloor, model.auxPending = model.auxSeen, false
	}

	// The original, as the last kill left it, opened in place.
	s = openCrashed(t, dir)
	model.check(t, s, -1, true)
	checkKept(t, s, ids, want)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, w := range slices.Sorted(maps.Keys(landed)) {
		summary = append(summary, fmt.Sprintf("%s: %d", w, landed[w]))
	}
	t.Logf("%d kills; landed in %s; %d inside a flush by the reclaim key they left; %d left an empty log; %d medallions, %d sessions, counter at %d",
		rounds, strings.Join(summary, ", "), keyKills, emptied, len(model.meds), len(model.sessions), model.auxFloor)
}

// crashRounds kills: three aimed at each step of crashAims.
var crashRounds = 3 * len(crashAims)

// crashChildEnv names the store directory a child process writes to;
// the round and the seed come in crashRoundEnv and crashSeedEnv.
const (
	crashChildEnv = "MEDALLION_RECLAIM_CRASH_CHILD"
	crashRoundEnv = "MEDALLION_RECLAIM_CRASH_ROUND"
	crashSeedEnv  = "MEDALLION_RECLAIM_CRASH_SEED"
)

// A crashAim is a step of the child that a round kills in: at a random
// delay of up to delay after the child announced it the nth time (nth
// drawn up to the given one). The delays stay within the step's usual
// length, so most kills land inside it: the flush with a memtable of a
// few hundred writes takes milliseconds, the flattening and the
// collector tens of them.
type crashAim struct {
	step  string
	nth   int
	delay time.Duration
}

var crashAims = []crashAim{
	{"start", 1, 150 * time.Millisecond}, // the process start, Open and its replay of the last kill
	{"flush", 3, 20 * time.Millisecond},
	{"flatten", 2, 300 * time.Microsecond},
	{"gc", 2, 8 * time.Millisecond},
	{"release", 2, 600 * time.Microsecond},
	{"idle", 2, 80 * time.Millisecond},
	{"ready", 1, time.Second}, // anywhere
}

// crashRun is what the parent saw of one child.
type crashRun struct {
	lines []string
	acks  int
	how   string // what triggered the kill
}

// landed is the child's last announced step: where the kill landed
// (or the moment right after it ended).
func (r crashRun) landed() string {
	last := "start"
	for _, l := range r.lines {
		if step, ok := strings.CutPrefix(l, "P "); ok {
			last = step
		}
	}
	if last == "busy" {
		last = "flush (waiting for the calls in flight)"
	}
	return last
}

// flushed reports whether a reclaim's flush ended in the child (its
// flattening began).
func (r crashRun) flushed() bool { return slices.Contains(r.lines, "P flatten") }

// runCrashChild starts a child writing to dir and kills it once it
// announced aim.step the nth time, delay later (or, when it never does,
// after a few seconds), and returns every line it wrote.
func runCrashChild(t *testing.T, dir string, round int, seed uint64, aim crashAim, nth int, delay time.Duration) crashRun {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestReclaimCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir,
		crashRoundEnv+"="+strconv.Itoa(round), fmt.Sprintf("%s=%d", crashSeedEnv, seed))
	cmd.ExtraFiles = []*os.File{pw} // fd 3
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()

	var (
		mu    sync.Mutex
		lines []string
	)
	seen := make(chan struct{}) // closed when the child announced aim.step the nth time
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		n := 0
		for sc.Scan() {
			l := sc.Text()
			mu.Lock()
			lines = append(lines, l)
			mu.Unlock()
			if l == "P "+aim.step {
				if n++; n == nth {
					close(seen)
				}
			}
		}
	}()
	how := fmt.Sprintf("killed %v after %s #%d", delay.Round(10*time.Microsecond), aim.step, nth)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var trigger <-chan time.Time
	if aim.step == "start" {
		trigger = time.After(delay)
		how = fmt.Sprintf("killed %v after the start", delay.Round(10*time.Microsecond))
	} else {
		select {
		case <-seen:
			trigger = time.After(delay)
		case err := <-exited:
			<-read
			crashChildDied(t, round, err, lines, stderr.String())
		case <-time.After(10 * time.Second):
			how = fmt.Sprintf("killed after 10 s: %s #%d never came", aim.step, nth)
			trigger = time.After(0)
		}
	}
	select {
	case <-trigger:
	case err := <-exited:
		<-read
		crashChildDied(t, round, err, lines, stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err = <-exited
	<-read // every line written before the kill is in the pipe
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !exit.Sys().(syscall.WaitStatus).Signaled() {
		crashChildDied(t, round, err, lines, stderr.String())
	}
	if strings.Contains(stderr.String(), "WARNING: DATA RACE") {
		t.Errorf("round %d: the child raced:\n%s", round, tail(stderr.String(), 6000))
	}
	if out := stderr.String(); out != "" {
		// Warnings the child logged (the store logs at Warn and above).
		t.Logf("round %d: the child logged:\n%s", round, tail(out, 2000))
	}
	acks := 0
	for _, l := range lines {
		if l != "" && l[0] >= 'A' && l[0] <= 'Z' && l[0] != 'P' {
			acks++
		}
	}
	t.Logf("round %d: child ran %v", round, time.Since(start).Round(time.Millisecond))
	return crashRun{lines: lines, acks: acks, how: how}
}

// crashChildDied fails the test for a child that ended other than by the
// kill: it failed a write (an "X" line says which) or crashed.
func crashChildDied(t *testing.T, round int, err error, lines []string, out string) {
	t.Helper()
	var failed []string
	for _, l := range lines {
		if strings.HasPrefix(l, "X ") {
			failed = append(failed, l[2:])
		}
	}
	t.Fatalf("round %d: the child ended before the kill (%v): %s\n%s", round, err, strings.Join(failed, "; "), tail(out, 4000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// crashChild is the child's side: it opens the store in dir and writes
// and reclaims until it is killed. Every line it writes to fd 3 is one
// write(2), so each reaches the pipe whole before the kill:
//
//	P step        the reclaimer begins step (see crashAims)
//	m id v / M id v   Create or Update of medallion id to version v begins / returned
//	i sid / I sid     Ingest of session sid's 20 events begins / returned
//	c sid / C sid     ClearEpisode of sid begins / returned
//	n / N v           AddAuxInt("crash/n", 1) begins / returned v
//	X what        the child failed and exits
func crashChild(t *testing.T, dir string) {
	round, _ := strconv.Atoi(os.Getenv(crashRoundEnv))
	seed, _ := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	rng := rand.New(rand.NewPCG(seed, uint64(round)+1))
	out := os.NewFile(3, "acks")
	var outMu sync.Mutex
	note := func(format string, args ...any) {
		line := fmt.Appendf(nil, format+"\n", args...)
		outMu.Lock()
		defer outMu.Unlock()
		if _, err := out.Write(line); err != nil {
			os.Exit(4) // the parent is gone
		}
	}
	fail := func(format string, args ...any) {
		note("X "+format, args...)
		os.Exit(3)
	}
	// Reclaims due every 2 MiB; the idle check every 10 ms.
	smallReclaims(t, 10*time.Millisecond)
	// Not killed within a minute: the parent is stuck; leave no orphan.
	time.AfterFunc(time.Minute, func() { fail("not killed within a minute") })

	note("P open")
	logger := hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Warn, Output: os.Stderr})
	s, err := Open(dir, Options{Logger: logger, GCInterval: -1})
	if err != nil {
		fail("open: %v", err)
	}
	note("P ready")

	// gate pauses the writer for the idle stretches (the store's own idle
	// check reclaims only when no call came for a whole check), and, under
	// the race detector, for the collector: Badger v4.9.6 races with
	// itself when the collector starts a rewrite while a commit writes the
	// memtable (see TestReleaseUnderLoad).
	var gate sync.RWMutex
	go crashWriter(s, round, rand.New(rand.NewPCG(seed, uint64(round)+1000)), &gate, note, fail)
	for cycle := 0; ; cycle++ {
		if cycle%2 == 1 {
			gate.Lock()
			note("P idle")
			time.Sleep(80 * time.Millisecond)
			gate.Unlock()
		}
		note("P flush")
		for !s.flushAlone() {
			note("P busy")
			time.Sleep(100 * time.Microsecond)
			note("P flush")
		}
		note("P flatten")
		s.flattenAll()
		if raceBuild {
			gate.Lock()
		}
		note("P gc")
		s.collectGarbage()
		if raceBuild {
			gate.Unlock()
		}
		note("P release")
		s.release()
		note("P write")
		time.Sleep(time.Duration(40+rng.IntN(60)) * time.Millisecond)
	}
}

// crashWriter writes until the process is killed: each step a medallion
// version (a new medallion every fifth), a session of 20 events of about
// 1 KB (in the value log), cleared in three steps of four, and the
// counter. It announces each write before it begins and once it returned.
func crashWriter(s *Badger, round int, rng *rand.Rand, gate *sync.RWMutex, note, fail func(string, ...any)) {
	ctx := context.Background()
	text := strings.Repeat("an event that a checkpoint clears ", 30)
	var cur *medallion.Medallion
	for k := 0; ; k++ {
		gate.RLock()
		if k%5 == 0 {
			id := fmt.Sprintf("crash-r%02d-%04d", round, k/5)
			m := testMedallion(id)
			m.Summary.HighLevel = crashSummary(id, 1)
			note("m %s 1", id)
			got, err := s.Create(ctx, m)
			if err != nil {
				fail("create %s: %v", id, err)
			}
			note("M %s 1", id)
			cur = got
		} else {
			next := cur.Clone()
			id, v := next.Meta.MedallionID, next.Meta.Version+1
			next.Summary.HighLevel = crashSummary(id, v)
			note("m %s %d", id, v)
			got, err := s.Update(ctx, next)
			if err != nil {
				fail("update %s to %d: %v", id, v, err)
			}
			note("M %s %d", id, v)
			cur = got
		}
		sid := fmt.Sprintf("crash-r%02d-s%05d", round, k)
		evs := events(sid, sid, crashEvents)
		for j := range evs {
			evs[j].Text = text
		}
		note("i %s", sid)
		if _, err := s.Ingest(ctx, IngestBatch{File: file(sid, crashOffset), Events: evs, Scopes: map[string][]string{sid: {"repo:x"}}}); err != nil {
			fail("ingest %s: %v", sid, err)
		}
		note("I %s", sid)
		if k%4 != 3 {
			note("c %s", sid)
			if err := s.ClearEpisode(ctx, sid, crashEvents); err != nil {
				fail("clear %s: %v", sid, err)
			}
			note("C %s", sid)
		}
		note("n")
		n, err := s.AddAuxInt(ctx, crashCounter, 1)
		if err != nil {
			fail("add to the counter: %v", err)
		}
		note("N %d", n)
		gate.RUnlock()
		time.Sleep(time.Duration(rng.IntN(1000)) * time.Microsecond)
	}
}

const (
	crashEvents  = 20
	crashOffset  = 2000
	crashCounter = "crash/n"
)

// crashSummary is version v of medallion id's summary: over the value
// threshold, so it lives in the value log.
func crashSummary(id string, v int) string {
	return strings.Repeat(fmt.Sprintf("version %d of %s ", v, id), 40)
}

// crashModel is what the children acknowledged, over all rounds.
type crashModel struct {
	meds     map[string]*crashMedallion
	sessions map[string]*crashSession
	// auxFloor is the counter's value as last read or acknowledged;
	// auxPending says an increment began after it and was not
	// acknowledged.
	auxFloor   int64
	auxPending bool
	auxSeen    int64 // the value check read
}

type crashMedallion struct{ acked, begun int }

type crashSession struct{ ingestBegun, ingested, clearBegun, cleared bool }

func newCrashModel() *crashModel {
	return &crashModel{meds: map[string]*crashMedallion{}, sessions: map[string]*crashSession{}}
}

// read takes in one child's lines.
func (m *crashModel) read(lines []string) error {
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "P":
		case "X":
			return fmt.Errorf("the child failed: %s", l)
		case "m", "M":
			if len(f) != 3 {
				return fmt.Errorf("bad line %q", l)
			}
			v, err := strconv.Atoi(f[2])
			if err != nil {
				return fmt.Errorf("bad line %q", l)
			}
			md := m.meds[f[1]]
			if md == nil {
				md = &crashMedallion{}
				m.meds[f[1]] = md
			}
			if f[0] == "m" {
				md.begun = v
			} else {
				md.acked = v
			}
		case "i", "I", "c", "C":
			if len(f) != 2 {
				return fmt.Errorf("bad line %q", l)
			}
			ss := m.sessions[f[1]]
			if ss == nil {
				ss = &crashSession{}
				m.sessions[f[1]] = ss
			}
			switch f[0] {
			case "i":
				ss.ingestBegun = true
			case "I":
				ss.ingested = true
			case "c":
				ss.clearBegun = true
			case "C":
				ss.cleared = true
			}
		case "n":
			m.auxPending = true
		case "N":
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || len(f) != 2 {
				return fmt.Errorf("bad line %q", l)
			}
			m.auxFloor, m.auxPending = max(m.auxFloor, v), false
		default:
			return fmt.Errorf("bad line %q", l)
		}
	}
	return nil
}

// check reads every write the model knows of back from s, checks the
// counters, and with verify reads every table block and value back.
func (m *crashModel) check(t *testing.T, s *Badger, round int, verify bool) {
	t.Helper()
	ctx := context.Background()
	errorf := func(format string, args ...any) {
		t.Helper()
		t.Errorf("round %d: "+format, append([]any{round}, args...)...)
	}
	for _, id := range slices.Sorted(maps.Keys(m.meds)) {
		md := m.meds[id]
		got, err := s.Get(ctx, id)
		if err != nil {
			errorf("get %s: %v", id, err)
			continue
		}
		latest := 0
		if got != nil {
			latest = got.Meta.Version
		}
		if latest < md.acked || latest > md.begun {
			errorf("medallion %s at version %d; %d acknowledged, %d begun", id, latest, md.acked, md.begun)
			continue
		}
		for v := 1; v <= latest; v++ {
			mv, err := s.GetVersion(ctx, id, v)
			if err != nil || mv == nil || mv.Summary.HighLevel != crashSummary(id, v) {
				errorf("medallion %s version %d reads back wrong (%v, found %v)", id, v, err, mv != nil)
			}
		}
		if latest > 0 {
			if h, err := s.History(ctx, id); err != nil || len(h) != latest {
				errorf("history of %s: %d versions (%v), want %d", id, len(h), err, latest)
			}
		}
	}
	for _, sid := range slices.Sorted(maps.Keys(m.sessions)) {
		ss := m.sessions[sid]
		evs, err := s.Episode(ctx, sid, 0, 0)
		if err != nil {
			errorf("episode %s: %v", sid, err)
			continue
		}
		n := len(evs)
		switch {
		case ss.cleared && n != 0:
			errorf("session %s: cleared (acknowledged), yet %d events buffered", sid, n)
		case ss.ingested && !ss.clearBegun && n != crashEvents:
			errorf("session %s: %d events buffered, want the %d acknowledged", sid, n, crashEvents)
		case n != 0 && n != crashEvents:
			errorf("session %s: %d events buffered, want %d or none (all or nothing)", sid, n, crashEvents)
		}
		for j, e := range evs {
			if want := fmt.Sprintf("%s-%d", sid, j); e.Event.ID != want {
				errorf("session %s: event %d is %s, want %s", sid, j, e.Event.ID, want)
				break
			}
		}
		if ss.ingested {
			if si, err := s.Session(ctx, sid); err != nil || si == nil {
				errorf("session %s (acknowledged) not found (%v)", sid, err)
			}
			if fs, err := s.FileState(ctx, sid); err != nil || fs == nil || fs.Offset != crashOffset {
				errorf("file state of %s (acknowledged): %+v, %v", sid, fs, err)
			}
		}
	}
	v, err := s.AuxInt(ctx, crashCounter)
	hi := m.auxFloor
	if m.auxPending {
		hi++
	}
	switch {
	case err != nil:
		errorf("counter: %v", err)
	case v < m.auxFloor || v > hi:
		errorf("counter at %d, want %d to %d", v, m.auxFloor, hi)
	}
	m.auxSeen = v
	checkCounters(t, s)
	if verify {
		if err := s.verify(); err != nil {
			errorf("verification: %v", err)
		}
	}
}

// keptView is the part of a storeView that the children leave alone:
// what fillForReclaim stored, less the totals they add to.
func keptView(v storeView) storeView {
	v.Count, v.Sessions, v.Buffered, v.Checkpoints, v.Files, v.Sizes, v.Export = 0, 0, 0, 0, 0, nil, nil
	return v
}

// checkKept checks that what fillForReclaim stored answers as it did.
func checkKept(t *testing.T, s *Badger, ids []string, want storeView) {
	t.Helper()
	if got := keptView(viewOf(t, s, ids)); !reflect.DeepEqual(got, want) {
		t.Errorf("what was stored before the kills answers\n%+v\nnot\n%+v", got, want)
	}
	if evs := mustEpisode(t, s, "sess-0015", 0, 0); len(evs) != 50 {
		t.Errorf("%d events buffered for sess-0015, want 50", len(evs))
	}
}

// openCrashed opens the store a kill left in dir as the daemon does
// (openIngest), and names its files when that fails.
func openCrashed(t *testing.T, dir string) *Badger {
	t.Helper()
	logger := hclog.New(&hclog.LoggerOptions{Name: "store", Level: hclog.Warn, Output: t.Output()})
	s, err := Open(dir, Options{Logger: logger, GCInterval: -1})
	if err != nil {
		var files []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if fi, err := e.Info(); err == nil {
				files = append(files, fmt.Sprintf("%s %d", e.Name(), fi.Size()))
			}
		}
		t.Fatalf("open the store the kill left: %v\nfiles: %s", err, strings.Join(files, ", "))
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// emptyLogs names the memtable and value logs of dir that are empty.
func emptyLogs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext != ".mem" && ext != ".vlog" {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Size() == 0 {
			out = append(out, e.Name())
		}
	}
	return out
}
