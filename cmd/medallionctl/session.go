package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Paging of session show. A page stays well under the daemon's cap of
// 10000 so that one answer stays small; the default shows what fits a
// screen or two.
const (
	episodePage         = 1000
	defaultEpisodeShown = 50
)

// summaryWidth bounds the summary column of an episode line so that a line
// fits a terminal next to the other columns.
const summaryWidth = 72

func (a *app) sessionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Look into one agent session",
		Long: `Session groups the commands about one agent session; "medallionctl sessions"
lists them with their ids.`,
		Example: `  medallionctl session show 0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d`,
		Args:    noSubcommand,
		// cobra applies its default distance only on its own error path.
		SuggestionsMinimumDistance: 2,
		RunE:                       func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.sessionShowCommand())
	return cmd
}

func (a *app) sessionShowCommand() *cobra.Command {
	var (
		all   bool
		limit int
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session and its buffered episode",
		Long: `Show prints one session: its agent, scope, working directory and git branch,
how many events of each kind were ingested, how many wait in its episode
buffer, its checkpoints and the transcript files it was read from.

Then the buffered episode, the events since the session's last checkpoint,
one line per event: its sequence number in the buffer, its time (UTC; the
date is shown when it changes), its kind, the tool, whether a tool call
failed (FAILED, or its exit code) and a one-line summary: the command run,
the files touched, the search, or the first line of the text. A checkpoint
hands the buffered episode to the curator and empties the buffer.

It shows the first --limit events (` + strconv.Itoa(defaultEpisodeShown) + ` by default); --all shows every one,
fetched from the daemon page by page. -o json prints the session and the
events as the API returns them, with their text in full.

Session ids come from "medallionctl sessions"; a subagent's id contains a
"/" and is given as it is.`,
		Example: `  medallionctl session show 0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d
  medallionctl session show 0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d/agent-a1b2 --all
  medallionctl session show 0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d --limit 500 -o json`,
		Args: exactArgs("ID"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "show every buffered event, not only the first --limit")
	cmd.Flags().IntVar(&limit, "limit", defaultEpisodeShown, "show the first `N` buffered events")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if all && cmd.Flags().Changed("limit") {
			return usageErrorf("give --all or --limit, not both")
		}
		if limit < 1 {
			return usageErrorf("--limit must be at least 1 (got %d)", limit)
		}
		if all {
			limit = -1
		}
		resp, more, err := fetchEpisode(cmd.Context(), a.client(), args[0], limit)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, resp)
		}
		return renderSession(a.stdout, resp, more)
	}
	return cmd
}

// noSubcommand lets a command that only groups others run (to print its
// help) while an unknown subcommand stays a usage error; cobra would
// otherwise print the help and exit 0.
func noSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return usageErrorf("%s", msg)
}

// fetchEpisode reads session id and the first limit of its buffered events
// (every one when limit < 0), page by page. more reports that events beyond
// limit are buffered: one event more than shown is asked for to know it.
func fetchEpisode(ctx context.Context, c *client.Client, id string, limit int) (resp *api.SessionResponse, more bool, err error) {
	want := limit + 1
	var after uint64
	for {
		n := episodePage
		if limit >= 0 {
			n = min(n, want-len(eventsOf(resp)))
		}
		page, err := c.Session(ctx, id, after, n)
		if err != nil {
			return nil, false, err
		}
		if resp == nil {
			resp = page
		} else {
			resp.Events = append(resp.Events, page.Events...)
		}
		if len(page.Events) < n || (limit >= 0 && len(resp.Events) >= want) {
			break
		}
		last := page.Events[len(page.Events)-1].Seq
		if last <= after {
			// A daemon that does not move forward would loop us forever.
			return nil, false, fmt.Errorf("session %s: medalliond returned events from seq %d when asked for those after %d", id, last, after)
		}
		after = last
	}
	if limit >= 0 && len(resp.Events) > limit {
		resp.Events, more = resp.Events[:limit], true
	}
	return resp, more, nil
}

func eventsOf(r *api.SessionResponse) []episode.BufferedEvent {
	if r == nil {
		return nil
	}
	return r.Events
}

// renderSession prints the session's summary and then its buffered events,
// one line each.
func renderSession(w io.Writer, resp *api.SessionResponse, more bool) error {
	s := resp.Session
	tw := newTable(w)
	fmt.Fprintf(tw, "session\t%s\n", cell(s.ID))
	if s.ParentID != "" {
		fmt.Fprintf(tw, "parent\t%s\n", cell(s.ParentID))
	}
	fmt.Fprintf(tw, "agent\t%s\n", cell(s.Agent))
	fmt.Fprintf(tw, "scope\t%s\n", list(s.Scope))
	fmt.Fprintf(tw, "cwd\t%s\n", cell(s.CWD))
	fmt.Fprintf(tw, "branch\t%s\n", cell(s.GitBranch))
	fmt.Fprintf(tw, "events\t%s\n", byKind(s.Events, s.ByKind))
	fmt.Fprintf(tw, "buffered\t%d\n", s.Buffered)
	fmt.Fprintf(tw, "first event\t%s\n", stamp(s.FirstEventAt))
	fmt.Fprintf(tw, "last event\t%s\n", withAgo(s.LastEventAt))
	fmt.Fprintf(tw, "last ingest\t%s\n", withAgo(s.LastIngestAt))
	checkpoints := "none"
	if s.Checkpoints > 0 {
		checkpoints = fmt.Sprintf("%d, the last %s", s.Checkpoints, withAgo(s.LastCheckpointAt))
	}
	fmt.Fprintf(tw, "checkpoints\t%s\n", checkpoints)
	for i, f := range s.Files {
		key := ""
		if i == 0 {
			key = "files"
		}
		fmt.Fprintf(tw, "%s\t%s\n", key, cell(f))
	}
	if len(s.Files) == 0 {
		fmt.Fprintf(tw, "files\t-\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(resp.Events) == 0 {
		msg := "\nNo buffered events"
		if s.Checkpoints > 0 {
			msg += ": the last checkpoint took them"
		}
		_, err := fmt.Fprintln(w, msg+".")
		return err
	}
	fmt.Fprintf(w, "\nBuffered episode\n")
	tw = newTable(w)
	fmt.Fprintln(tw, "  SEQ\tTIME\tKIND\tTOOL\tRESULT\tSUMMARY")
	day := ""
	for _, be := range resp.Events {
		e := be.Event
		at := "-"
		if !e.Time.IsZero() {
			t := e.Time.UTC()
			at = t.Format("15:04:05")
			if d := t.Format("2006-01-02"); d != day {
				at, day = d+" "+at, d
			}
		}
		kind := string(e.Kind)
		if e.Subtype != "" {
			kind += ":" + e.Subtype
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", be.Seq, at, cell(kind), cell(e.Tool), outcome(e), summary(e))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more {
		shown := int64(len(resp.Events))
		total := max(s.Buffered, shown+1)
		_, err := fmt.Fprintf(w, "\nShowing the first %d of %d buffered events; --all shows every one.\n", shown, total)
		return err
	}
	return nil
}

// withAgo renders t exactly and how long ago it was.
func withAgo(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return stamp(t) + " (" + ago(t) + ")"
}

// byKind renders an event count and its split by kind, kinds in the order a
// turn produces them and any others after, by name.
func byKind(total int64, counts map[string]int64) string {
	if total == 0 && len(counts) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range transcript.Kinds {
		if n := counts[string(k)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if !transcript.Kind(k).Valid() && counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", cell(k), counts[k]))
		}
	}
	if len(parts) == 0 {
		return strconv.FormatInt(total, 10)
	}
	return fmt.Sprintf("%d: %s", total, strings.Join(parts, ", "))
}

// outcome marks how a tool call ended: its exit code when not 0, FAILED when
// the transcript says it failed without one, ok when it succeeded; empty for
// events that are not results.
func outcome(e transcript.Event) string {
	switch {
	case e.ExitCode != nil && *e.ExitCode != 0:
		return fmt.Sprintf("exit %d", *e.ExitCode)
	case e.OK != nil && !*e.OK:
		return "FAILED"
	case e.OK != nil || e.ExitCode != nil:
		return "ok"
	}
	return ""
}

// summary says in one line what the event was about: for a tool call what
// it acted on, for anything else the first line of its text.
func summary(e transcript.Event) string {
	var parts []string
	if e.Kind == transcript.KindPlanUpdate && len(e.Todos) > 0 {
		parts = append(parts, todoSummary(e.Todos))
	} else {
		acted := actedOn(e)
		text := firstLine(e.Text)
		if e.Kind == transcript.KindToolCall {
			parts = append(parts, acted, text)
		} else {
			parts = append(parts, text, acted)
		}
	}
	for _, p := range parts {
		if p = cell(p); p != "-" {
			return clip(p, summaryWidth)
		}
	}
	return "-"
}

// actedOn names what a tool call acted on: the command, the files (with the
// search pattern, when there is one), the search, or the URL.
func actedOn(e transcript.Event) string {
	switch {
	case e.Command != "":
		return "$ " + firstLine(e.Command)
	case len(e.FilePaths) > 0 && e.Query != "":
		return e.Query + " in " + strings.Join(e.FilePaths, ", ")
	case len(e.FilePaths) > 0:
		return strings.Join(e.FilePaths, ", ")
	case e.Query != "":
		return e.Query
	}
	return e.URL
}

// todoSummary counts a todo list by status and names the item in progress.
func todoSummary(todos []transcript.Todo) string {
	var done, doing, pending int
	current := ""
	for _, t := range todos {
		switch t.Status {
		case "completed":
			done++
		case "in_progress":
			doing++
			if current == "" {
				current = t.Content
			}
		default:
			pending++
		}
	}
	s := fmt.Sprintf("%s: %d done, %d in progress, %d pending", plural(len(todos), "todo"), done, doing, pending)
	if current != "" {
		s += "; now: " + firstLine(current)
	}
	return s
}

// firstLine returns the first line of s that is not blank.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if l := strings.TrimSpace(line); l != "" {
			return l
		}
	}
	return ""
}
