// Package hookcache keeps the daemon's answers to the SessionStart hook as
// files the next hook reads without asking the daemon.
//
// The hook runs before every agent session, and a round trip to the daemon
// (connect, request, the daemon's goroutines waking, answer) cost it as
// much as the rest of its process besides the Go runtime's start (issue
// 12). So when the hook asks for a cwd's save file, the daemon also writes
// the answer into a folder next to its socket, and the next hook reads the
// file instead. A daemon without scope rules (config scope_rule blocks)
// keeps one file per scope and budget: every folder the file system gives
// the same graph nodes (scope.Derive: a repository's subfolders and
// worktrees) gets the same answer from it, so a session in a new folder of
// a known repository reads a file too. With rules, which can give any
// folder other nodes than the file system does, it keeps one file per cwd
// and budget.
//
// A file is never staler than the daemon's own answer:
//
//   - The daemon removes it, before the write returns, whenever a version of
//     a medallion of its scope is written (the server's load cache drops
//     the same answer at the same moment; internal/server/loadcache.go).
//   - It names the graph nodes the daemon resolved the cwd to, and the hook
//     derives them again from the file system (scope.Derive): a folder that
//     became a repository, or a repository renamed, is asked for anew.
//     Scopes from config rules are not kept at all.
//   - It names the daemon's pid and, on Linux, when that process started: a
//     daemon that is gone (killed, its pid reused since) answers nothing,
//     and the hook takes the ordinary path, which starts a daemon that is
//     down. A daemon clears the folder when it starts and removes it when
//     it stops.
//   - The folder and each file must be the user's own, unreadable to
//     others: anyone else's file would put words into the agent's context.
//
// The folder also holds the socket a hook asks on when no file answers it
// (Socket; the daemon's side is internal/server's ServeHook, Linux only).
package hookcache

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/scope"
)

// Dir is the answers' folder of the daemon listening on socket: beside
// the socket, in the socket's own folder (owner-only, as the socket is).
func Dir(socket string) string { return socket + ".hook" }

// SocketName names, in that folder, the socket on which the daemon answers
// the hook's request when no file answers it (internal/server's
// ServeHook): an answer file's name is 16 hex digits, never this.
const SocketName = "socket"

// Socket is the hook's socket of the daemon listening on socket.
func Socket(socket string) string { return filepath.Join(Dir(socket), SocketName) }

// maxFile bounds what Read reads: the daemon keeps no answer over 64 KiB
// (the server's load cache), plus its header.
const maxFile = 128 << 10

// magic opens every file: the format's name and version, so that a later
// format is never misread.
const magic = "medallion hook answer 1\n"

// Answer is one kept answer: the save file Text for CWD at Budget, which
// the daemon (Pid) rendered for the graph nodes Nodes; with CWD "", for
// every folder whose nodes are Nodes (a daemon without scope rules). An
// empty Text says the scope has no medallion yet.
type Answer struct {
	Pid int
	// Start is when process Pid started (processStart); "" where that
	// cannot be told.
	Start  string
	CWD    string
	Budget int
	Nodes  []string
	Text   string
}

// Name is the file name of the answer for cwd (clean, absolute) at
// budget. Two cwds that share a name overwrite each other's file; the
// header tells them apart.
func Name(cwd string, budget int) string {
	h := fnv.New64a()
	h.Write([]byte(strconv.Itoa(budget) + "\x00" + cwd))
	return fmt.Sprintf("%016x", h.Sum64())
}

// ScopeName is the file name of the answer for every folder whose graph
// nodes are nodes, at budget (an Answer with no CWD).
func ScopeName(nodes []string, budget int) string {
	h := fnv.New64a()
	h.Write([]byte("scope\x00" + strconv.Itoa(budget)))
	for _, n := range nodes {
		h.Write([]byte("\x00" + n))
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// encode writes a's file: magic, then "key value" lines, a blank line and
// the text as it is.
func (a Answer) encode() []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteString("pid " + strconv.Itoa(a.Pid) + "\n")
	b.WriteString("start " + strconv.Quote(a.Start) + "\n")
	b.WriteString("budget " + strconv.Itoa(a.Budget) + "\n")
	b.WriteString("cwd " + strconv.Quote(a.CWD) + "\n")
	b.WriteString("nodes")
	for _, n := range a.Nodes {
		b.WriteString(" " + strconv.Quote(n))
	}
	b.WriteString("\n\n")
	b.WriteString(a.Text)
	return b.Bytes()
}

// errFormat: the file is not one this build wrote.
var errFormat = errors.New("not a hook answer file")

// decode reads a file written by encode.
func decode(b []byte) (Answer, error) {
	var a Answer
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return a, errFormat
	}
	head, text, ok := bytes.Cut(rest, []byte("\n\n"))
	if !ok {
		return a, errFormat
	}
	a.Text = string(text)
	seen := 0
	for line := range strings.SplitSeq(string(head), "\n") {
		key, value, _ := strings.Cut(line, " ")
		var err error
		switch key {
		case "pid":
			a.Pid, err = strconv.Atoi(value)
		case "start":
			a.Start, err = strconv.Unquote(value)
		case "budget":
			a.Budget, err = strconv.Atoi(value)
		case "cwd":
			a.CWD, err = strconv.Unquote(value)
		case "nodes":
			a.Nodes, err = unquoteAll(line[len("nodes"):])
		default:
			return a, errFormat
		}
		if err != nil {
			return a, errFormat
		}
		seen++
	}
	if seen != 5 || a.Pid <= 0 {
		return a, errFormat
	}
	return a, nil
}

// unquoteAll reads the space-separated quoted strings of s (each with its
// leading space).
func unquoteAll(s string) ([]string, error) {
	var out []string
	for s != "" {
		if s[0] != ' ' {
			return nil, errFormat
		}
		q, err := strconv.QuotedPrefix(s[1:])
		if err != nil {
			return nil, err
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		s = s[1+len(q):]
	}
	return out, nil
}

// Keepable reports whether an answer for cwd rendered for nodes is worth a
// file: only when the hook, deriving cwd's nodes from the file system,
// finds the same ones (not for a config rule's scope, nor while the
// daemon's resolver still holds an answer the file system has moved on
// from).
func Keepable(cwd string, nodes []string) bool {
	return len(nodes) > 0 && slices.Equal(scope.Derive(cwd), nodes)
}

// answers reports whether a answers a hook at budget in a folder the file
// system now gives nodes (scope.Derive): the budget and the nodes it was
// written for, and the daemon that wrote it still running. The caller
// checks the cwd (Read).
func (a Answer) answers(budget int, nodes []string) bool {
	return a.Budget == budget && len(a.Nodes) > 0 && slices.Equal(a.Nodes, nodes) && running(a.Pid, a.Start)
}

// path joins dir and a file name.
func path(dir, name string) string { return filepath.Join(dir, name) }
