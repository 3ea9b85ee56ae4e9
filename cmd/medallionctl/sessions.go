package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/episode"
)

func (a *app) sessionsCommand() *cobra.Command {
	var (
		agent, scope string
		limit        int
	)
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List the agent sessions medalliond has ingested",
		Long: `Sessions lists every agent session medalliond has read from the transcript
folders it watches, most recently active first:

  SESSION        the session id, for "medallionctl session show ID"
                 (a subagent's id is its parent's id, "/", its own)
  AGENT          the program that wrote the transcript: claude-code, codex …
  SCOPE          the graph nodes its episodes are curated into, found from
                 the session's working directory (its git repo: repo:NAME)
  EVENTS         every event ingested from the session
  BUFFERED       the events waiting in its episode buffer for the next
                 checkpoint
  LAST ACTIVITY  when its latest event happened (exact times: -o json)
  CWD            the working directory of the agent

--agent and --scope keep only the sessions of that agent, or whose scope
includes that graph node; --limit shows at most N.

No session is not an error: a note goes to stderr and the exit code is 0.`,
		Example: `  medallionctl sessions
  medallionctl sessions --agent codex --limit 5
  medallionctl sessions --scope repo:muse -o json`,
		Args: exactArgs(),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&agent, "agent", "", "show only sessions of this `agent` (claude-code, codex …)")
	cmd.Flags().StringVar(&scope, "scope", "", "show only sessions whose scope includes graph `node`, e.g. repo:muse")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most `N` sessions (0: all)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if limit < 0 {
			return usageErrorf("--limit must not be negative (got %d)", limit)
		}
		all, err := a.client().Sessions(cmd.Context())
		if err != nil {
			return err
		}
		// Filtered here: a machine has hundreds of sessions, not millions,
		// and the daemon's list is the one answer every filter starts from.
		shown := make([]episode.SessionInfo, 0, len(all))
		for _, s := range all {
			if (agent == "" || s.Agent == agent) && (scope == "" || slices.Contains(s.Scope, scope)) {
				shown = append(shown, s)
			}
		}
		// Ordered by the time the table shows: the daemon's order may follow
		// when it read a session, which after a backfill is the same for all.
		slices.SortStableFunc(shown, func(x, y episode.SessionInfo) int {
			return lastActivity(y).Compare(lastActivity(x))
		})
		if limit > 0 && len(shown) > limit {
			shown = shown[:limit]
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, api.SessionsResponse{Sessions: shown})
		}
		if len(shown) == 0 {
			fmt.Fprintln(a.stderr, noSessions(len(all), agent, scope))
			return nil
		}
		tw := newTable(a.stdout)
		fmt.Fprintln(tw, "SESSION\tAGENT\tSCOPE\tEVENTS\tBUFFERED\tLAST ACTIVITY\tCWD")
		for _, s := range shown {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n",
				cell(s.ID), cell(s.Agent), list(s.Scope), s.Events, s.Buffered, ago(lastActivity(s)), cell(s.CWD))
		}
		return tw.Flush()
	}
	return cmd
}

// lastActivity is when the session last did something: its newest event's
// own timestamp, or, for transcripts without timestamps, when the daemon
// ingested it.
func lastActivity(s episode.SessionInfo) time.Time {
	if !s.LastEventAt.IsZero() {
		return s.LastEventAt
	}
	return s.LastIngestAt
}

// noSessions explains an empty list: nothing ingested at all points at
// status (what is watched), a filter that matched nothing says so.
func noSessions(total int, agent, scope string) string {
	if total == 0 {
		return "no sessions yet: medalliond has not ingested any transcript (medallionctl status shows what it watches)"
	}
	var by []string
	if agent != "" {
		by = append(by, "agent "+agent)
	}
	if scope != "" {
		by = append(by, "scope "+scope)
	}
	return fmt.Sprintf("no sessions found for %s (%d in all)", cell(strings.Join(by, ", ")), total)
}
