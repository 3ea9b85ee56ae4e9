package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
)

func (a *app) checkpointCommand() *cobra.Command {
	var req api.CheckpointRequest
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Hand buffered episodes to the curator now",
		Long: `Checkpoint asks medalliond to checkpoint now rather than wait for the next
automatic trigger (every N events, an idle session, a correction, a
schedule). The buffered episode of the session given with --session, or of
every session with buffered events, goes to the curator with what can be
derived from it (files read and edited, tools used, errors, corrections,
todos); the buffer is emptied once the curator's result is stored. Events
that arrive meanwhile stay buffered for the next checkpoint.

In this version the daemon's curator only records and logs the episode it
receives ("episode recorded (no curator configured)"): turning episodes into
medallion content is the next piece of work.

--note TEXT goes to the curator with the episode: say in your own words what
was achieved or decided.

It prints one line per session: its scope and how many events went to the
curator, or why that failed. The exit code is 1 when any checkpoint failed;
nothing to checkpoint is not an error (a note goes to stderr). Session ids
come from "medallionctl sessions".`,
		Example: `  medallionctl checkpoint
  medallionctl checkpoint --session 0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d
  medallionctl checkpoint --note "parser done; streaming output is next"
  medallionctl checkpoint -o json`,
		Args: exactArgs(),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&req.SessionID, "session", "", "checkpoint only the session with this `id` (default: every session with buffered events)")
	cmd.Flags().StringVar(&req.Note, "note", "", "`text` for the curator: what was achieved or decided")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Flags().Changed("session") && strings.TrimSpace(req.SessionID) == "" {
			return usageErrorf("--session needs a session id (leave it out to checkpoint every session)")
		}
		resp, err := a.client().Checkpoint(cmd.Context(), req)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			if err := writeJSON(a.stdout, resp); err != nil {
				return err
			}
		} else {
			if len(resp.Checkpoints) == 0 {
				fmt.Fprintln(a.stderr, nothingToCheckpoint(req.SessionID))
				return nil
			}
			if err := printCheckpoints(a.stdout, resp.Checkpoints); err != nil {
				return err
			}
		}
		return checkpointsFailed(resp.Checkpoints)
	}
	return cmd
}

func nothingToCheckpoint(session string) string {
	if session != "" {
		return "nothing to checkpoint: session " + cell(session) + " has no buffered events"
	}
	return "nothing to checkpoint: no session has buffered events"
}

// printCheckpoints writes one line per result:
//
//	checkpoint SESSION → SCOPE: N events (medallion ID version V)
//	checkpoint SESSION → SCOPE: failed: REASON
func printCheckpoints(w io.Writer, results []api.CheckpointResult) error {
	for _, r := range results {
		line := fmt.Sprintf("checkpoint %s → %s: ", cell(r.SessionID), list(r.Scope))
		switch {
		case r.Error != "":
			line += "failed: " + cell(r.Error)
		default:
			line += plural(r.Events, "event")
			if r.MedallionID != "" {
				line += fmt.Sprintf(" (medallion %s version %d)", cell(r.MedallionID), r.Version)
			}
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// checkpointsFailed is the command's error when any checkpoint failed, so
// the exit code says so; each failure has been printed already.
func checkpointsFailed(results []api.CheckpointResult) error {
	failed := 0
	for _, r := range results {
		if r.Error != "" {
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %s failed", failed, plural(len(results), "checkpoint"))
}

// plural renders "1 event", "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
