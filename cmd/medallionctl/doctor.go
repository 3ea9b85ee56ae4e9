package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/version"
)

// The results of a doctor check.
const (
	checkOK   = "ok"
	checkWarn = "warn" // worth knowing; nothing is broken
	checkFail = "FAIL" // something does not work: doctor exits 1
)

// lowDisk is the free space under the data dir below which doctor warns,
// well before the daemon's own reserve stops its writes.
const lowDisk = 1 << 30

// doctorLLMTimeout bounds doctor's test of the model endpoint: a check
// that waits minutes on a slow model is no check.
const doctorLLMTimeout = 60 * time.Second

// check is one thing doctor looked at.
type check struct {
	Name   string `json:"name"`
	Result string `json:"result"` // checkOK, checkWarn or checkFail
	Detail string `json:"detail"`
	// Fix says what to do when Result is not ok.
	Fix string `json:"fix,omitempty"`
}

// doctorReport is doctor's -o json output.
type doctorReport struct {
	Checks   []check `json:"checks"`
	Problems int     `json:"problems"`
	Warnings int     `json:"warnings"`
}

func (a *app) doctorCommand() *cobra.Command {
	var settings string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that everything Medallion needs works, and say how to fix what does not",
		Long: `Doctor checks, one line each and with the fix for anything wrong:

  daemon       medalliond answers on the socket (and runs this version)
  watch …      each folder where an agent writes its transcripts exists
  integration  each agent's SessionStart hook (Claude Code, Codex, Gemini
               CLI) is installed and runs a medallionctl that exists;
               Codex trusts it
  llm          with an llm block in the config: the model endpoint answers
               (as "medallionctl llm check")
  disk         free space under the data dir
  store        the daemon's read-back of its store found no damage

It exits 1 when something does not work (FAIL), 0 when all is well or
there are only warnings (an agent set up without the hook, a daemon of
another version).`,
		Example: `  medallionctl doctor
  medallionctl doctor -o json`,
		Args: exactArgs(),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&settings, "settings", "", "Claude Code settings `file` to check (default ~/.claude/settings.json)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		checks := a.doctor(cmd.Context(), settings)
		rep := doctorReport{Checks: checks}
		for _, c := range checks {
			switch c.Result {
			case checkFail:
				rep.Problems++
			case checkWarn:
				rep.Warnings++
			}
		}
		var err error
		if *out == outputJSON {
			err = writeJSON(a.stdout, rep)
		} else {
			err = printDoctor(a.stdout, rep)
		}
		if err == nil && rep.Problems > 0 {
			return exitCode(1)
		}
		return err
	}
	return cmd
}

// doctor runs every check; those that need the daemon are left out when
// it does not answer (the daemon check says why).
func (a *app) doctor(ctx context.Context, settings string) []check {
	var checks []check
	st, err := a.client().Status(ctx)
	if err != nil {
		checks = append(checks, check{Name: "daemon", Result: checkFail, Detail: err.Error(),
			Fix: "start it: medalliond start (or medalliond service start --user); medalliond status says why it is down"})
	} else {
		checks = append(checks, daemonCheck(st))
		checks = append(checks, watchChecks(st)...)
	}
	checks = append(checks, integrationChecks(settings)...)
	if st != nil {
		if st.LLM != nil {
			checks = append(checks, a.llmCheck(ctx))
		}
		checks = append(checks, diskCheck(st), storeCheck(st))
	}
	return checks
}

func daemonCheck(st *api.Status) check {
	c := check{Name: "daemon", Result: checkOK,
		Detail: fmt.Sprintf("medalliond %s (pid %d) answers on %s", st.Version, st.PID, st.Socket)}
	if mine := version.String(); st.Version != mine {
		c.Result = checkWarn
		c.Detail += fmt.Sprintf("; medallionctl is %s", mine)
		c.Fix = "restart medalliond after upgrading: medalliond stop && medalliond start (or medalliond service restart --user)"
	}
	return c
}

// watchChecks says, per watched folder, whether it exists. A missing one
// is fine (an agent not used on this machine); none at all is a failure:
// nothing can be saved.
func watchChecks(st *api.Status) []check {
	if st.Ingest == nil {
		return []check{{Name: "watch", Result: checkFail, Detail: "this daemon runs without ingestion: it reads no transcripts",
			Fix: "run medalliond without ingestion turned off"}}
	}
	var out []check
	found := 0
	for _, w := range st.Ingest.Watches {
		c := check{Name: "watch " + w.Name, Result: checkOK, Detail: fmt.Sprintf("%s: %s (%s)", w.Path, plural(w.Files, "transcript file"), w.Format)}
		if w.Exists {
			found++
		} else {
			// An agent not used here, as the integrations say.
			c.Detail = fmt.Sprintf("%s does not exist yet: no %s session here (watched once it appears; a watch block of the config points elsewhere)", w.Path, w.Format)
		}
		out = append(out, c)
	}
	if found == 0 {
		out = append(out, check{Name: "watch", Result: checkFail, Detail: "no watched folder exists: no session can be saved",
			Fix: "run an agent (Claude Code, Codex CLI) once, or add a watch block for the folder your agent writes to"})
	}
	return out
}

// integrationChecks checks every agent's SessionStart hook: installed, and
// running a medallionctl that exists (for Codex, also trusted). settings,
// when set, is Claude Code's file. An agent whose configuration folder does
// not exist is not used here and is only mentioned.
func integrationChecks(settings string) []check {
	var out []check
	for _, ag := range hookAgents {
		path, err := ag.settings()
		if ag.name == agentClaudeCode && settings != "" {
			path, err = settings, nil
		}
		c := check{Name: "integration " + ag.name}
		switch {
		case err != nil:
			c.Result, c.Detail, c.Fix = checkWarn, "cannot find "+ag.title+"'s hooks file: "+err.Error(), "medallionctl integrate "+ag.name+" --settings PATH"
		case !exists(filepath.Dir(path)):
			c.Result, c.Detail = checkOK, fmt.Sprintf("%s is not used here (no %s)", ag.title, filepath.Dir(path))
		default:
			c = hookCheck(ag, path)
		}
		out = append(out, c)
	}
	return out
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// hookCheck looks for agent's SessionStart hook in its hooks file at path.
func hookCheck(ag *hookAgent, path string) check {
	c := check{Name: "integration " + ag.name}
	fix := "medallionctl integrate " + ag.name
	sf, err := readSettings(path)
	if err != nil {
		c.Result, c.Detail, c.Fix = checkFail, err.Error(), "fix the JSON of "+path+", then "+fix
		return c
	}
	_, groups, err := sf.sessionStart()
	if err != nil {
		c.Result, c.Detail, c.Fix = checkFail, err.Error(), "fix the hooks of "+path+", then "+fix
		return c
	}
	var command string
	for _, h := range sessionStartHooks(groups) {
		if cmd := commandOf(sf.text, h.command); isMedallionHook(cmd, ag.name) {
			command = cmd
		}
	}
	if command == "" {
		c.Result, c.Fix = checkWarn, fix
		c.Detail = fmt.Sprintf("no SessionStart hook in %s: %s sessions start without their save file", path, ag.title)
		return c
	}
	bin := hookBinary(command)
	if !exists(bin) {
		c.Result, c.Fix = checkFail, fix+" (points the hook at this medallionctl)"
		c.Detail = fmt.Sprintf("the SessionStart hook in %s runs %s, which does not exist", path, bin)
		return c
	}
	c.Result, c.Detail = checkOK, "the SessionStart hook in "+path+" runs "+command
	if self, err := executable(); err == nil {
		if p, err := filepath.EvalSymlinks(self); err == nil && !sameFile(p, bin) {
			c.Result = checkWarn
			c.Detail += " (not this medallionctl, " + p + ")"
			c.Fix = fix + ", if this one is the medallionctl to use"
		}
	}
	if ag.name == agentCodex && c.Result == checkOK {
		codexTrust(path, &c)
	}
	return c
}

// codexTrust adds to c whether Codex trusts the hook (it skips one it does
// not trust, without a word), when the codex binary is there to ask.
func codexTrust(path string, c *check) {
	if _, err := codexBinary(); err != nil {
		c.Detail += "; its trust not checked: the codex binary is not on PATH"
		return
	}
	var status string
	err := withAppServer(path, func(s *appServer) error {
		ours, err := s.ourHooks(path)
		if err != nil {
			return err
		}
		status = "not listed by Codex"
		for _, h := range ours {
			status = h.TrustStatus
			if status != "trusted" {
				break
			}
		}
		return nil
	})
	switch {
	case err != nil:
		c.Result, c.Detail = checkWarn, c.Detail+"; its trust could not be checked: "+err.Error()
	case status != "trusted":
		c.Result, c.Detail = checkFail, c.Detail+"; Codex does not run it: "+status
		c.Fix = "medallionctl integrate codex (records Codex's trust in the hook)"
	default:
		c.Detail += "; Codex trusts it"
	}
}

// hookBinary is the program a hook command runs: its first word, unquoted
// as integrate quotes it.
func hookBinary(command string) string {
	command = strings.TrimSpace(command)
	if strings.HasPrefix(command, "'") {
		var b strings.Builder
		rest := command[1:]
		for {
			i := strings.Index(rest, "'")
			if i < 0 {
				return b.String() + rest
			}
			b.WriteString(rest[:i])
			rest = rest[i+1:]
			if !strings.HasPrefix(rest, `\''`) {
				return b.String()
			}
			b.WriteString("'")
			rest = rest[3:]
		}
	}
	if i := strings.IndexByte(command, ' '); i >= 0 {
		return command[:i]
	}
	return command
}

func (a *app) llmCheck(ctx context.Context) check {
	ctx, cancel := context.WithTimeout(ctx, doctorLLMTimeout)
	defer cancel()
	c := check{Name: "llm"}
	res, err := a.client().LLMCheck(ctx)
	switch {
	case err != nil:
		c.Result, c.Detail = checkFail, err.Error()
	case !res.OK:
		c.Result, c.Detail = checkFail, fmt.Sprintf("%s (%s): %s", res.Endpoint, res.Model, strings.Join(res.Lines, "; "))
	default:
		c.Result, c.Detail = checkOK, fmt.Sprintf("%s (%s) answers with valid JSON", res.Endpoint, res.Model)
	}
	if c.Result != checkOK {
		c.Fix = "check the llm block (base_url, model, api_key_env) against config.hcl.example; medallionctl llm check tells more"
	}
	return c
}

func diskCheck(st *api.Status) check {
	c := check{Name: "disk", Result: checkOK}
	d := st.Disk
	if d == nil {
		c.Detail = "not measured by this daemon"
		return c
	}
	c.Detail = fmt.Sprintf("%s free under %s", humanBytes(d.FreeBytes), st.DataDir)
	switch {
	case d.Full || d.ReadOnly:
		c.Result, c.Detail = checkFail, d.Message
		c.Fix = "free space on the disk of " + st.DataDir + ": ingestion and writes resume by themselves"
	case d.FreeBytes < lowDisk:
		c.Result = checkWarn
		c.Fix = fmt.Sprintf("free space on the disk of %s: below %s the daemon stops writing", st.DataDir, humanBytes(d.ReserveBytes))
	}
	return c
}

func storeCheck(st *api.Status) check {
	c := check{Name: "store", Result: checkOK,
		Detail: fmt.Sprintf("%s in %s, no damage found", plural(st.Medallions, "medallion"), humanBytes(st.StoreBytes))}
	if st.StoreDamage != "" {
		c.Result, c.Detail = checkFail, st.StoreDamage
		c.Fix = "stop medalliond, run medalliond repair, start it again (README: \"A store file is damaged\")"
	}
	return c
}

func printDoctor(w io.Writer, rep doctorReport) error {
	p := &printer{w: w}
	width := 0
	for _, c := range rep.Checks {
		width = max(width, len(c.Name))
	}
	for _, c := range rep.Checks {
		p.linef("%-4s  %-*s  %s", c.Result, width, cell(c.Name), cell(c.Detail))
		if c.Fix != "" {
			p.linef("      %*s  fix: %s", width, "", cell(c.Fix))
		}
	}
	switch {
	case rep.Problems > 0:
		p.linef("\n%s, %s.", plural(rep.Problems, "problem"), plural(rep.Warnings, "warning"))
	case rep.Warnings > 0:
		p.linef("\nNo problems; %s.", plural(rep.Warnings, "warning"))
	default:
		p.linef("\nAll is well.")
	}
	return p.err
}

// exitCode is an error that only sets the exit code: the command has
// already said everything on stdout.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
