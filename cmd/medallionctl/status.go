package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
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
directory, how many medallions it stores and how much disk the store uses.

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
	return tw.Flush()
}
