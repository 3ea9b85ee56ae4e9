package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/hookcache"
	"github.com/medallionhq/medallion/internal/jsonstr"
	rendering "github.com/medallionhq/medallion/internal/render"
)

// hookTimeout bounds the whole daemon round trip of a hook. Claude Code
// waits for SessionStart hooks before the session starts, so a daemon that
// is down or stuck must cost the user well under a second, never more.
const hookTimeout = 700 * time.Millisecond

// maxHookInput caps what the hook reads from stdin; the SessionStart JSON
// is a few hundred bytes.
const maxHookInput = 1 << 20

// hookOutput is the hook response that adds context to the session, the
// same for the three agents: {"hookSpecificOutput":{"hookEventName":
// "SessionStart","additionalContext":"..."}}.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func (a *app) hookCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook claude-code|codex|gemini",
		Short: "Run as an agent's session-start hook (installed by integrate)",
		Long: `Hook is what an agent runs when a session starts; "medallionctl integrate
AGENT" installs it. It reads the agent's SessionStart hook JSON on stdin,
loads the save file of the session's working directory from medalliond and
prints the hook response that adds it to the session's context.

The save file stays within what the agent takes whole, whatever --budget
says: Claude Code moves a context over 10,000 characters into a file and
shows the model a 2 KB preview, Codex cuts one over its
additionalContextLimit (integrate sets 6,000 of its tokens, 24 KB), and
40 KB were seen to reach Gemini CLI whole. The budget is lowered to fit
(` + fmt.Sprintf("claude-code %d, codex %d, gemini %d tokens", hookAgents[0].budget, hookAgents[1].budget, hookAgents[2].budget) + `), and the save file names
what it left out, as any load does.

It never stands in the agent's way: when the daemon is down, slow (it gives
up after 700 ms) or has no medallion for the directory, it prints nothing and
exits 0. --verbose says why on stderr.

The daemon keeps each answer it gave a hook in a file beside its socket
(SOCKET.hook/, readable by you alone), and the next hook for the same
repository (any of its folders and worktrees; the same directory when the
config has scope_rule blocks) reads that file instead of asking: the hook
runs before every session, and the round trip was about a fifth of its
time. A file never outlives the answer: the daemon removes it before a new
version of a medallion of its scope is stored (and writes the new answer
once the writes have been quiet for two seconds), and the hook ignores it
when the daemon that wrote it is gone or when the directory's repository
is no longer the one it was written for. A daemon that starts readies the
answers of the folders of the 16 most recent sessions. --verbose says when
a file answered.

When the daemon is down (nothing listens on the socket), the hook also starts
it in the background with "medalliond start --socket SOCKET" (the medalliond
next to medallionctl, else the one on PATH) and returns at once without
waiting for it: this session starts without a save file, the next ones have
theirs. --no-start leaves a daemon that is down alone.`,
		Example: `  echo '{"session_id":"s1","cwd":"/src/muse","source":"startup"}' | medallionctl hook claude-code`,
		Args:    exactArgs("AGENT"),
	}
	var opts hookOptions
	cmd.Flags().BoolVarP(&opts.verbose, "verbose", "v", false, "explain on stderr why nothing was printed")
	cmd.Flags().BoolVar(&opts.noStart, "no-start", false, "do not start medalliond in the background when it is down")
	cmd.Flags().IntVar(&opts.budget, "budget", defaultHookBudget, "token `budget` of the added context (lowered to what the agent takes whole)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ag, err := agentNamed(args[0])
		if err != nil {
			return err
		}
		a.runHook(cmd.Context(), ag, opts)
		return nil
	}
	return cmd
}

// defaultHookBudget is --budget's default: the daemon's, at which it
// readies the hook's answers for the folders of recent sessions when it
// starts (server.KeepHookAnswers).
const defaultHookBudget = rendering.DefaultBudget

// hookOptions are the hook's own flags.
type hookOptions struct {
	verbose, noStart bool
	budget           int
}

// runHook is the hook itself, whichever way its command line was read
// (cobra, or fastHook). Whatever happens, the agent's session starts: it
// prints the hook output or nothing, and never fails.
//
// Its three steps are three functions so that the first two's locals are
// off the stack while hookContext runs: the goroutine's stack is 4 KiB
// then, and a deeper one makes the runtime copy it to a new one, which
// touches pages a hook has no other use for (issue 12).
func (a *app) runHook(ctx context.Context, ag *hookAgent, opts hookOptions) {
	budget := a.hookBudget(ag, opts)
	text, kept, err := a.hookContext(ctx, budget)
	a.hookAnswer(ag, opts, text, kept, err)
}

// hookNote explains on stderr what the hook did, with --verbose.
func (a *app) hookNote(opts hookOptions, format string, v ...any) {
	if opts.verbose {
		fmt.Fprintf(a.stderr, "medallionctl hook: "+format+"\n", v...)
	}
}

// hookBudget is --budget, lowered to what the agent takes whole.
func (a *app) hookBudget(ag *hookAgent, opts hookOptions) int {
	if opts.budget > ag.budget {
		a.hookNote(opts, "budget lowered from %d to %d tokens: %s takes at most %d %s of hook context whole", opts.budget, ag.budget, ag.title, ag.limit, ag.unit)
		return ag.budget
	}
	return opts.budget
}

// hookAnswer prints what hookContext returned as the agent's hook output,
// or nothing when there is no text; on an error, it starts the daemon if
// that is down.
func (a *app) hookAnswer(ag *hookAgent, opts hookOptions, text string, kept bool, err error) {
	if kept {
		a.hookNote(opts, "answered from the daemon's kept answer in %s", hookcache.Dir(a.socket))
	}
	if err != nil {
		// Whatever failed, the session must start as if we were not
		// there: exit 0, nothing on stdout.
		a.hookNote(opts, "%v", err)
		if !opts.noStart && daemonDown(err) {
			if path, err := spawnDaemon(a.socket); err != nil {
				a.hookNote(opts, "medalliond is down and was not started: %v", err)
			} else {
				a.hookNote(opts, "medalliond is down: started %s in the background for the next sessions", path)
			}
		}
		return
	}
	if text == "" {
		a.hookNote(opts, "no medallion for this directory yet")
		return
	}
	if ag.escape != nil {
		text = ag.escape(text)
	}
	if n := ag.measure(text); n > ag.limit {
		// Only a daemon that renders differently from this build
		// (another version) gets here: the budget above keeps a load
		// within the limit.
		a.hookNote(opts, "the save file has %d %s, over %s's %d: cut", n, ag.unit, ag.title, ag.limit)
		text = cutToLimit(text, ag)
	}
	// What json.Marshal(hookOutput{…}) prints, with only the text encoded,
	// and that by jsonstr: encoding/json walks a type by reflection
	// first, in a process that encodes one value (TestHook checks the
	// bytes against the struct's).
	out := make([]byte, 0, len(hookOutputHead)+len(text)+len(text)/8+16)
	out = append(jsonstr.Append(append(out, hookOutputHead...), text, true), "}}\n"...)
	_, _ = a.stdout.Write(out)
}

// hookOutputHead is hookOutput encoded up to its context's value.
const hookOutputHead = `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":`

// cutToLimit cuts text at a line boundary so that it fits the agent's
// limit, with a last line saying that it did and where the rest is.
func cutToLimit(text string, ag *hookAgent) string {
	tail := fmt.Sprintf("\n[cut to fit %s's limit of %d %s for hook context: medallionctl load --cwd . shows the whole save file]\n", ag.title, ag.limit, ag.unit)
	room := ag.limit - ag.measure(tail)
	var b strings.Builder
	used := 0 // both measures add up over the parts of a text
	for line := range strings.Lines(text) {
		if used += ag.measure(line); used > room {
			break
		}
		b.WriteString(line)
	}
	return b.String() + tail
}

// daemonDown tells a daemon that is not there (no socket, nobody listening)
// from one that is there but slow, refuses us, or answered with an error.
func daemonDown(err error) bool {
	return errors.Is(err, client.ErrUnreachable) &&
		(errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED))
}

// spawnDaemon runs "medalliond start --socket socket" detached and does not
// wait for it: start itself refuses a second daemon, so hooks of sessions
// starting together cannot start two. It returns the medalliond it ran.
// Tests replace it.
var spawnDaemon = func(socket string) (string, error) {
	path, err := findDaemon()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(path, "start", "--socket", socket)
	// No stdio: the agent waits for the hook's stdout and stderr to close,
	// so the daemon must not inherit them (start logs to the data dir).
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	cmd.Dir = "/"
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("run %s: %w", path, err)
	}
	_ = cmd.Process.Release()
	return path, nil
}

// findDaemon finds medalliond next to this medallionctl (both are installed
// together), else on PATH.
func findDaemon() (string, error) {
	if self, err := executable(); err == nil {
		if p, err := filepath.EvalSymlinks(self); err == nil {
			self = p
		}
		p := filepath.Join(filepath.Dir(self), "medalliond")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath("medalliond")
	if err != nil {
		return "", errors.New("medalliond is neither next to medallionctl nor on PATH")
	}
	return p, nil
}

// hookContext reads the hook input and returns the save file for its cwd,
// or "" when no medallion exists for it, and whether it came from the
// daemon's kept answer file instead of a round trip (internal/hookcache).
func (a *app) hookContext(ctx context.Context, budget int) (text string, kept bool, err error) {
	inCWD, err := readHookCWD(a.stdin)
	if err != nil {
		return "", false, fmt.Errorf("decode hook input: %w", err)
	}
	if inCWD == "" || !filepath.IsAbs(inCWD) {
		return "", false, fmt.Errorf("hook input has no absolute cwd (got %q)", inCWD)
	}
	cwd := filepath.Clean(inCWD)
	if text, ok := hookcache.Read(hookcache.Dir(a.socket), cwd, budget); ok {
		return text, true, nil
	}
	// The timeout starts here, not with the hook: a Go timer sets up the
	// runtime's poller (an epoll instance and a thread waiting in it),
	// which the kept answer's reading does not need (issue 12).
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	c := a.client()
	c.Timeout = hookTimeout
	c.OnVersionMismatch = nil // stderr stays quiet unless --verbose
	// The load the daemon's answer files are kept for: the daemon leaves
	// this answer in one for the next hook.
	text, err = c.HookText(ctx, cwd, budget)
	if err != nil {
		return "", false, fmt.Errorf("load %s: %w", inCWD, err)
	}
	return text, false, nil
}

// fastHook runs the hook without building the cobra command tree when its
// command line is one an agent runs ("[--socket PATH] hook AGENT" with the
// hook's own flags after AGENT or before it), and reports whether it did.
// The hook runs before every agent session, and cobra's tree (commands,
// flag sets, help texts) and its parsing were a fifth of what the hook's
// process did besides the Go runtime's start. Any other spelling — help,
// a flag it does not know, a value pflag would read differently, an
// unknown agent — goes the ordinary way, so its errors and usage stay
// cobra's.
func (a *app) fastHook(ctx context.Context, args []string) bool {
	opts := hookOptions{budget: defaultHookBudget}
	socket, socketSet := "", false
	var words []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue := strings.Cut(arg, "=")
		switch {
		case name == "--socket" || name == "--budget":
			if !hasValue {
				if i+1 == len(args) {
					return false
				}
				i++
				value = args[i]
			}
			if name == "--socket" {
				socket, socketSet = value, true
				continue
			}
			n, err := strconv.Atoi(value)
			if err != nil {
				return false
			}
			opts.budget = n
		case arg == "-v" || arg == "--verbose":
			opts.verbose = true
		case arg == "--no-start":
			opts.noStart = true
		case strings.HasPrefix(arg, "-"):
			return false // -h, --help, "--", combined or negated flags …
		default:
			words = append(words, arg)
		}
	}
	if len(words) != 2 || words[0] != "hook" {
		return false
	}
	ag, err := agentNamed(words[1])
	if err != nil {
		return false
	}
	if socketSet {
		a.socket = socket
	} else {
		a.socket = defaultSocket()
	}
	a.runHook(ctx, ag, opts)
	return true
}
