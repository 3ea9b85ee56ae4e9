package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/medallion"
)

// Polling intervals of status --wait: quick at first because a daemon that
// is starting usually answers within milliseconds, slower later to stay
// cheap during a long wait.
const (
	waitFirstInterval = 50 * time.Millisecond
	waitMaxInterval   = 500 * time.Millisecond
)

func (a *app) statusCommand() *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether medalliond is running and what it holds",
		Long: `Status asks medalliond for its version, process id, uptime, socket, data
directory, how many medallions it stores, how much disk the store uses and
how much is still free under the data directory. Below a reserve (64 MiB)
the daemon stops writing rather than crash: the disk line then says that
ingestion is paused (and whether the store is open read-only); it resumes
by itself once space is freed.

When the daemon ingests transcripts it also shows the folders it watches
(and whether they exist yet), how many directories and files it tracks, how
much it has read (bytes, lines, events), what it skipped and why (invalid
JSON, over-long lines, unknown record types …), how many secrets it
redacted, how far behind it is (bytes written to transcripts and not read
yet), when it last stored an event, the sessions and their buffered events,
and recent problems a user can fix (an inotify limit, an unreadable folder).

With an llm block in the config (Tier 1) an "LLM" section shows the
endpoint and model, the structured-output mode in use, calls and tokens
today against the daily cap, Tier 1 passes, fallbacks (failures where the
Tier 0 version stood), refused operations, the last error and how many
model-made items await review ("medallionctl review"). Without one, nothing
about an LLM is shown. -o json prints all of it as the API returns it.

It exits 1 with "cannot reach medalliond" when the daemon is not running.

--wait DURATION keeps asking until the daemon answers or DURATION has passed:
scripts that have just started the daemon use it to know when it is ready.
Only an unreachable daemon is retried; an error from a running daemon is
reported at once.`,
		Example: `  medallionctl status
  medallionctl status -o json
  medalliond run & medallionctl status --wait 10s`,
		Args: exactArgs(),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().DurationVar(&wait, "wait", 0, "keep trying for up to this `duration` (e.g. 10s) until the daemon answers")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if wait < 0 {
			return usageErrorf("--wait must not be negative (got %s)", wait)
		}
		st, err := a.waitStatus(cmd.Context(), wait)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, st)
		}
		return a.printStatus(st)
	}
	return cmd
}

// waitStatus asks for the daemon's status, retrying while it is unreachable
// for up to wait.
func (a *app) waitStatus(ctx context.Context, wait time.Duration) (*api.Status, error) {
	c := a.client()
	if wait <= 0 {
		return c.Status(ctx)
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	interval := waitFirstInterval
	var lastErr error
	for said := false; ; said = true {
		st, err := c.Status(waitCtx)
		if err == nil {
			return st, nil
		}
		switch {
		case ctx.Err() != nil:
			// Interrupted by the user: not a timeout.
			return nil, err
		case errors.Is(err, client.ErrUnreachable):
			lastErr = err
		case waitCtx.Err() != nil:
			// The deadline cut a request short; the useful news is why the
			// daemon was not answering before, when there is one.
			if lastErr == nil {
				lastErr = err
			}
			return nil, fmt.Errorf("gave up waiting for medalliond after %s: %w", wait, lastErr)
		default:
			// The daemon answered, with an error: waiting will not help.
			return nil, err
		}
		if !said {
			// Say why the command is silent, once; scripts keep stdout clean.
			fmt.Fprintf(a.stderr, "medallionctl: waiting up to %s for medalliond at %s\n", wait, a.socket)
		}
		t := time.NewTimer(interval)
		select {
		case <-waitCtx.Done():
			t.Stop()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("gave up waiting for medalliond after %s: %w", wait, lastErr)
		case <-t.C:
		}
		interval = min(2*interval, waitMaxInterval)
	}
}

func (a *app) printStatus(st *api.Status) error {
	tw := newTable(a.stdout)
	fmt.Fprintf(tw, "medalliond\t%s (pid %d)\n", cell(st.Version), st.PID)
	uptime := (time.Duration(st.UptimeSec) * time.Second).String()
	if st.StartedAt != "" {
		uptime += " (since " + when(st.StartedAt) + ")"
	}
	fmt.Fprintf(tw, "uptime\t%s\n", uptime)
	fmt.Fprintf(tw, "socket\t%s\n", cell(st.Socket))
	fmt.Fprintf(tw, "data dir\t%s\n", cell(st.DataDir))
	fmt.Fprintf(tw, "medallions\t%d\n", st.Medallions)
	fmt.Fprintf(tw, "store size\t%s\n", humanBytes(st.StoreBytes))
	if d := st.Disk; d != nil {
		// On a full disk the daemon's sentence says what stopped and
		// that it resumes by itself; otherwise the headroom is enough.
		disk := humanBytes(d.FreeBytes) + " free"
		if d.Message != "" {
			disk = d.Message
		}
		fmt.Fprintf(tw, "disk\t%s\n", cell(disk))
	}
	if st.StoreDamage != "" {
		fmt.Fprintf(tw, "store\t%s\n", cell(st.StoreDamage))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if st.Ingest != nil {
		if err := printIngest(a.stdout, st.Ingest); err != nil {
			return err
		}
	}
	if st.LLM != nil {
		printLLM(a.stdout, st.LLM)
	}
	return nil
}

// printIngest prints the ingestion part of the status: what is watched,
// what was read from it, what was left out and why, and how far behind the
// daemon is.
func printIngest(w io.Writer, in *api.IngestStatus) error {
	fmt.Fprintf(w, "\nWatches\n")
	if len(in.Watches) == 0 {
		fmt.Fprintf(w, "  none: no watch block is configured and no default transcript folder exists\n")
	} else {
		tw := newTable(w)
		fmt.Fprintln(tw, "  NAME\tFORMAT\tFILES\tPATH")
		for _, ws := range in.Watches {
			path := cell(ws.Path)
			if !ws.Exists {
				path += " (does not exist yet; watched once it does)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", cell(ws.Name), cell(ws.Format), ws.Files, path)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "\nIngestion\n")
	// Keys are padded by hand rather than by a tabwriter so that the skip
	// reasons, a table of their own under the value column, do not widen
	// the key column of the whole block.
	const keyWidth = len("watched dirs")
	row := func(key, format string, args ...any) {
		fmt.Fprintf(w, "  %-*s  %s\n", keyWidth, key, fmt.Sprintf(format, args...))
	}
	row("watched dirs", "%d", in.WatchedDirs)
	row("files", "%d", in.Files)
	row("ingested", "%s, %d lines, %d events", humanBytes(in.Bytes), in.Lines, in.Events)
	row("duplicates", "%d", in.Duplicates)
	reasons := skippedByCount(in.Skipped)
	if len(reasons) == 0 {
		row("skipped", "none")
	} else {
		var total int64
		for _, r := range reasons {
			total += r.n
		}
		row("skipped", "%d", total)
		tw := newTable(w)
		for _, r := range reasons {
			fmt.Fprintf(tw, "  %*s    %s\t%d\n", keyWidth, "", cell(r.reason), r.n)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	// The kinds count medallion writes too, which the total leaves out.
	redacted := in.Redactions
	if n := sum(in.RedactionsByKind); n > redacted {
		redacted = n
	}
	row("redactions", "%s", byKind(redacted, in.RedactionsByKind))
	backlog := "up to date"
	if in.BacklogBytes > 0 {
		backlog = humanBytes(in.BacklogBytes) + " not read yet"
	}
	row("backlog", "%s", backlog)
	last := "never"
	if in.LastIngestAt != "" {
		last = when(in.LastIngestAt)
		if t, err := medallion.ParseTime(in.LastIngestAt); err == nil {
			last += " (" + ago(t) + ")"
		}
	}
	row("last ingest", "%s", last)
	row("sessions", "%d (%d events buffered, %s)", in.Sessions, in.BufferedEvents, plural(int(in.Checkpoints), "checkpoint"))

	if len(in.Errors) > 0 {
		fmt.Fprintf(w, "\nRecent errors (newest first)\n")
		for _, e := range in.Errors {
			fmt.Fprintf(w, "  - %s\n", text(e, "    "))
		}
	}
	return nil
}

// skipReason is one reason lines were skipped and how many were.
type skipReason struct {
	reason string
	n      int64
}

// skippedByCount orders the skip reasons most frequent first, then by name,
// leaving out zero counts.
func skippedByCount(m map[string]int64) []skipReason {
	out := make([]skipReason, 0, len(m))
	for r, n := range m {
		if n > 0 {
			out = append(out, skipReason{r, n})
		}
	}
	slices.SortFunc(out, func(a, b skipReason) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return strings.Compare(a.reason, b.reason)
	})
	return out
}

func sum(counts map[string]int64) int64 {
	var n int64
	for _, v := range counts {
		n += v
	}
	return n
}
