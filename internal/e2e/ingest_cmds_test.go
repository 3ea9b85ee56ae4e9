package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdCpTree: cptree SRC DST — copies the folder SRC (relative to this
// package's folder, e.g. ../../testdata/transcripts) to DST (relative to
// $WORK), creating DST's files after DST's folders, as an agent would.
func cmdCpTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cptree SRC DST")
	}
	src, dst := args[0], ts.MkAbs(args[1])
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	ts.Check(err)
}

// cmdWaitCtl: waitctl PATTERN ARGS... — runs `medallionctl ARGS...` until
// its output matches the regular expression PATTERN, for up to 20 s, and
// leaves the last output as the command's stdout.
func cmdWaitCtl(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: waitctl PATTERN ARGS...")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	env := os.Environ()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "MEDALLION_SOCKET"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	deadline := time.Now().Add(20 * time.Second)
	var out []byte
	for {
		cmd := exec.Command(filepath.Join(binDir, "medallionctl"), args[1:]...)
		cmd.Env = env
		cmd.Dir = ts.Getenv("WORK")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err = cmd.Output()
		if err == nil && re.Match(out) {
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitctl: medallionctl %v never matched %q; last output:\n%s%s(err %v)", args[1:], args[0], out, stderr.Bytes(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintf(ts.Stdout(), "%s", out)
}
