// Package watch reports which transcript files under a set of folders may
// have new data, using fsnotify on every folder of each tree plus periodic
// rescans.
//
// fsnotify watches one directory at a time and reports only what happens
// after a watch is added, so the Watcher adds a watch to every directory
// under each root and lists a directory right after watching it: a file
// written before the watch existed is then found by the listing, one
// written after by an event (or by both, which is harmless: the caller
// reads a file to its end whatever told it to). Because events can still be
// lost — the kernel queue can overflow, watches can run out — a full rescan
// follows every overflow and runs periodically as a safety net.
//
// The Watcher only says "look at this file" and "this file is gone"; the
// caller tails the files (see package tail).
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"
)

// DefaultReconcile is how often a full rescan runs by default.
const DefaultReconcile = 5 * time.Minute

// DefaultInclude is the include pattern of a Root that names none.
const DefaultInclude = "**/*.jsonl"

// maxErrors bounds Stats.Errors.
const maxErrors = 10

// drainLimit bounds how many queued events are handled before the pending
// onFile calls are made, so a long burst cannot delay them indefinitely.
const drainLimit = 1024

// Root is one folder to watch.
type Root struct {
	// Name is the name of the watch block the root comes from.
	Name string
	// Path is the folder; it need not exist yet.
	Path string
	// Include and Exclude are glob patterns matched against a file's path
	// relative to Path, with "/" separators: path.Match per segment, and
	// "**" for any number of segments. A file is reported when it matches
	// an Include pattern (default DefaultInclude) and no Exclude pattern. A
	// directory matching an Exclude pattern is neither watched nor listed.
	Include, Exclude []string
}

// Options tunes a Watcher.
type Options struct {
	// Logger receives the watcher's logs; it is Named("watcher").
	Logger hclog.Logger
	// Reconcile is the interval of the periodic full rescan (default
	// DefaultReconcile). The rescan reports every file again, retries
	// folders that could not be watched and finds roots that appeared.
	Reconcile time.Duration
}

// RootStats describes one root in Stats.
type RootStats struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	Files  int    `json:"files"`
}

// Stats is a snapshot of what a Watcher watches.
type Stats struct {
	// Dirs counts directories with a watch on them.
	Dirs int `json:"dirs"`
	// Files counts matching files currently known.
	Files int         `json:"files"`
	Roots []RootStats `json:"roots"`
	// Overflows counts kernel event-queue overflows, each followed by a
	// full rescan; Rescans counts full rescans of any cause.
	Overflows int `json:"overflows"`
	Rescans   int `json:"rescans"`
	// Errors holds recent problems a user can act on, such as the inotify
	// watch limit. It is cleared at each full rescan and refilled by it if
	// the problem persists.
	Errors []string `json:"errors,omitempty"`
}

// root is a Root with its compiled patterns and state.
type root struct {
	Root
	include, exclude []pattern
	exists           bool
	// parent is the nearest existing ancestor watched while the root does
	// not exist, so that its creation is noticed at once.
	parent string
	files  int
}

// dir is a directory in a root's tree.
type dir struct {
	root    int
	watched bool        // false while adding the watch fails (watch limit)
	fi      os.FileInfo // the directory the watch was put on
}

// Watcher watches the trees under a set of roots. Create it with New and
// call Run once.
type Watcher struct {
	roots     []root
	log       hclog.Logger
	reconcile time.Duration
	running   atomic.Bool

	// Fields below are owned by the goroutine in Run (or by a test that
	// drives the handlers directly without Run).
	fsw        *fsnotify.Watcher
	add        func(dir string) error // fsw.Add; tests inject failures
	onFile     func(Root, string)
	onGone     func(Root, string)
	dirs       map[string]*dir
	nWatched   int
	files      map[string]int // matching file → root index
	pending    []string       // onFile calls to make, in order
	pendingSet map[string]struct{}
	overflows  int
	rescans    int
	errs       []string

	mu    sync.Mutex
	stats Stats // published copy for Stats
}

// New checks the roots and returns a Watcher for them. Roots must not
// overlap: a file under two roots would be read twice, maybe in two formats.
func New(roots []Root, opts Options) (*Watcher, error) {
	logger := opts.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	w := &Watcher{
		log:        logger.Named("watcher"),
		reconcile:  opts.Reconcile,
		dirs:       make(map[string]*dir),
		files:      make(map[string]int),
		pendingSet: make(map[string]struct{}),
	}
	if w.reconcile <= 0 {
		w.reconcile = DefaultReconcile
	}
	for _, r := range roots {
		if r.Path == "" {
			return nil, fmt.Errorf("watch %q: empty path", r.Name)
		}
		abs, err := filepath.Abs(r.Path)
		if err != nil {
			return nil, fmt.Errorf("watch %q: %w", r.Name, err)
		}
		r.Path = abs
		in := r.Include
		if len(in) == 0 {
			in = []string{DefaultInclude}
		}
		cr := root{Root: r}
		for _, p := range in {
			c, err := compile(p)
			if err != nil {
				return nil, fmt.Errorf("watch %q include: %w", r.Name, err)
			}
			cr.include = append(cr.include, c)
		}
		for _, p := range r.Exclude {
			c, err := compile(p)
			if err != nil {
				return nil, fmt.Errorf("watch %q exclude: %w", r.Name, err)
			}
			cr.exclude = append(cr.exclude, c)
		}
		for _, o := range w.roots {
			if within(abs, o.Path) || within(o.Path, abs) {
				return nil, fmt.Errorf("watch %q (%s) overlaps watch %q (%s)", r.Name, abs, o.Name, o.Path)
			}
		}
		w.roots = append(w.roots, cr)
	}
	w.publish()
	return w, nil
}

// Run watches until ctx is done, then returns nil. For every file under a
// root that matches its patterns it calls onFile(root, path) when the file
// may have new data: for every existing file at start, on creation, writes
// and renames into a root, for the files of a directory that appears, and
// for every file again at each full rescan (after an event overflow and
// every Options.Reconcile). It calls onGone(root, path) when a reported
// file is removed or renamed away; a rename within the roots gives onGone
// for the old path and onFile for the new one.
//
// Bursts of events for one file may be collapsed into one onFile call, but
// an onFile call always follows the last event. Callbacks are made from
// Run's goroutine, one at a time, and must return quickly.
func (w *Watcher) Run(ctx context.Context, onFile, onGone func(root Root, path string)) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("watcher already running")
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		if errors.Is(err, syscall.EMFILE) {
			return fmt.Errorf("start file watcher: %s", instanceLimitMessage())
		}
		return fmt.Errorf("start file watcher: %w", err)
	}
	defer fsw.Close()
	w.start(fsw, onFile, onGone)

	tick := time.NewTicker(w.reconcile)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return errors.New("file watcher stopped")
			}
			w.handleEvent(ev)
		case err, ok := <-fsw.Errors:
			if !ok {
				return errors.New("file watcher stopped")
			}
			w.handleError(err)
		case <-tick.C:
			w.rescan("reconcile")
		}
		w.drain()
		w.flush()
		w.publish()
	}
}

// Stats returns a snapshot of what the watcher watches. It is safe to call
// from any goroutine, including from the callbacks.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Roots = slices.Clone(s.Roots)
	s.Errors = slices.Clone(s.Errors)
	return s
}

// start sets up the watches and makes the catch-up scan.
func (w *Watcher) start(fsw *fsnotify.Watcher, onFile, onGone func(Root, string)) {
	nop := func(Root, string) {}
	if onFile == nil {
		onFile = nop
	}
	if onGone == nil {
		onGone = nop
	}
	w.fsw, w.onFile, w.onGone = fsw, onFile, onGone
	if w.add == nil {
		w.add = fsw.Add
	}
	for i := range w.roots {
		w.resolve(i, nil)
	}
	w.flush()
	w.publish()
}

// drain handles the events already queued without waiting for more, so
// that a burst is handled before the resulting onFile calls are made.
func (w *Watcher) drain() {
	for range drainLimit {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.handleEvent(ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.handleError(err)
		default:
			return
		}
	}
}

// handleEvent updates the watches and the known files for one event.
func (w *Watcher) handleEvent(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)

	// A component of a missing root's path may have appeared (or the
	// watched ancestor may have gone): look again.
	for i := range w.roots {
		r := &w.roots[i]
		if !r.exists && r.parent != "" && within(r.Path, name) {
			if name == r.parent && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
				// The kernel dropped that watch. Forget it even if the
				// path exists again: that is a new directory.
				w.dropParent(i)
			}
			w.resolve(i, nil)
		}
	}

	i := w.owner(name)
	if i < 0 {
		return
	}
	if name == w.roots[i].Path {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.rootGone(i, nil)
		}
		return
	}
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		// For a rename this is the old name; the new one, if it is under
		// a root, arrives as a Create.
		w.removed(name)
	case ev.Has(fsnotify.Create):
		w.created(name, i)
	case ev.Has(fsnotify.Write):
		// Only files report writes; no Lstat needed to tell.
		w.sawFile(name, i)
	case ev.Has(fsnotify.Chmod):
		// Ignored, except that the deletion of a file still held open
		// can show up as a change of its link count only.
		if _, ok := w.files[name]; ok {
			if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
				w.gone(name)
			}
		}
	}
}

// handleError reacts to an error from fsnotify: an overflow means events
// were lost, so everything is rescanned.
func (w *Watcher) handleError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.overflows++
		w.log.Warn("file event queue overflowed; rescanning everything")
		w.rescan("overflow")
		return
	}
	w.log.Warn("file watcher error", "error", err)
	w.recordError("file watcher: " + err.Error())
}

// rescan lists every root again: it reports every matching file, drops
// files and directories that vanished without an event, retries watches
// that failed and picks up roots that appeared or went away.
func (w *Watcher) rescan(reason string) {
	w.rescans++
	w.errs = w.errs[:0]
	seen := make(map[string]bool, len(w.files)+len(w.dirs))
	for i := range w.roots {
		r := &w.roots[i]
		if !r.exists {
			// Watch the ancestor afresh: the one watched may have been
			// replaced or moved without an event that says so.
			w.dropParent(i)
			w.resolve(i, seen)
			continue
		}
		if fi, err := os.Stat(r.Path); err != nil || !fi.IsDir() {
			w.rootGone(i, seen)
			continue
		}
		w.walk(r.Path, i, seen)
	}
	var vanished []string
	for p := range w.files {
		if !seen[p] {
			vanished = append(vanished, p)
		}
	}
	slices.Sort(vanished)
	for _, p := range vanished {
		w.gone(p)
	}
	for p := range w.dirs {
		if !seen[p] {
			w.forgetDir(p)
		}
	}
	w.log.Debug("rescan done", "reason", reason, "dirs", w.nWatched, "files", len(w.files))
}

// resolve makes root i's tree watched if the root exists, or else watches
// its nearest existing ancestor to notice its creation.
func (w *Watcher) resolve(i int, seen map[string]bool) {
	r := &w.roots[i]
	// Bounded: each pass either finds the root or watches a deeper
	// ancestor; a path flapping faster than that is left to the rescan.
	for range 64 {
		fi, err := os.Stat(r.Path)
		if err == nil && fi.IsDir() {
			w.dropParent(i)
			r.exists = true
			w.log.Info("watching folder", "watch", r.Name, "path", r.Path)
			w.walk(r.Path, i, seen)
			return
		}
		if err == nil {
			w.recordError(fmt.Sprintf("watch %q: %s is not a directory", r.Name, r.Path))
		}
		anc := nearestDir(filepath.Dir(r.Path))
		if anc == r.parent {
			return
		}
		w.dropParent(i)
		if err := w.add(anc); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // anc went away meanwhile: look further up
			}
			w.addFailed(anc, err)
			return
		}
		r.parent = anc
		w.log.Info("watched folder does not exist yet; waiting for it", "watch", r.Name, "path", r.Path, "parent", anc)
		// Look again: a component may have been created before the
		// watch on anc was in place.
	}
}

// dropParent removes root i's ancestor watch unless something else needs it.
func (w *Watcher) dropParent(i int) {
	p := w.roots[i].parent
	if p == "" {
		return
	}
	w.roots[i].parent = ""
	w.unwatch(p)
}

// rootGone forgets root i's tree after the root itself went away, and
// waits for it to come back.
func (w *Watcher) rootGone(i int, seen map[string]bool) {
	r := &w.roots[i]
	w.removed(r.Path)
	if r.exists {
		w.log.Warn("watched folder went away; waiting for it", "watch", r.Name, "path", r.Path)
	}
	r.exists = false
	w.resolve(i, seen)
}

// walk watches dir and every directory under it, and reports the matching
// files; seen, when not nil, collects every path met.
func (w *Watcher) walk(path string, i int, seen map[string]bool) {
	r := &w.roots[i]
	if path != r.Path && matchAny(r.exclude, w.rel(i, path)) {
		return
	}
	// Watch before listing: a file created in between is then reported
	// by the listing, the event, or both; never by neither.
	w.watchDir(path, i, seen != nil)
	if seen != nil {
		seen[path] = true
	}
	entries, err := os.ReadDir(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.log.Warn("cannot list folder", "path", path, "error", err)
		w.recordError(fmt.Sprintf("cannot list %s: %v", path, err))
	}
	// ReadDir returns what it read before an error; use it.
	for _, e := range entries {
		p := filepath.Join(path, e.Name())
		switch t := e.Type(); {
		case t.IsDir():
			w.walk(p, i, seen)
		case t.IsRegular():
			if w.sawFile(p, i) && seen != nil {
				seen[p] = true
			}
		}
		// Symbolic links are not followed: a link to a directory could
		// make a loop, and writes to a linked file's target would not
		// produce events here anyway.
	}
}

// watchDir adds path to root i's tree and puts a watch on it. With verify,
// an existing watch is renewed if path now names another directory: a
// watch follows the directory it was put on, and the events saying it was
// replaced may have been lost.
func (w *Watcher) watchDir(path string, i int, verify bool) {
	d, ok := w.dirs[path]
	if !ok {
		d = &dir{root: i}
		w.dirs[path] = d
	}
	if d.watched && !verify {
		return
	}
	// Stat before adding: should path be replaced in between, the next
	// verification sees a mismatch and renews the watch.
	fi, err := os.Stat(path)
	if err != nil {
		if d.watched {
			d.watched = false
			w.nWatched--
			w.unwatch(path)
		}
		delete(w.dirs, path) // gone already; its removal event follows
		return
	}
	if d.watched {
		if os.SameFile(fi, d.fi) {
			return
		}
		d.watched = false
		w.nWatched--
		w.unwatch(path)
	}
	if err := w.add(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			delete(w.dirs, path) // gone already; its removal event follows
			return
		}
		w.addFailed(path, err)
		return
	}
	d.watched, d.fi = true, fi
	w.nWatched++
}

// addFailed records why a watch could not be added. The directory is still
// listed, and the periodic rescan both finds its new files and retries.
func (w *Watcher) addFailed(path string, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
		msg := watchLimitMessage()
		if w.recordError(msg) {
			w.log.Warn("cannot watch more folders; new files in unwatched folders are found by the periodic rescan",
				"path", path, "error", err, "hint", msg, "rescan_every", w.reconcile)
		}
		return
	}
	w.log.Warn("cannot watch folder", "path", path, "error", err)
	w.recordError(fmt.Sprintf("cannot watch %s: %v", path, err))
}

// created handles a new name under root i: a directory is walked (files
// written into it before its watch was added are found that way), a
// regular file is reported.
func (w *Watcher) created(path string, i int) {
	fi, err := os.Lstat(path)
	if err != nil {
		return // gone again; its removal event follows
	}
	switch {
	case fi.IsDir():
		w.walk(path, i, nil)
	case fi.Mode().IsRegular():
		w.sawFile(path, i)
	}
}

// sawFile reports path if it matches root i's patterns.
func (w *Watcher) sawFile(path string, i int) bool {
	if _, ok := w.files[path]; !ok {
		rel := w.rel(i, path)
		r := &w.roots[i]
		if !matchAny(r.include, rel) || matchAny(r.exclude, rel) {
			return false
		}
		w.files[path] = i
		r.files++
	}
	w.queue(path)
	return true
}

// removed handles the removal or renaming away of path, a file or a
// directory.
func (w *Watcher) removed(path string) {
	if _, ok := w.files[path]; ok {
		w.gone(path)
		return
	}
	if _, ok := w.dirs[path]; !ok && !w.isRootPath(path) {
		return
	}
	var files []string
	for p := range w.files {
		if within(p, path) {
			files = append(files, p)
		}
	}
	slices.Sort(files)
	for _, p := range files {
		w.gone(p)
	}
	for p := range w.dirs {
		if within(p, path) {
			// Remove the watch now even though the kernel dropped it on
			// deletion: after a rename it still follows the directory,
			// and must be gone before the new name is watched.
			w.forgetDir(p)
		}
	}
}

// gone reports that a known file went away.
func (w *Watcher) gone(path string) {
	i, ok := w.files[path]
	if !ok {
		return
	}
	delete(w.files, path)
	delete(w.pendingSet, path)
	w.roots[i].files--
	w.onGone(w.roots[i].Root, path)
}

// forgetDir drops a directory from the tree and removes its watch.
func (w *Watcher) forgetDir(path string) {
	d, ok := w.dirs[path]
	if !ok {
		return
	}
	delete(w.dirs, path)
	if d.watched {
		w.nWatched--
		w.unwatch(path)
	}
}

// unwatch removes the watch on path unless the tree or a missing root's
// ancestor watch still needs it. Errors are expected (the kernel drops the
// watch of a deleted directory by itself) and ignored.
func (w *Watcher) unwatch(path string) {
	if d, ok := w.dirs[path]; ok && d.watched {
		return
	}
	for _, r := range w.roots {
		if r.parent == path {
			return
		}
	}
	_ = w.fsw.Remove(path)
}

// queue schedules an onFile call for path.
func (w *Watcher) queue(path string) {
	if _, ok := w.pendingSet[path]; ok {
		return
	}
	w.pendingSet[path] = struct{}{}
	w.pending = append(w.pending, path)
}

// flush makes the scheduled onFile calls, in the order first scheduled.
func (w *Watcher) flush() {
	for _, p := range w.pending {
		if _, ok := w.pendingSet[p]; !ok {
			continue // gone meanwhile, or already delivered
		}
		delete(w.pendingSet, p)
		i, ok := w.files[p]
		if !ok {
			continue
		}
		w.onFile(w.roots[i].Root, p)
	}
	w.pending = w.pending[:0]
}

// publish copies the counters for Stats.
func (w *Watcher) publish() {
	s := Stats{
		Dirs:      w.nWatched,
		Files:     len(w.files),
		Overflows: w.overflows,
		Rescans:   w.rescans,
		Errors:    slices.Clone(w.errs),
	}
	for _, r := range w.roots {
		s.Roots = append(s.Roots, RootStats{Name: r.Name, Path: r.Path, Exists: r.exists, Files: r.files})
	}
	w.mu.Lock()
	w.stats = s
	w.mu.Unlock()
}

// recordError adds msg to the recent errors unless it is there already,
// and reports whether it was added.
func (w *Watcher) recordError(msg string) bool {
	if slices.Contains(w.errs, msg) {
		return false
	}
	if len(w.errs) == maxErrors {
		w.errs = slices.Delete(w.errs, 0, 1)
	}
	w.errs = append(w.errs, msg)
	return true
}

// owner returns the index of the existing root whose tree holds path, or -1.
func (w *Watcher) owner(path string) int {
	for i, r := range w.roots {
		if r.exists && within(path, r.Path) {
			return i
		}
	}
	return -1
}

func (w *Watcher) isRootPath(path string) bool {
	for _, r := range w.roots {
		if r.Path == path {
			return true
		}
	}
	return false
}

// rel returns path relative to root i, split into segments.
func (w *Watcher) rel(i int, path string) []string {
	rel, err := filepath.Rel(w.roots[i].Path, path)
	if err != nil {
		return nil
	}
	return strings.Split(filepath.ToSlash(rel), "/")
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasPrefix(path, dir) {
		return false
	}
	return dir == string(filepath.Separator) || path[len(dir)] == filepath.Separator
}

// nearestDir returns path or its nearest ancestor that is an existing
// directory.
func nearestDir(path string) string {
	for {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return path
		}
		parent := filepath.Dir(path)
		if parent == path {
			return path
		}
		path = parent
	}
}

// watchLimitMessage tells the user how to lift the limit on watches.
func watchLimitMessage() string {
	if runtime.GOOS != "linux" {
		return "too many watched folders: raise the open-file limit (ulimit -n) of medalliond"
	}
	return fmt.Sprintf("inotify watch limit reached (fs.inotify.max_user_watches=%s): raise it with `sudo sysctl fs.inotify.max_user_watches=524288`",
		procValue("/proc/sys/fs/inotify/max_user_watches"))
}

// instanceLimitMessage tells the user how to lift the limit on inotify
// instances, each program watching files holding one or more.
func instanceLimitMessage() string {
	if runtime.GOOS != "linux" {
		return "too many open files: raise the open-file limit (ulimit -n) of medalliond"
	}
	return fmt.Sprintf("inotify instance limit reached (fs.inotify.max_user_instances=%s): raise it with `sudo sysctl fs.inotify.max_user_instances=1024`",
		procValue("/proc/sys/fs/inotify/max_user_instances"))
}

func procValue(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
