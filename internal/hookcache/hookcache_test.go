//go:build unix

package hookcache

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/medallionhq/medallion/internal/scope"
)

// repo makes a git working tree named name and returns its folder.
func repo(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func open(t *testing.T) (*Writer, string) { return openWriter(t, false) }

// openWriter opens a Writer keeping a file per scope (byScope) or per cwd.
func openWriter(t *testing.T, byScope bool) (*Writer, string) {
	t.Helper()
	dir := Dir(filepath.Join(t.TempDir(), "m.sock"))
	w, err := Open(dir, byScope)
	if err != nil {
		t.Fatal(err)
	}
	return w, dir
}

func TestPutRead(t *testing.T) {
	w, dir := open(t)
	cwd := repo(t, "muse")
	for _, text := range []string{"This is the current canonical state of repo:muse\n\nline \"two\"\n\n", ""} {
		if _, err := w.Put(Answer{CWD: cwd, Budget: 1200, Nodes: []string{"repo:muse"}, Text: text}); err != nil {
			t.Fatal(err)
		}
		got, ok := Read(dir, cwd, 1200)
		if !ok || got != text {
			t.Errorf("Read = %q, %v; want %q, true", got, ok, text)
		}
	}
	if _, ok := Read(dir, cwd, 1500); ok {
		t.Error("an answer for another budget was read")
	}
	if _, ok := Read(dir, filepath.Join(cwd, "sub"), 1200); ok {
		t.Error("an answer for another cwd was read")
	}
	fi, err := os.Stat(filepath.Join(dir, Name(cwd, 1200)))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("answer file: %v, mode %v; want 0600", err, fi.Mode())
	}
}

// TestPutReadByScope: a daemon without scope rules keeps one file for a
// scope, which answers a hook in any folder the file system gives those
// nodes (a subfolder, a worktree of the repository), and none elsewhere.
func TestPutReadByScope(t *testing.T) {
	w, dir := openWriter(t, true)
	cwd := repo(t, "muse")
	sub := filepath.Join(cwd, "internal", "store")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	// A linked worktree: its .git is a file pointing into the main one's.
	tree := filepath.Join(t.TempDir(), "muse-fix")
	if err := os.MkdirAll(filepath.Join(cwd, ".git", "worktrees", "muse-fix"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mkdir(t, tree), ".git"), []byte("gitdir: "+filepath.Join(cwd, ".git", "worktrees", "muse-fix")+"\n"))
	other := repo(t, "other")
	name, err := w.Put(Answer{CWD: cwd, Budget: 1200, Nodes: []string{"repo:muse"}, Text: "save file"})
	if err != nil {
		t.Fatal(err)
	}
	if name != ScopeName([]string{"repo:muse"}, 1200) || name != w.NameFor(sub, 1200, []string{"repo:muse"}) {
		t.Errorf("the file is %s, not the scope's", name)
	}
	for _, c := range []string{cwd, sub, tree} {
		if got, ok := Read(dir, c, 1200); !ok || got != "save file" {
			t.Errorf("Read(%s) = %q, %v; want the scope's answer", c, got, ok)
		}
	}
	if _, ok := Read(dir, other, 1200); ok {
		t.Error("another repository's folder read the answer")
	}
	if _, ok := Read(dir, sub, 1500); ok {
		t.Error("an answer for another budget was read")
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if a, err := decode(b); err != nil || a.CWD != "" {
		t.Errorf("the scope's file names cwd %q (%v)", a.CWD, err)
	}
}

// mkdir makes dir and returns it.
func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadRefuses: every way a file may be wrong, foreign or outdated
// reads as no file, so the hook asks the daemon; for files kept per cwd
// and per scope.
func TestReadRefuses(t *testing.T) {
	t.Run("by cwd", func(t *testing.T) { testReadRefuses(t, false) })
	t.Run("by scope", func(t *testing.T) { testReadRefuses(t, true) })
}

func testReadRefuses(t *testing.T, byScope bool) {
	cwd := repo(t, "muse")
	good := Answer{CWD: cwd, Budget: 1200, Nodes: []string{"repo:muse"}, Text: "save file"}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		inSub bool // the answer is for cwd/sub, not cwd
		setup func(t *testing.T, w *Writer, dir, file string)
	}{
		{"file readable by others", false, func(t *testing.T, _ *Writer, _, file string) { chmod(t, file, 0o644) }},
		{"folder open to others", false, func(t *testing.T, _ *Writer, dir, _ string) { chmod(t, dir, 0o755) }},
		{"a link to a good file", false, func(t *testing.T, _ *Writer, _, file string) {
			moved := file + ".real"
			if err := os.Rename(file, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, file); err != nil {
				t.Fatal(err)
			}
		}},
		{"the daemon is gone", false, func(t *testing.T, w *Writer, _, file string) {
			a := written(w, good)
			a.Pid = dead.Process.Pid
			write(t, file, a.encode())
		}},
		{"the cwd became a repository of its own", true, func(t *testing.T, _ *Writer, _, _ string) {
			if err := os.Mkdir(filepath.Join(cwd, "sub", ".git"), 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"its pid now another process's", false, func(t *testing.T, w *Writer, _, file string) {
			a := written(w, good)
			a.Pid = 1 // init: alive, but not the daemon that wrote the file
			write(t, file, a.encode())
		}},
		{"another cwd's answer under the same name", false, func(t *testing.T, w *Writer, _, file string) {
			a := written(w, good)
			a.CWD = "/elsewhere"
			write(t, file, a.encode())
		}},
		{"a scope's answer under a cwd's name", false, func(t *testing.T, w *Writer, _, _ string) {
			a := written(w, good)
			a.CWD = ""
			if err := w.Remove(w.NameFor(cwd, 1200, good.Nodes)); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(w.dir, Name(cwd, 1200)), a.encode())
			if !w.byScope {
				return
			}
			// and a cwd's under the scope's name
			a.CWD = cwd
			write(t, filepath.Join(w.dir, ScopeName(good.Nodes, 1200)), a.encode())
		}},
		{"nodes of a config rule", false, func(t *testing.T, w *Writer, _, file string) {
			a := written(w, good)
			a.Nodes = []string{"project:muse"}
			write(t, file, a.encode())
		}},
		{"not our format", false, func(t *testing.T, _ *Writer, _, file string) { write(t, file, []byte("hello\n\nsave file")) }},
		{"cut short", false, func(t *testing.T, _ *Writer, _, file string) {
			b, _ := os.ReadFile(file)
			write(t, file, b[:len(magic)+10])
		}},
		{"too large", false, func(t *testing.T, w *Writer, _, file string) {
			a := written(w, good)
			a.Text = string(make([]byte, maxFile))
			write(t, file, a.encode())
		}},
		{"removed", false, func(t *testing.T, w *Writer, _, _ string) {
			if err := w.Remove(w.NameFor(cwd, 1200, good.Nodes)); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, dir := openWriter(t, byScope)
			c := cwd
			if tt.inSub {
				c = filepath.Join(cwd, "sub")
				if err := os.MkdirAll(c, 0o700); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(c) })
			}
			a := good
			a.CWD = c
			if _, err := w.Put(a); err != nil {
				t.Fatal(err)
			}
			if _, ok := Read(dir, c, 1200); !ok {
				t.Fatal("the good answer was not read")
			}
			tt.setup(t, w, dir, filepath.Join(dir, w.NameFor(c, 1200, good.Nodes)))
			if got, ok := Read(dir, c, 1200); ok {
				t.Errorf("read %q", got)
			}
		})
	}
}

// written is a as w writes it: with w's pid and start, and no cwd when w
// keeps a file per scope.
func written(w *Writer, a Answer) Answer {
	a.Pid, a.Start = w.pid, w.start
	if w.byScope {
		a.CWD = ""
	}
	return a
}

// TestReadRefusesAnotherUsersFile: a file of another user, in a folder
// that is ours, is not read (needs root to make one).
func TestReadRefusesAnotherUsersFile(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	w, dir := open(t)
	cwd := repo(t, "muse")
	name, err := w.Put(Answer{CWD: cwd, Budget: 1200, Nodes: []string{"repo:muse"}, Text: "save file"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(dir, name), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if got, ok := Read(dir, cwd, 1200); ok {
		t.Errorf("read another user's file: %q", got)
	}
}

// TestOpenClearsAndCloseRemoves: a daemon starts with no answer of the one
// before it, and leaves none behind.
func TestOpenClearsAndCloseRemoves(t *testing.T) {
	w, dir := open(t)
	cwd := repo(t, "muse")
	if _, err := w.Put(Answer{CWD: cwd, Budget: 1200, Nodes: []string{"repo:muse"}, Text: "old"}); err != nil {
		t.Fatal(err)
	}
	chmod(t, dir, 0o755) // a folder left open to others is closed again
	w2, err := Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Open left %d files", len(entries))
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("folder: %v, mode %v; want 0700", err, fi.Mode())
	}
	if _, err := w2.Put(Answer{CWD: cwd, Budget: 1200, Nodes: []string{"repo:muse"}, Text: "new"}); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left the folder: %v", err)
	}
}

func TestKeepable(t *testing.T) {
	cwd := repo(t, "muse")
	if !Keepable(filepath.Join(cwd, "a", "b"), []string{"repo:muse"}) {
		t.Error("a folder inside the repository is not keepable")
	}
	if Keepable(cwd, []string{"repo:other"}) || Keepable(cwd, nil) {
		t.Error("nodes the file system does not give are keepable")
	}
	if want := scope.Derive(cwd); !slices.Equal(want, []string{"repo:muse"}) {
		t.Errorf("Derive = %q", want)
	}
}

// FuzzDecode: no file makes decode panic, and what it accepts encodes
// back to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(Answer{Pid: 7, CWD: "/a b/\"c\"\n", Budget: 1, Nodes: []string{"repo:x", "dir: y"}, Text: "t\n\nu"}.encode())
	f.Add([]byte(magic + "pid 1\nbudget 2\ncwd \"/\"\nnodes\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := decode(b)
		if err != nil {
			return
		}
		if again, err := decode(a.encode()); err != nil || again.CWD != a.CWD || !slices.Equal(again.Nodes, a.Nodes) || again.Text != a.Text {
			t.Errorf("decode(encode(%+v)) = %+v, %v", a, again, err)
		}
	})
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFailedRemovalIsNotRead: a file the daemon cannot remove (its folder
// made read-only) is emptied, and a folder it cannot empty is opened to
// others, which every hook refuses: no hook reads the answer a write
// dropped. Root removes whatever the modes say, so it needs another user.
func TestFailedRemovalIsNotRead(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root ignores the folder's mode")
	}
	w, dir := open(t)
	cwd := repo(t, "muse")
	name, err := w.Put(Answer{CWD: cwd, Budget: 1200, Nodes: []string{"repo:muse"}, Text: "old"})
	if err != nil {
		t.Fatal(err)
	}
	chmod(t, dir, 0o500)
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if err := w.Remove(name); err != nil {
		t.Fatalf("Remove: %v (the file could be emptied)", err)
	}
	if got, ok := Read(dir, cwd, 1200); ok {
		t.Errorf("a file the daemon could not remove is read: %q", got)
	}

	chmod(t, dir, 0o700)
	if _, err = w.Put(Answer{CWD: cwd, Budget: 1200, Nodes: []string{"repo:muse"}, Text: "old"}); err != nil {
		t.Fatal(err)
	}
	chmod(t, dir, 0o500)
	if err := w.Close(); err == nil {
		t.Fatal("Close emptied a read-only folder")
	}
	if got, ok := Read(dir, cwd, 1200); ok {
		t.Errorf("after a failed Close the file is read: %q", got)
	}
}
