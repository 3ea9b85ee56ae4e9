package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
)

// itemCommand builds "forget", "edit", "pin" or "unpin": the user's say
// over any one item of a medallion, whoever wrote it. They take the
// review commands' addresses and flags and print their kind of answer.
func (a *app) itemCommand(action string) *cobra.Command {
	var req api.ItemActionRequest
	info := map[string]struct{ short, long, example, past string }{
		api.ItemForget: {
			short: "Remove an item for good: no curator brings it back from the same evidence",
			long: `Forget removes one item from its medallion — a decision, an open question, a
rule, a known fix, an entry point, a subsystem or the summary — whoever
wrote it: the curator from a session (Tier 0), a model (Tier 1) or you.

The medallion remembers a fingerprint of the item's text and the events it
was taken from, not the text itself: a later checkpoint that extracts the
same words, or an item from nothing but those events, leaves it out. Earlier
versions still hold it ("medallionctl history ID", "show ID --version N").`,
			example: `  medallionctl forget med-3f2a:invariant:2
  medallionctl forget D-004 --node repo:muse`,
			past: "forgot",
		},
		api.ItemEdit: {
			short: "Replace an item's text with yours",
			long: `Edit replaces the text of one item — a decision's statement, a question, a
rule, a known fix, an entry point, the summary, a subsystem's notes — with
--text, keeping the rest of it (a decision's rationale, a question's
priority). The old wording is forgotten: a later checkpoint does not add it
again beside yours. A model-made item you edit counts as approved.

Edit does not pin: a curator may still supersede a decision or resolve a
question you edited. "medallionctl pin ITEM" keeps it as you left it.`,
			example: `  medallionctl edit med-3f2a:invariant:2 --text "never edit generated files; run make gen"
  medallionctl edit Q-001 --node repo:muse --text "Accept CRLF line endings?"`,
			past: "edited",
		},
		api.ItemPin: {
			short: "Keep an item as it is: no curator changes or removes it, the load always shows it",
			long: `Pin keeps one item as it stands: no curator (Tier 0 or a model) changes,
supersedes, resolves or removes it — a checkpoint that would gets it back
as you left it — and "medallionctl load" always includes it, even when the
token budget is spent (pinned items are placed first; many pins make a
load longer than its budget). "medallionctl unpin ITEM" lets it go.`,
			example: `  medallionctl pin med-3f2a:D-002
  medallionctl pin invariant:1 --node repo:muse`,
			past: "pinned",
		},
		api.ItemUnpin: {
			short:   "Let curators change a pinned item again, and the load budget leave it out",
			long:    `Unpin undoes "medallionctl pin": the item stays, and curators and the load's token budget treat it like any other again.`,
			example: `  medallionctl unpin med-3f2a:D-002`,
			past:    "unpinned",
		},
	}[action]
	use := action + " ITEM"
	if action == api.ItemEdit {
		use += " --text TEXT"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   info.short,
		Long:    info.long + "\n\nEvery change is stored as a new version by \"user\": \"medallionctl history ID\"\nshows it and \"medallionctl diff ID\" what it did.\n\n" + addressHelp,
		Example: info.example,
		Args:    exactArgs("ITEM"),
		// The ITEM is an address: offer the medallion ids to start it.
		ValidArgsFunction: a.completeItems,
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringArrayVar(&req.Nodes, "node", nil, "scope `node`: where to find an ITEM given without its medallion (repeatable)")
	cmd.Flags().StringArrayVar(&req.Tags, "tag", nil, "scope `tag`, like --node (repeatable; any one matches)")
	if action == api.ItemEdit {
		cmd.Flags().StringVar(&req.Text, "text", "", "the item's new `text`")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		req.Action, req.Item = action, strings.TrimSpace(args[0])
		switch {
		case req.Item == "":
			return usageErrorf("%s needs an ITEM such as med-3f2a:D-003", action)
		case action == api.ItemEdit && strings.TrimSpace(req.Text) == "":
			return usageErrorf("edit needs --text with the new text")
		}
		resp, err := a.client().ItemAct(cmd.Context(), req)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, resp)
		}
		return printItemChanges(a.stdout, info.past, false, resp.Changes)
	}
	return cmd
}
