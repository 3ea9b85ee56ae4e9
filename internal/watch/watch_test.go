package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// recorder records the callbacks of a Watcher.
type recorder struct {
	mu    sync.Mutex
	files []string // onFile paths, in call order
	sizes []int64  // file size at each onFile call (-1: missing)
	gone  []string
	roots []string // root name of each onFile call
}

func (r *recorder) onFile(root Root, path string) {
	size := int64(-1)
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files = append(r.files, path)
	r.sizes = append(r.sizes, size)
	r.roots = append(r.roots, root.Name)
}

func (r *recorder) onGone(_ Root, path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gone = append(r.gone, path)
}

// fileCount returns how many onFile calls named path.
func (r *recorder) fileCount(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range r.files {
		if p == path {
			n++
		}
	}
	return n
}

func (r *recorder) goneCount(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range r.gone {
		if p == path {
			n++
		}
	}
	return n
}

func (r *recorder) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.files)
}

// eventually polls cond until it holds or a deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// run starts w.Run and stops it at the end of the test.
func run(t *testing.T, w *Watcher) *recorder {
	t.Helper()
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, rec.onFile, rec.onGone) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return rec
}

func newWatcher(t *testing.T, opts Options, roots ...Root) *Watcher {
	t.Helper()
	if opts.Reconcile == 0 {
		opts.Reconcile = time.Hour // tests trigger rescans themselves
	}
	w, err := New(roots, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCatchUpAtStart(t *testing.T) {
	dir := t.TempDir()
	want := []string{
		filepath.Join(dir, "a.jsonl"),
		filepath.Join(dir, "p", "b.jsonl"),
		filepath.Join(dir, "p", "q", "c.jsonl"),
	}
	for _, p := range want {
		write(t, p, "{}\n")
	}
	write(t, filepath.Join(dir, "notes.txt"), "x")
	if err := os.Symlink(filepath.Join(dir, "p"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}

	w := newWatcher(t, Options{}, Root{Name: "claude", Path: dir})
	rec := run(t, w)
	eventually(t, "catch-up of existing files", func() bool { return len(rec.reported()) >= len(want) })
	got := rec.reported()
	slices.Sort(got)
	// The catch-up is one batch: had it reported notes.txt or followed
	// the symlink, those calls would be here too.
	if !slices.Equal(got, want) {
		t.Fatalf("reported %q, want %q", got, want)
	}
	eventually(t, "stats", func() bool { return w.Stats().Files == 3 })
	s := w.Stats()
	if s.Dirs != 3 || len(s.Roots) != 1 || !s.Roots[0].Exists || s.Roots[0].Files != 3 || s.Roots[0].Name != "claude" || s.Roots[0].Path != dir {
		t.Fatalf("stats %+v", s)
	}
}

func TestFileLifecycle(t *testing.T) {
	dir := t.TempDir()
	w := newWatcher(t, Options{}, Root{Name: "r", Path: dir})
	rec := run(t, w)
	eventually(t, "watch on the root", func() bool { return w.Stats().Dirs == 1 })

	a := filepath.Join(dir, "a.jsonl")
	write(t, a, "{}\n")
	eventually(t, "onFile for a created file", func() bool { return rec.fileCount(a) >= 1 })
	n := rec.fileCount(a)
	write(t, a, "{}\n")
	eventually(t, "onFile after an append", func() bool { return rec.fileCount(a) > n })

	b := filepath.Join(dir, "b.jsonl")
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	eventually(t, "onGone(old) and onFile(new) after a rename", func() bool {
		return rec.goneCount(a) == 1 && rec.fileCount(b) >= 1
	})
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	eventually(t, "onGone after a remove", func() bool { return rec.goneCount(b) == 1 })
	eventually(t, "stats", func() bool { return w.Stats().Files == 0 })
}

// TestBurstEndsWithCall checks that collapsing a burst of writes never
// drops the last one: some onFile call sees the file at its final size.
func TestBurstEndsWithCall(t *testing.T) {
	dir := t.TempDir()
	w := newWatcher(t, Options{}, Root{Name: "r", Path: dir})
	rec := run(t, w)
	eventually(t, "watch on the root", func() bool { return w.Stats().Dirs == 1 })
	path := filepath.Join(dir, "s.jsonl")
	for range 300 {
		write(t, path, `{"k":"v"}`+"\n")
	}
	final := int64(300 * len(`{"k":"v"}`+"\n"))
	eventually(t, "an onFile call after the last write", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.Contains(rec.sizes, final)
	})
	if n := rec.fileCount(path); n > 300 {
		t.Fatalf("%d onFile calls for 300 writes", n)
	}
}

func TestNewDirectoryWithFiles(t *testing.T) {
	tests := []struct {
		name   string
		create func(t *testing.T, root, outside string) []string
	}{
		{"mkdir -p and write at once", func(t *testing.T, root, _ string) []string {
			files := []string{
				filepath.Join(root, "proj", "s1.jsonl"),
				filepath.Join(root, "proj", "sub", "deep", "s2.jsonl"),
			}
			for _, f := range files {
				write(t, f, "{}\n")
			}
			return files
		}},
		{"pre-populated directory renamed in", func(t *testing.T, root, outside string) []string {
			src := filepath.Join(outside, "proj")
			write(t, filepath.Join(src, "s1.jsonl"), "{}\n")
			write(t, filepath.Join(src, "a", "b", "s2.jsonl"), "{}\n")
			if err := os.Rename(src, filepath.Join(root, "proj")); err != nil {
				t.Fatal(err)
			}
			return []string{
				filepath.Join(root, "proj", "s1.jsonl"),
				filepath.Join(root, "proj", "a", "b", "s2.jsonl"),
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			w := newWatcher(t, Options{}, Root{Name: "r", Path: root})
			rec := run(t, w)
			eventually(t, "watch on the root", func() bool { return w.Stats().Dirs == 1 })
			files := tt.create(t, root, outside)
			for _, f := range files {
				eventually(t, "onFile for "+f, func() bool { return rec.fileCount(f) >= 1 })
			}
			// The new directories are watched: a later append is seen.
			last := files[len(files)-1]
			n := rec.fileCount(last)
			write(t, last, "{}\n")
			eventually(t, "onFile after an append in the new directory", func() bool { return rec.fileCount(last) > n })
			eventually(t, "stats", func() bool { return w.Stats().Dirs == 4 && w.Stats().Files == 2 })
		})
	}
}

func TestDirectoryRenameAndRemove(t *testing.T) {
	root := t.TempDir()
	old := filepath.Join(root, "d", "s.jsonl")
	write(t, old, "{}\n")
	w := newWatcher(t, Options{}, Root{Name: "r", Path: root})
	rec := run(t, w)
	eventually(t, "catch-up", func() bool { return rec.fileCount(old) == 1 })

	if err := os.Rename(filepath.Join(root, "d"), filepath.Join(root, "e")); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(root, "e", "s.jsonl")
	eventually(t, "onGone(old) and onFile(new)", func() bool { return rec.goneCount(old) == 1 && rec.fileCount(moved) >= 1 })
	// The renamed directory is watched under its new name.
	n := rec.fileCount(moved)
	write(t, moved, "{}\n")
	eventually(t, "onFile after an append in the renamed directory", func() bool { return rec.fileCount(moved) > n })
	added := filepath.Join(root, "e", "t.jsonl")
	write(t, added, "{}\n")
	eventually(t, "onFile for a file created in the renamed directory", func() bool { return rec.fileCount(added) >= 1 })

	// Moved out of the root: everything under it is gone.
	if err := os.Rename(filepath.Join(root, "e"), filepath.Join(t.TempDir(), "e")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "onGone for a directory moved away", func() bool { return rec.goneCount(moved) == 1 && rec.goneCount(added) == 1 })
	eventually(t, "stats", func() bool { s := w.Stats(); return s.Dirs == 1 && s.Files == 0 })

	write(t, filepath.Join(root, "f", "g", "s.jsonl"), "{}\n")
	eventually(t, "new tree", func() bool { return rec.fileCount(filepath.Join(root, "f", "g", "s.jsonl")) >= 1 })
	if err := os.RemoveAll(filepath.Join(root, "f")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "onGone for a removed tree", func() bool { return rec.goneCount(filepath.Join(root, "f", "g", "s.jsonl")) == 1 })
	eventually(t, "stats", func() bool { s := w.Stats(); return s.Dirs == 1 && s.Files == 0 })
}

func TestIncludeExclude(t *testing.T) {
	root := t.TempDir()
	yes := []string{"a.jsonl", "top.log", "sub/d.jsonl", "sub/x/e.jsonl"}
	no := []string{"sub/top.log", "skip/b.jsonl", "skip/deeper/c.jsonl", "c.tmp.jsonl", "sub/f.tmp.jsonl", "notes.txt"}
	w := newWatcher(t, Options{}, Root{
		Name:    "r",
		Path:    root,
		Include: []string{"**/*.jsonl", "*.log"},
		Exclude: []string{"skip/**", "**/*.tmp.jsonl"},
	})
	// Half of the files exist at start, half are created after.
	for _, p := range append(slices.Clone(yes[:2]), no[:3]...) {
		write(t, filepath.Join(root, p), "{}\n")
	}
	rec := run(t, w)
	eventually(t, "catch-up", func() bool { return w.Stats().Files == 2 })
	for _, p := range append(slices.Clone(yes[2:]), no[3:]...) {
		write(t, filepath.Join(root, p), "{}\n")
	}
	write(t, filepath.Join(root, "skip", "late.jsonl"), "{}\n")
	// Events arrive in order: once the sentinel, written last, is
	// reported, any excluded file would have been too.
	sentinel := filepath.Join(root, "zz.jsonl")
	write(t, sentinel, "{}\n")
	eventually(t, "sentinel", func() bool { return rec.fileCount(sentinel) >= 1 })
	var got []string
	for _, p := range rec.reported() {
		if p != sentinel && !slices.Contains(got, p) {
			got = append(got, p)
		}
	}
	var want []string
	for _, p := range yes {
		want = append(want, filepath.Join(root, filepath.FromSlash(p)))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("reported %q, want %q", got, want)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"**/*.jsonl", "a.jsonl", true},
		{"**/*.jsonl", "x/y/a.jsonl", true},
		{"**/*.jsonl", "a.json", false},
		{"*.jsonl", "x/a.jsonl", false},
		{"2025/**/rollout-*.jsonl", "2025/01/02/rollout-x.jsonl", true},
		{"2025/**/rollout-*.jsonl", "2024/01/02/rollout-x.jsonl", false},
		{"tmp/**", "tmp", true},
		{"tmp/**", "tmp/a/b", true},
		{"tmp/**", "tmpx/a", false},
		{"**/subagents/**", "p/s/subagents/agent.jsonl", true},
		{"**/**/a", "a", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/y/z/c", false},
		{"[ab].jsonl", "b.jsonl", true},
	}
	for _, tt := range tests {
		p, err := compile(tt.pattern)
		if err != nil {
			t.Fatalf("compile %q: %v", tt.pattern, err)
		}
		if got := p.match(strings.Split(tt.path, "/")); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		roots []Root
		want  string
	}{
		{"empty path", []Root{{Name: "a"}}, "empty path"},
		{"bad include", []Root{{Name: "a", Path: dir, Include: []string{"[x"}}}, "syntax error"},
		{"bad exclude", []Root{{Name: "a", Path: dir, Exclude: []string{"a//b"}}}, "empty path segment"},
		{"same path", []Root{{Name: "a", Path: dir}, {Name: "b", Path: dir + "/"}}, "overlaps"},
		{"nested", []Root{{Name: "a", Path: dir}, {Name: "b", Path: filepath.Join(dir, "x")}}, "overlaps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.roots, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRootCreatedLater(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "home", ".claude", "projects")
	other := t.TempDir()
	w := newWatcher(t, Options{}, Root{Name: "claude", Path: root}, Root{Name: "other", Path: other})
	rec := run(t, w)
	eventually(t, "start", func() bool { return w.Stats().Dirs == 1 })
	if s := w.Stats(); s.Roots[0].Exists || !s.Roots[1].Exists {
		t.Fatalf("stats %+v", s)
	}

	// Created in steps, as a tool's first run would.
	if err := os.Mkdir(filepath.Join(base, "home"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(root, "-work-muse", "s.jsonl")
	write(t, f, "{}\n")
	eventually(t, "onFile in the new root", func() bool { return rec.fileCount(f) >= 1 })
	eventually(t, "root exists in stats", func() bool { s := w.Stats(); return s.Roots[0].Exists && s.Roots[0].Files == 1 })

	// The root goes away and comes back.
	if err := os.RemoveAll(filepath.Join(base, "home")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "onGone after the root was removed", func() bool { return rec.goneCount(f) == 1 })
	eventually(t, "root missing in stats", func() bool { s := w.Stats(); return !s.Roots[0].Exists && s.Roots[0].Files == 0 })
	n := rec.fileCount(f)
	write(t, f, "{}\n")
	eventually(t, "onFile after the root came back", func() bool { return rec.fileCount(f) > n })
	if rec.reported()[0] == "" {
		t.Fatal("empty path reported")
	}
	rec.mu.Lock()
	for _, name := range rec.roots {
		if name != "claude" {
			t.Errorf("file reported under root %q", name)
		}
	}
	rec.mu.Unlock()
}

// driven returns a Watcher whose handlers the test calls itself, on its own
// goroutine, as Run would: nothing reads the fsnotify events.
func driven(t *testing.T, opts Options, add func(w *Watcher, dir string) error, roots ...Root) (*Watcher, *recorder) {
	t.Helper()
	w := newWatcher(t, opts, roots...)
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsw.Close() })
	if add != nil {
		w.add = func(dir string) error { return add(w, dir) }
	}
	rec := &recorder{}
	w.start(fsw, rec.onFile, rec.onGone)
	return w, rec
}

// TestOverflowRescans drives the overflow handler directly: a kernel queue
// overflow cannot be forced from a test.
func TestOverflowRescans(t *testing.T) {
	root := t.TempDir()
	kept := filepath.Join(root, "kept.jsonl")
	lost := filepath.Join(root, "d", "lost.jsonl")
	write(t, kept, "{}\n")
	write(t, lost, "{}\n")
	w, rec := driven(t, Options{}, nil, Root{Name: "r", Path: root})
	if rec.fileCount(kept) != 1 || rec.fileCount(lost) != 1 {
		t.Fatalf("catch-up reported %q", rec.reported())
	}

	// Changes whose events are never handled, as when the queue overflows.
	if err := os.RemoveAll(filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	added := filepath.Join(root, "e", "added.jsonl")
	write(t, added, "{}\n")

	w.handleError(fsnotify.ErrEventOverflow)
	w.flush()
	w.publish()
	if rec.goneCount(lost) != 1 || rec.fileCount(added) != 1 || rec.fileCount(kept) != 2 {
		t.Fatalf("after the rescan: reported %q, gone %q", rec.reported(), rec.gone)
	}
	s := w.Stats()
	if s.Overflows != 1 || s.Rescans != 1 || s.Files != 2 || s.Dirs != 2 {
		t.Fatalf("stats %+v", s)
	}
}

// TestWatchLimit makes adding a watch fail as it does when
// fs.inotify.max_user_watches is reached, and checks that the user is told
// what to do and that the periodic rescan still finds new files there.
func TestWatchLimit(t *testing.T) {
	root := t.TempDir()
	full := filepath.Join(root, "full")
	early := filepath.Join(full, "early.jsonl")
	write(t, early, "{}\n")
	w := newWatcher(t, Options{Reconcile: 50 * time.Millisecond}, Root{Name: "r", Path: root})
	w.add = func(dir string) error {
		if strings.HasPrefix(dir, full) {
			return syscall.ENOSPC
		}
		return w.fsw.Add(dir)
	}
	rec := run(t, w)
	eventually(t, "catch-up in the unwatched folder", func() bool { return rec.fileCount(early) >= 1 })
	s := w.Stats()
	if s.Dirs != 1 {
		t.Fatalf("Dirs = %d, want only the root watched", s.Dirs)
	}
	eventually(t, "the limit message", func() bool {
		for _, e := range w.Stats().Errors {
			if strings.Contains(e, "fs.inotify.max_user_watches=") && strings.Contains(e, "sudo sysctl fs.inotify.max_user_watches=524288") {
				return true
			}
		}
		return false
	})
	late := filepath.Join(full, "sub", "late.jsonl")
	write(t, late, "{}\n")
	eventually(t, "the rescan finding a file in an unwatched folder", func() bool { return rec.fileCount(late) >= 1 })
	if w.Stats().Rescans < 1 {
		t.Fatal("no rescan counted")
	}
}

func TestLimitMessage(t *testing.T) {
	if _, err := os.Stat("/proc/sys/fs/inotify/max_user_watches"); err != nil {
		t.Skip("no inotify settings on this system")
	}
	b, _ := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	want := fmt.Sprintf("inotify watch limit reached (fs.inotify.max_user_watches=%s): raise it with `sudo sysctl fs.inotify.max_user_watches=524288`", strings.TrimSpace(string(b)))
	if got := watchLimitMessage(); got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	if got := instanceLimitMessage(); !strings.Contains(got, "fs.inotify.max_user_instances=") {
		t.Fatalf("instance message %q", got)
	}
}

func TestRunTwice(t *testing.T) {
	w := newWatcher(t, Options{}, Root{Name: "r", Path: t.TempDir()})
	run(t, w)
	eventually(t, "start", func() bool { return w.Stats().Dirs == 1 })
	if err := w.Run(context.Background(), nil, nil); err == nil {
		t.Fatal("second Run did not fail")
	}
}

// TestRescanRenewsReplacedWatch replaces a watched directory while its
// events go unhandled (as after an overflow): the rescan must notice that
// the path names another directory and watch that one.
func TestRescanRenewsReplacedWatch(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "d")
	write(t, filepath.Join(d, "old.jsonl"), "{}\n")
	w, rec := driven(t, Options{}, nil, Root{Name: "r", Path: root})

	if err := os.Rename(d, filepath.Join(t.TempDir(), "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	// Lose the events up to the new directory's creation.
	for lost := false; !lost; {
		select {
		case ev := <-w.fsw.Events:
			lost = ev.Name == d && ev.Has(fsnotify.Create)
		case <-time.After(10 * time.Second):
			t.Fatal("no event for the new directory")
		}
	}
	w.rescan("reconcile")
	w.flush()
	if rec.goneCount(filepath.Join(d, "old.jsonl")) != 1 {
		t.Fatalf("gone %q", rec.gone)
	}

	added := filepath.Join(d, "new.jsonl")
	write(t, added, "{}\n")
	deadline := time.After(10 * time.Second)
	for rec.fileCount(added) == 0 {
		select {
		case ev := <-w.fsw.Events:
			w.handleEvent(ev)
			w.flush()
		case err := <-w.fsw.Errors:
			w.handleError(err)
		case <-deadline:
			t.Fatal("no event from the new directory")
		}
	}
	if s := w.Stats(); s.Dirs != 2 {
		t.Fatalf("stats %+v", s)
	}
}
