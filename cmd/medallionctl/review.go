package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
)

// maxEventIDs caps the event ids printed per evidence entry; -o json has
// them all.
const maxEventIDs = 6

// addressHelp teaches the item addresses; every review and item command
// shows it.
const addressHelp = `An ITEM is written MEDALLION_ID:REF, or REF alone when only one medallion
(of --node/--tag, when given) holds such an item at REF. REF is:

  D-003              a decision, by its id
  Q-001              an open question, by its id
  invariant:2        the 2nd invariant (rules), counting from 1
  avoid_repeating:1  the 1st "avoid repeating" item (known fixes)
  entry_point:3      the 3rd recommended entry point
  subsystem:1        the 1st subsystem (not for review: no model writes them)
  summary            the summary paragraph

"medallionctl show ID" shows a medallion's items, "medallionctl review" the
model-made ones, with their addresses. List positions are those of the
medallion as it stands: removing invariant:2 moves invariant:3 up to
invariant:2, so list again before the next one.`

func (a *app) reviewCommand() *cobra.Command {
	var req client.ReviewRequest
	cmd := &cobra.Command{
		Use:   "review [--node N]... [--tag T]...",
		Short: "List what a model wrote and nobody has reviewed; approve, reject or edit it",
		Long: `With an llm block in the config, a model (Tier 1) adds decisions, open
questions, rules, known fixes, entry points and the summary to medallions.
Each such item stays "pending" until you approve, reject or edit it.

Review lists the pending items of every medallion, or of the medallions of a
scope (--node, --tag): the address to act on, the kind of item, the model
that wrote it, its text and the evidence it was taken from (the session and
its events: "medallionctl session show SESSION" shows them). --state lists
approved or rejected items instead, or all.

While pending, an item reaches the load marked "(unreviewed)"; with
review = "required" in the llm block it stays out of the load until it is
approved; with review = "off" it is shown unmarked.

  review approve ITEM            keep the item as it is
  review reject ITEM             remove it; the curator never adds it again
  review edit ITEM --text T      replace its text, and approve it
  review approve --all --node N  settle every pending item of a scope
                                 (reject --all too)

Every change is stored as a new version of the medallion by "user", so
"medallionctl history ID" shows who changed what when, and "medallionctl
diff ID" what a reject or an edit took out or rewrote.

` + addressHelp,
		Example: `  medallionctl review
  medallionctl review --node repo:muse
  medallionctl review approve muse-state:D-003
  medallionctl review reject invariant:2
  medallionctl review edit muse-state:Q-001 --text "Should the cap be per day or per session?"
  medallionctl review approve --all --node repo:muse`,
		// review lists; its arguments can only be a mistyped subcommand.
		Args:                       noSubcommand,
		SuggestionsMinimumDistance: 2,
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringArrayVar(&req.Nodes, "node", nil, "only medallions whose graph nodes include `node` (repeatable)")
	cmd.Flags().StringArrayVar(&req.Tags, "tag", nil, "only medallions carrying `tag` (repeatable; any one matches)")
	cmd.Flags().StringVar(&req.State, "state", "pending", "list items in `state`: pending, approved, rejected or all")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		switch req.State {
		case "pending", "approved", "rejected", "all":
		default:
			return usageErrorf("--state must be pending, approved, rejected or all (got %q)", req.State)
		}
		resp, err := a.client().Review(cmd.Context(), req)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, resp)
		}
		if len(resp.Items) == 0 {
			fmt.Fprintf(a.stderr, "no %s items in %s\n", stateWord(req.State), plural(resp.Medallions, "medallion"))
			return nil
		}
		return printReview(a.stdout, resp, req.State)
	}
	cmd.AddCommand(
		a.reviewActionCommand(api.ReviewApprove),
		a.reviewActionCommand(api.ReviewReject),
		a.reviewActionCommand(api.ReviewEdit),
	)
	return cmd
}

func stateWord(state string) string {
	if state == "all" {
		return "model-made"
	}
	return state
}

// printReview prints one block per item: the address and what it is, then
// its text, detail and evidence, indented.
func printReview(w io.Writer, resp *api.ReviewResponse, state string) error {
	p := &printer{w: w}
	mids := map[string]bool{}
	for i, it := range resp.Items {
		if i > 0 {
			p.linef("")
		}
		mids[it.MedallionID] = true
		p.linef("%s:%s  %s  %s  %s", cell(it.MedallionID), cell(it.Ref), cell(it.Kind), cell(string(it.State)), cell(it.Source))
		p.linef("  %s", text(it.Text, "  "))
		if it.Detail != "" {
			p.linef("  %s", text(it.Detail, "  "))
		}
		for _, e := range it.Evidence {
			ids := e.EventIDs
			more := ""
			if len(ids) > maxEventIDs {
				more = fmt.Sprintf(" … (%d more)", len(ids)-maxEventIDs)
				ids = ids[:maxEventIDs]
			}
			p.linef("  evidence: session %s, %s %s%s", cell(e.SessionID), eventsWord(len(e.EventIDs)), cell(strings.Join(ids, ", ")), more)
		}
	}
	p.linef("")
	noun := "items"
	if len(resp.Items) == 1 {
		noun = "item"
	}
	where := plural(len(mids), "medallion")
	if len(mids) < resp.Medallions {
		where = fmt.Sprintf("%d of %d medallions", len(mids), resp.Medallions)
	}
	p.linef("%d %s %s in %s.", len(resp.Items), stateWord(state), noun, where)
	if state == "pending" {
		p.linef("one item:        medallionctl review approve|reject ITEM")
		p.linef("                 medallionctl review edit ITEM --text \"…\"")
		p.linef("all of a scope:  medallionctl review approve|reject --all --node N")
	}
	return p.err
}

func eventsWord(n int) string {
	if n == 1 {
		return "event"
	}
	return "events"
}

// reviewActionCommand builds "review approve", "review reject" or
// "review edit".
func (a *app) reviewActionCommand(action string) *cobra.Command {
	var (
		req api.ReviewActionRequest
		all bool
	)
	short := map[string]string{
		api.ReviewApprove: "Approve a model-made item (or every pending one of a scope)",
		api.ReviewReject:  "Reject a model-made item: remove it for good (or every pending one of a scope)",
		api.ReviewEdit:    "Replace a model-made item's text, and approve it",
	}[action]
	long := map[string]string{
		api.ReviewApprove: `Approve keeps a model-made item as it is: it is no longer pending, and the
load shows it without the "(unreviewed)" mark (or at all, with
review = "required"). Approving an approved item changes nothing.

With --all and a scope (--node, --tag) it approves every pending item of
the medallions of that scope, one new version per medallion.`,
		api.ReviewReject: `Reject removes a model-made item from its medallion: a decision or question
is deleted, a list item leaves its list, a rejected summary is cleared. The
review entry stays, with the item's text, so that the curator is told and
never adds it again. An approved item can be rejected too.

With --all and a scope (--node, --tag) it rejects every pending item of
the medallions of that scope.`,
		api.ReviewEdit: `Edit replaces the text of a model-made item — a decision's statement, a
question, a list item or the summary — with --text, and approves it. The
rest of the item (a decision's rationale, a question's priority) is kept.`,
	}[action]
	example := map[string]string{
		api.ReviewApprove: `  medallionctl review approve muse-state:D-003
  medallionctl review approve invariant:2 --node repo:muse
  medallionctl review approve --all --node repo:muse`,
		api.ReviewReject: `  medallionctl review reject muse-state:avoid_repeating:1
  medallionctl review reject Q-004
  medallionctl review reject --all --tag project_state`,
		api.ReviewEdit: `  medallionctl review edit muse-state:D-003 --text "Stream MIDI; never buffer a whole track"
  medallionctl review edit summary --node repo:muse --text "Muse turns text scores into MIDI."`,
	}[action]
	use := action + " (ITEM | --all (--node N | --tag T)...)"
	if action == api.ReviewEdit {
		use = action + " ITEM --text TEXT"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    long + "\n\nEvery change is stored as a new version by \"user\".\n\n" + addressHelp,
		Example: example,
		Args: func(cmd *cobra.Command, args []string) error {
			if all {
				return exactArgs()(cmd, args)
			}
			return exactArgs("ITEM")(cmd, args)
		},
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringArrayVar(&req.Nodes, "node", nil, "scope `node`: where to find an ITEM given without its medallion, or what --all settles (repeatable)")
	cmd.Flags().StringArrayVar(&req.Tags, "tag", nil, "scope `tag`, like --node (repeatable; any one matches)")
	if action == api.ReviewEdit {
		cmd.Flags().StringVar(&req.Text, "text", "", "the item's new `text`")
	} else {
		cmd.Flags().BoolVar(&all, "all", false, "act on every pending item of the scope given by --node/--tag")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		req.Action, req.All = action, all
		if len(args) == 1 {
			req.Item = strings.TrimSpace(args[0])
			if req.Item == "" {
				return usageErrorf("%s needs an ITEM such as muse-state:D-003", action)
			}
		}
		switch {
		case all && len(req.Nodes)+len(req.Tags) == 0:
			return usageErrorf("--all needs a scope: --node N or --tag T (e.g. --all --node repo:muse)")
		case action == api.ReviewEdit && strings.TrimSpace(req.Text) == "":
			return usageErrorf("edit needs --text with the new text")
		}
		resp, err := a.client().ReviewAct(cmd.Context(), req)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, resp)
		}
		return printChanges(a.stdout, action, all, req, resp)
	}
	return cmd
}

// printChanges says what an action did, one line per item.
func printChanges(w io.Writer, action string, all bool, req api.ReviewActionRequest, resp *api.ReviewActionResponse) error {
	past := map[string]string{api.ReviewApprove: "approved", api.ReviewReject: "rejected", api.ReviewEdit: "edited"}[action]
	if len(resp.Changes) == 0 {
		p := &printer{w: w}
		scope := append(append([]string{}, req.Nodes...), req.Tags...)
		p.linef("nothing pending in %s: nothing %s", cell(strings.Join(scope, ", ")), past)
		return p.err
	}
	changes := make([]api.ItemChange, len(resp.Changes))
	for i, c := range resp.Changes {
		changes[i] = c.ItemChange
	}
	return printItemChanges(w, past, all, changes)
}

// printItemChanges says what a review or item action did (past: its verb
// in the past tense), one line per item, and with all a total.
func printItemChanges(w io.Writer, past string, all bool, changes []api.ItemChange) error {
	p := &printer{w: w}
	mids := map[string]bool{}
	for _, c := range changes {
		mids[c.MedallionID] = true
		addr := cell(c.MedallionID) + ":" + cell(c.Ref)
		if c.Note != "" {
			p.linef("%s: %s, nothing changed (version %d)", addr, cell(c.Note), c.Version)
			continue
		}
		p.linef("%s %s (version %d): %s", past, addr, c.Version, cell(clip(c.Text, 100)))
	}
	if all {
		p.linef("%s %s in %s", plural(len(changes), "item"), past, plural(len(mids), "medallion"))
	}
	return p.err
}
