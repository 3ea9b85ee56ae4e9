package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/diff"
)

// Codex runs a hook from hooks.json only once the user trusted it: the
// hash of the hook's definition, as Codex computes it, recorded in
// config.toml under [hooks.state."<hooks.json>:session_start:<group>:<n>"].
// An untrusted hook is skipped without a word, so integrate asks Codex
// itself to record the trust, through its app-server (the JSON-RPC
// interface Codex's own /hooks screen uses): hooks/list reports each hook
// with its key, hash and trust status, config/batchWrite records the hash.
// Integrate never computes the hash itself: a hash of its own would break
// with any change in how Codex computes it, and the hook would go silent.
//
// When that cannot be done (no codex on PATH, an app-server that fails or
// does not report the hook trusted afterwards), integrate falls back to
// $CODEX_HOME/AGENTS.md, which Codex reads into every session without
// trust: a block asking the agent to run "medallionctl load" first.

// codexBinary finds the codex executable; tests replace it.
var codexBinary = func() (string, error) { return exec.LookPath("codex") }

// appServerTimeout bounds a whole conversation with codex app-server.
const appServerTimeout = 30 * time.Second

// codexHookInfo is one hook as hooks/list reports it.
type codexHookInfo struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	SourcePath  string `json:"sourcePath"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"` // trusted, untrusted, modified
	IsManaged   bool   `json:"isManaged"`
}

// appServer is a running "codex app-server": JSON-RPC, one JSON object per
// line on stdin and stdout.
type appServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	lastID int
	stderr bytes.Buffer
}

func startAppServer(ctx context.Context, bin string) (*appServer, error) {
	s := &appServer{cmd: exec.CommandContext(ctx, bin, "app-server")}
	s.cmd.Stderr = &s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.stdout = bufio.NewReaderSize(out, 1<<16)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s app-server: %w", bin, err)
	}
	if err := s.call("initialize", map[string]any{"clientInfo": map[string]string{"name": "medallionctl", "version": "1"}}, nil); err != nil {
		s.close()
		return nil, err
	}
	if err := s.send(map[string]any{"method": "initialized"}); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *appServer) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = s.stdin.Write(append(b, '\n'))
	return err
}

// call sends a request and decodes its result into result (nil: ignored),
// skipping the notifications the server sends meanwhile.
func (s *appServer) call(method string, params, result any) error {
	s.lastID++
	id := s.lastID
	if err := s.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return fmt.Errorf("codex app-server %s: %w", method, err)
	}
	for {
		line, err := s.stdout.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("codex app-server %s: no answer (%v)%s", method, err, s.stderrTail())
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != id {
			continue
		}
		if msg.Error != nil {
			return fmt.Errorf("codex app-server %s: %s", method, msg.Error.Message)
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(msg.Result, result); err != nil {
			return fmt.Errorf("codex app-server %s: %w", method, err)
		}
		return nil
	}
}

func (s *appServer) stderrTail() string {
	t := strings.TrimSpace(s.stderr.String())
	if t == "" {
		return ""
	}
	if len(t) > 300 {
		t = "…" + t[len(t)-300:]
	}
	return ": " + t
}

func (s *appServer) close() {
	s.stdin.Close()
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	_ = s.cmd.Wait()
}

// hooks lists the hooks Codex loads for a session in cwd.
func (s *appServer) hooks(cwd string) ([]codexHookInfo, error) {
	var res struct {
		Data []struct {
			Hooks    []codexHookInfo `json:"hooks"`
			Warnings []any           `json:"warnings"`
			Errors   []any           `json:"errors"`
		} `json:"data"`
	}
	if err := s.call("hooks/list", map[string]any{"cwds": []string{cwd}}, &res); err != nil {
		return nil, err
	}
	var out []codexHookInfo
	for _, d := range res.Data {
		out = append(out, d.Hooks...)
	}
	return out, nil
}

// setTrust records hash as the trusted hash of each key, or removes the
// keys' trust entries when hash is "", with one config/batchWrite.
func (s *appServer) setTrust(keys []string, hash string) error {
	var edits []map[string]any
	for _, k := range keys {
		quoted, err := json.Marshal(k)
		if err != nil {
			return err
		}
		e := map[string]any{"keyPath": "hooks.state." + string(quoted), "mergeStrategy": "replace", "value": nil}
		if hash != "" {
			e["mergeStrategy"], e["value"] = "upsert", map[string]string{"trusted_hash": hash}
		}
		edits = append(edits, e)
	}
	return s.call("config/batchWrite", map[string]any{"edits": edits}, nil)
}

// ourHooks lists the medallionctl hooks of the hooks file at path, as
// Codex loads them for a session in the current directory.
func (s *appServer) ourHooks(path string) ([]codexHookInfo, error) {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = filepath.Dir(path)
	}
	list, err := s.hooks(cwd)
	if err != nil {
		return nil, err
	}
	var out []codexHookInfo
	for _, h := range list {
		if sameFile(h.SourcePath, path) && isMedallionHook(h.Command, agentCodex) && !h.IsManaged {
			out = append(out, h)
		}
	}
	return out, nil
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ea == eb
}

// withAppServer runs fn with a codex app-server whose config is that of the
// Codex home holding hooksPath.
func withAppServer(hooksPath string, fn func(*appServer) error) error {
	bin, err := codexBinary()
	if err != nil {
		return errors.New("the codex binary is not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), appServerTimeout)
	defer cancel()
	s, err := startAppServer(ctx, bin)
	if err != nil {
		return err
	}
	defer s.close()
	return fn(s)
}

// codexAfterInstall makes Codex trust the hook just added to in.path, or
// falls back to AGENTS.md, and says which.
func codexAfterInstall(in *integration) error {
	configPath := filepath.Join(filepath.Dir(in.path), "config.toml")
	agentsPath := filepath.Join(filepath.Dir(in.path), "AGENTS.md")
	if in.dryRun {
		fmt.Fprintf(in.stdout, "would record Codex's trust in the hook in %s through codex app-server (hooks/list, config/batchWrite);\n"+
			"if that cannot be done, would add a block to %s instead\n", configPath, agentsPath)
		return nil
	}
	var trusted []codexHookInfo
	err := withAppServer(in.path, func(s *appServer) error {
		ours, err := s.ourHooks(in.path)
		if err != nil {
			return err
		}
		if len(ours) == 0 {
			return fmt.Errorf("codex app-server does not list the hook of %s", in.path)
		}
		byHash := map[string][]string{}
		for _, h := range ours {
			if h.TrustStatus != "trusted" {
				byHash[h.CurrentHash] = append(byHash[h.CurrentHash], h.Key)
			}
		}
		if len(byHash) > 0 {
			if err := backupIfExists(in.app, configPath); err != nil {
				return err
			}
			for hash, keys := range byHash {
				if err := s.setTrust(keys, hash); err != nil {
					return err
				}
			}
			if ours, err = s.ourHooks(in.path); err != nil {
				return err
			}
		}
		for _, h := range ours {
			if h.TrustStatus != "trusted" {
				return fmt.Errorf("codex still reports the hook %s as %s", h.Key, h.TrustStatus)
			}
		}
		trusted = ours
		return nil
	})
	if err != nil {
		fmt.Fprintf(in.stdout, "Codex skips a hook it does not trust, without a word, and its trust could not be recorded: %v.\n", err)
		return codexFallback(in, agentsPath)
	}
	for _, h := range trusted {
		fmt.Fprintf(in.stdout, "Codex trusts the hook: %s is recorded as trusted_hash of [hooks.state.%q] in %s\n", h.CurrentHash, h.Key, configPath)
	}
	// The hook now delivers the save file: a fallback block left by an
	// earlier run would only repeat it.
	return removeAgentsBlock(in, agentsPath)
}

// codexFallback adds the AGENTS.md block.
func codexFallback(in *integration, path string) error {
	old, exists, err := readOptional(path)
	if err != nil {
		return err
	}
	if _, _, found := findAgentsBlock(old); found {
		fmt.Fprintf(in.stdout, "fallback: %s already asks Codex to run medallionctl load at session start; nothing changed there\n", path)
		return nil
	}
	text := addAgentsBlock(old, in.ctl)
	if err := in.replaceFile(path, exists, old, text, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(in.stdout, "fallback: added a block to %s asking Codex to run %q at the start of each session\n"+
		"(to use the hook instead: trust it in Codex's /hooks screen, or put codex on PATH, and run medallionctl integrate codex again)\n",
		path, in.ctl+" load --cwd \"$PWD\"")
	return nil
}

// codexBeforeRemove removes the trust entries of our hooks (while their
// keys, which are positions in hooks.json, still hold) and the AGENTS.md
// block.
func codexBeforeRemove(in *integration, sf *settingsFile) error {
	configPath := filepath.Join(filepath.Dir(in.path), "config.toml")
	if sf.exists {
		err := withAppServer(in.path, func(s *appServer) error {
			ours, err := s.ourHooks(in.path)
			if err != nil {
				return err
			}
			var keys []string
			for _, h := range ours {
				if h.TrustStatus == "trusted" || h.TrustStatus == "modified" {
					keys = append(keys, h.Key)
				}
			}
			if len(keys) == 0 {
				return nil
			}
			verb := "would remove"
			if !in.dryRun {
				verb = "removed"
				if err := backupIfExists(in.app, configPath); err != nil {
					return err
				}
				if err := s.setTrust(keys, ""); err != nil {
					return err
				}
			}
			for _, k := range keys {
				fmt.Fprintf(in.stdout, "%s Codex's trust entry [hooks.state.%q] from %s\n", verb, k, configPath)
			}
			return nil
		})
		if _, statErr := os.Stat(configPath); err != nil && statErr == nil {
			fmt.Fprintf(in.stdout, "note: %s may keep a trust entry for the hook ([hooks.state.\"%s:session_start:…\"]), harmless once the hook is gone: %v\n", configPath, in.path, err)
		}
	}
	return removeAgentsBlock(in, filepath.Join(filepath.Dir(in.path), "AGENTS.md"))
}

// backupIfExists saves a copy of path before Codex rewrites it.
func backupIfExists(a *app, path string) error {
	old, exists, err := readOptional(path)
	if err != nil || !exists {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	backup, err := writeBackup(path, old, st.Mode().Perm())
	if err != nil {
		return fmt.Errorf("back up %s: %w", path, err)
	}
	fmt.Fprintf(a.stdout, "saved the previous %s as %s\n", filepath.Base(path), backup)
	return nil
}

func readOptional(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	return b, true, nil
}

// The AGENTS.md block is delimited by these lines. When the file did not
// end with a newline, integrate adds one before the block and says so in
// the first line, so that --remove gives back the very same bytes.
const (
	agentsBegin      = "<!-- medallion: added by medallionctl integrate codex; medallionctl integrate codex --remove takes it out -->\n"
	agentsBeginNoEOL = "<!-- medallion: added by medallionctl integrate codex (after a newline it added); medallionctl integrate codex --remove takes it out -->\n"
	agentsEnd        = "<!-- /medallion -->\n"
)

func agentsBlockBody(ctl string) string {
	return "## Save file from earlier sessions (Medallion)\n\n" +
		"Before anything else in a session, run this and read its output:\n\n" +
		"    " + ctl + " load --cwd \"$PWD\"\n\n" +
		"It is the saved state of the work in this directory: rules, known fixes, open questions and\n" +
		"decisions from earlier sessions. Treat it as the current state unless the user says otherwise.\n"
}

// addAgentsBlock returns old with the block appended, after a blank line.
func addAgentsBlock(old []byte, ctl string) []byte {
	var b bytes.Buffer
	b.Write(old)
	begin := agentsBegin
	switch {
	case len(old) == 0:
	case old[len(old)-1] != '\n':
		b.WriteString("\n")
		begin = agentsBeginNoEOL
	default:
		b.WriteString("\n")
	}
	b.WriteString(begin)
	b.WriteString(agentsBlockBody(ctl))
	b.WriteString(agentsEnd)
	return b.Bytes()
}

// findAgentsBlock finds the block and the separator integrate put before
// it: text[start:end] is what addAgentsBlock added.
func findAgentsBlock(text []byte) (start, end int, found bool) {
	for _, begin := range []string{agentsBegin, agentsBeginNoEOL} {
		i := bytes.Index(text, []byte(begin))
		if i < 0 || (i > 0 && text[i-1] != '\n') {
			continue
		}
		j := bytes.Index(text[i:], []byte(agentsEnd))
		if j < 0 {
			continue
		}
		start, end = i, i+j+len(agentsEnd)
		if i > 0 {
			start-- // the newline added before it
		}
		return start, end, true
	}
	return 0, 0, false
}

// removeAgentsBlock takes the block out of the AGENTS.md at path; a file
// that held nothing else goes.
func removeAgentsBlock(in *integration, path string) error {
	old, exists, err := readOptional(path)
	if err != nil || !exists {
		return err
	}
	start, end, found := findAgentsBlock(old)
	if !found {
		return nil
	}
	text := append(append([]byte{}, old[:start]...), old[end:]...)
	if in.dryRun {
		fmt.Fprintf(in.stdout, "would remove the medallion block from %s:\n", path)
		_, err := in.stdout.Write(diff.Diff(path, old, path+" (new)", text))
		return err
	}
	if len(text) == 0 {
		if err := os.Remove(path); err != nil {
			return err
		}
		fmt.Fprintf(in.stdout, "removed %s, which held only the medallion block\n", path)
		return nil
	}
	if err := in.replaceFile(path, true, old, text, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(in.stdout, "removed the medallion block from %s\n", path)
	return nil
}
