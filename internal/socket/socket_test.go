//go:build unix

package socket

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tempDir returns a short directory for sockets: t.TempDir() paths can pass
// the ~104-byte limit of a socket path.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "med")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func listen(t *testing.T, path string, opts ...Option) *Listener {
	t.Helper()
	ln, err := Listen(path, opts...)
	if err != nil {
		t.Fatalf("Listen(%s): %v", path, err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.(*Listener)
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// roundTrip dials path, lets ln accept the connection and checks that bytes
// written by the dialer arrive. Connections that close without a word (the
// probes of a Listen that found the socket live) are skipped.
func roundTrip(t *testing.T, ln net.Listener, path string) {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		for {
			s, err := ln.Accept()
			if err != nil {
				got <- err
				return
			}
			buf := make([]byte, 2)
			_, err = io.ReadFull(s, buf)
			s.Close()
			if err == io.EOF {
				continue // a probe
			}
			if err == nil && string(buf) != "hi" {
				err = fmt.Errorf("read %q, want \"hi\"", buf)
			}
			got <- err
			return
		}
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("accept and read: %v", err)
	}
}

func TestListenFresh(t *testing.T) {
	dir := filepath.Join(tempDir(t), "run", "medallion")
	path := filepath.Join(dir, "m.sock")
	ln := listen(t, path)

	if got := mode(t, dir).Perm(); got != 0o700 {
		t.Errorf("dir mode = %v, want 0700", got)
	}
	m := mode(t, path)
	if m.Type() != fs.ModeSocket || m.Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket with 0600", m)
	}
	if got := ln.Addr().String(); got != path {
		t.Errorf("Addr = %q, want %q", got, path)
	}
	// Our own uid is let through the peer-credential check.
	roundTrip(t, ln, path)
	if n := ln.Rejected(); n != 0 {
		t.Errorf("Rejected = %d, want 0", n)
	}

	if err := ln.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket file after Close: %v, want it removed", err)
	}
	if err := ln.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
	// The path is free again.
	listen(t, path)
}

func TestListenAlreadyRunning(t *testing.T) {
	path := filepath.Join(tempDir(t), "m.sock")
	first := listen(t, path)

	_, err := Listen(path)
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Listen: %v, want ErrAlreadyRunning", err)
	}
	if !strings.Contains(err.Error(), "socket "+path+" answers") {
		t.Errorf("error %q does not say the socket answers", err)
	}
	// The failed attempt must leave the live daemon's socket alone.
	roundTrip(t, first, path)
}

func TestListenLockHeld(t *testing.T) {
	// A daemon that holds the lock but has not bound its socket yet (or is
	// removing it) is running all the same.
	path := filepath.Join(tempDir(t), "m.sock")
	lock, err := lockFile(path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()

	_, err = Listen(path)
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("Listen: %v, want ErrAlreadyRunning", err)
	}
	if _, serr := os.Lstat(path); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("Listen created %s despite the held lock", path)
	}
}

func TestListenReplacesStaleSocket(t *testing.T) {
	path := filepath.Join(tempDir(t), "m.sock")
	// A crashed daemon leaves its socket file behind with nobody listening.
	old, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	old.SetUnlinkOnClose(false)
	old.Close()
	if m := mode(t, path); m.Type() != fs.ModeSocket {
		t.Fatalf("stale socket has mode %v", m)
	}
	if _, err := net.Dial("unix", path); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial stale socket: %v, want ECONNREFUSED", err)
	}

	// Listen replaces it with a live socket (the inode number may well be
	// reused, so liveness is the proof).
	ln := listen(t, path)
	roundTrip(t, ln, path)
}

func TestListenRefusesNonSocket(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		check func(t *testing.T, path string)
	}{
		{
			name: "regular file",
			setup: func(t *testing.T, path string) {
				if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, path string) {
				b, err := os.ReadFile(path)
				if err != nil || string(b) != "precious" {
					t.Errorf("file after Listen: %q, %v; want it untouched", b, err)
				}
			},
		},
		{
			name: "directory",
			setup: func(t *testing.T, path string) {
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(path, "f"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, path string) {
				if _, err := os.Stat(filepath.Join(path, "f")); err != nil {
					t.Errorf("directory content after Listen: %v", err)
				}
			},
		},
		{
			name: "symlink",
			setup: func(t *testing.T, path string) {
				if err := os.Symlink("/dev/null", path); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, path string) {
				if target, err := os.Readlink(path); err != nil || target != "/dev/null" {
					t.Errorf("symlink after Listen: %q, %v", target, err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(tempDir(t), "m.sock")
			tt.setup(t, path)
			ln, err := Listen(path)
			if err == nil {
				ln.Close()
				t.Fatal("Listen succeeded, want an error")
			}
			want := path + " exists and is not a socket; refusing to replace it"
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q, want it to contain %q", err, want)
			}
			if errors.Is(err, ErrAlreadyRunning) {
				t.Errorf("error %q wraps ErrAlreadyRunning", err)
			}
			tt.check(t, path)
		})
	}
}

func TestListenDirectory(t *testing.T) {
	tests := []struct {
		name     string
		perm     fs.FileMode // applied with chmod, so the umask does not interfere
		other    bool        // the directory holds another file
		answers  bool        // the directory holds a daemon's hook answers
		wantErr  string
		wantPerm fs.FileMode
	}{
		{name: "private", perm: 0o700, wantPerm: 0o700},
		{name: "dedicated but open", perm: 0o755, wantPerm: 0o700},
		{name: "dedicated and world writable", perm: 0o777, wantPerm: 0o700},
		{name: "dedicated, with a crashed daemon's hook answers", perm: 0o777, answers: true, wantPerm: 0o700},
		{name: "shared, read-only for others", perm: 0o755, other: true, wantPerm: 0o755},
		{name: "shared, group writable", perm: 0o775, other: true, wantErr: "can be written by other users", wantPerm: 0o775},
		{name: "sticky", perm: 0o777 | fs.ModeSticky, wantErr: "can be written by other users", wantPerm: 0o777},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(tempDir(t), "d")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.other {
				if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.answers {
				if err := os.Mkdir(filepath.Join(dir, "m.sock.hook"), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, tt.perm); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "m.sock")
			ln, err := Listen(path)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Listen: %v", err)
				}
				ln.Close()
			} else {
				if err == nil {
					ln.Close()
					t.Fatalf("Listen succeeded, want error containing %q", tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Listen: %v, want error containing %q", err, tt.wantErr)
				}
			}
			if got := mode(t, dir).Perm(); got != tt.wantPerm {
				t.Errorf("dir mode = %v, want %v", got, tt.wantPerm)
			}
		})
	}
}

func TestListenDirectoryOfAnotherUser(t *testing.T) {
	// As root, give a directory away; as anyone else, root's / will do.
	dir, owner := "/", "uid 0"
	if os.Geteuid() == 0 {
		dir, owner = filepath.Join(tempDir(t), "d"), "uid 65534"
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := Listen(filepath.Join(dir, "medallion-test.sock"))
	if err == nil {
		ln.Close()
		t.Fatal("Listen succeeded in another user's directory")
	}
	if !strings.Contains(err.Error(), "belongs to "+owner) {
		t.Fatalf("Listen: %v, want an error naming the owner (%s)", err, owner)
	}
}

func TestListenErrors(t *testing.T) {
	tmp := tempDir(t)
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"path too long", filepath.Join(tmp, strings.Repeat("x", 120)+".sock"), "longer than the"},
		{"parent is a file", filepath.Join(file, "m.sock"), "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := Listen(tt.path)
			if err == nil {
				ln.Close()
				t.Fatal("Listen succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Listen: %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestCloseKeepsForeignFile(t *testing.T) {
	// If someone replaced our socket file, Close must not delete theirs.
	path := filepath.Join(tempDir(t), "m.sock")
	ln := listen(t, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ln.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "theirs" {
		t.Errorf("file after Close: %q, %v; want it kept", b, err)
	}
}

func TestListenLongestPath(t *testing.T) {
	dir := tempDir(t)
	name := strings.Repeat("x", maxPathLen-len(dir)-1)
	path := filepath.Join(dir, name)
	if len(path) != maxPathLen {
		t.Fatalf("test path is %d bytes, want %d", len(path), maxPathLen)
	}
	ln := listen(t, path)
	roundTrip(t, ln, path)
}

// TestCloseLeavesNoLockFile: a clean stop leaves nothing at the socket's
// path, lock included, and the next daemon listens there as before.
func TestCloseLeavesNoLockFile(t *testing.T) {
	path := filepath.Join(tempDir(t), "m.sock")
	for range 2 {
		ln, err := Listen(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + ".lock"); err != nil {
			t.Fatalf("no lock while listening: %v", err)
		}
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + ".lock"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("lock file after Close: %v", err)
		}
	}
}
