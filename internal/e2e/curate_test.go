package e2e

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestCurateScripts runs the curation scripts in testdata/curate: the real
// daemon ingests our transcript fixtures, checkpoints curate them with
// Tier 0, and medallionctl shows the medallions. They live apart from
// testdata/script because they need the appendfile command.
func TestCurateScripts(t *testing.T) {
	t.Parallel() // each test has its own daemons, data dirs and sockets
	deadline := time.Now().Add(4 * time.Minute)
	if d, ok := t.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	testscript.Run(t, testscript.Params{
		Deadline: deadline,
		Dir:      "testdata/curate",
		Setup:    setupScript,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsonget": cmdJSONGet, "eq": cmdEq,
			"cptree": cmdCpTree, "waitctl": cmdWaitCtl,
			"appendfile": cmdAppendFile, "jsonat": cmdJSONAt,
		},
		RequireExplicitExec: true,
	})
}

// cmdAppendFile: appendfile SRC DST — appends the file SRC to DST (both
// relative to $WORK) in one write, as an agent adds records to its
// transcript.
func cmdAppendFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: appendfile SRC DST")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	f, err := os.OpenFile(ts.MkAbs(args[1]), os.O_APPEND|os.O_WRONLY, 0)
	ts.Check(err)
	_, err = f.Write(data)
	ts.Check(err)
	ts.Check(f.Close())
}

// cmdJSONAt: jsonat FILE PATH VAR — jsonget that also steps into arrays:
// a numeric key of PATH (medallions.0.meta.version) is an index.
func cmdJSONAt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonat FILE PATH VAR")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &v); err != nil {
		ts.Fatalf("jsonat: %s is not JSON: %v", args[0], err)
	}
	for _, key := range strings.Split(args[1], ".") {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[key]; !ok {
				ts.Fatalf("jsonat: %s: no key %q", args[1], key)
			}
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(c) {
				ts.Fatalf("jsonat: %s: %q is not an index of an array of %d", args[1], key, len(c))
			}
			v = c[i]
		default:
			ts.Fatalf("jsonat: %s: %q is not inside an object or array", args[1], key)
		}
	}
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	ts.Setenv(args[2], s)
}
