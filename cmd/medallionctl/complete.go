package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds the daemon request behind a shell completion:
// a shell waits for it on every Tab.
const completionTimeout = 2 * time.Second

// completeIDs offers the stored medallion ids, each described by its scope
// and version, for a command's first argument.
func (a *app) completeIDs(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.idCompletions(cmd, ""), cobra.ShellCompDirectiveNoFileComp
}

// completeItems offers "ID:" for an ITEM address, to be completed with the
// item's REF (no space after it).
func (a *app) completeItems(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.idCompletions(cmd, ":"), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// idCompletions asks the daemon for every medallion id; a daemon that is
// down or slow gives no completions rather than an error in the prompt.
func (a *app) idCompletions(cmd *cobra.Command, suffix string) []string {
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	resp, err := a.client().IDs(ctx)
	if err != nil {
		cobra.CompDebugln(fmt.Sprintf("medallion ids: %v", err), true)
		return nil
	}
	out := make([]string, 0, len(resp.Medallions))
	for _, m := range resp.Medallions {
		out = append(out, fmt.Sprintf("%s%s\t%s (version %d)", m.ID, suffix, m.Scope, m.Version))
	}
	return out
}
