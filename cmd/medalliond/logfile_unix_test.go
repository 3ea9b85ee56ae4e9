//go:build unix

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestLogFileRotates: a daemon logging to a file (run --log-file) moves it
// to FILE.1 each time it has written the limit and goes on in a new FILE,
// losing no line in between; what is written straight to stderr lands in
// the current file. The logging runs in a child process, whose stdout and
// stderr the file takes over.
func TestLogFileRotates(t *testing.T) {
	const limit, lines = 1000, 60
	if path := os.Getenv("MEDALLIOND_LOG_FILE_CHILD"); path != "" {
		l, err := openLogFile(path, limit)
		if err != nil {
			os.Exit(3) // stderr may already be the file: the code says it
		}
		logger := hclog.New(&hclog.LoggerOptions{Name: "medalliond", Output: l})
		for i := range lines {
			logger.Info("checkpoint stored", "n", i, "pad", strings.Repeat("x", 40))
		}
		fmt.Fprintln(os.Stderr, "written straight to stderr")
		fmt.Println("written to stdout")
		os.Exit(0)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "medalliond.log")
	if err := os.WriteFile(path, []byte("a line of an earlier run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogFileRotates$")
	cmd.Env = append(os.Environ(), "MEDALLIOND_LOG_FILE_CHILD="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if len(out) > 0 {
		t.Errorf("the child wrote to its original stdout or stderr, not the log file:\n%s", out)
	}
	read := func(p string) []string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > limit+200 { // the limit and the line that passed it
			t.Errorf("%s has %d bytes, over the limit of %d by more than a line", p, len(b), limit)
		}
		var ls []string
		for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan(); {
			ls = append(ls, sc.Text())
		}
		return ls
	}
	old, cur := read(path+".1"), read(path)
	if n := len(cur); n < 2 || cur[n-2] != "written straight to stderr" || cur[n-1] != "written to stdout" {
		t.Errorf("the current file does not end with what was written to stderr and stdout:\n%s", strings.Join(cur, "\n"))
	}
	// The two files hold the last lines logged, in order and without a gap.
	var numbers []int
	for _, l := range append(old, cur...) {
		_, n, ok := strings.Cut(l, " n=")
		if !ok {
			continue
		}
		i, err := strconv.Atoi(strings.Fields(n)[0])
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		numbers = append(numbers, i)
	}
	if len(numbers) < 10 || numbers[len(numbers)-1] != lines-1 {
		t.Fatalf("logged lines kept: %v, want the last ones up to %d", numbers, lines-1)
	}
	for i := 1; i < len(numbers); i++ {
		if numbers[i] != numbers[i-1]+1 {
			t.Errorf("logged lines kept: %v, a gap after %d", numbers, numbers[i-1])
		}
	}
	if strings.Contains(strings.Join(old, "\n"), "earlier run") {
		t.Error("the earlier run's line is still there after several moves")
	}
}
