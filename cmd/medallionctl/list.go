package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
)

func (a *app) listCommand() *cobra.Command {
	var (
		nodes, tags []string
		limit       int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the latest medallions of a scope",
		Long: `List shows the latest version of each medallion in a scope, most recently
updated first.

Medallions are found by scope: --node keeps those whose graph nodes include
every node given (repeat it to require several); --tag keeps those that share
at least one of the tags given; at least one --node or --tag is required.
--limit caps how many are shown.

Nothing found is not an error: a note goes to stderr and the exit code is 0.`,
		Example: `  medallionctl list --node repo:muse
  medallionctl list --node repo:muse --node module:cli
  medallionctl list --tag project_state --limit 3 -o json`,
		Args: exactArgs(),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringArrayVar(&nodes, "node", nil, "graph `node` the medallions must include, e.g. repo:muse (repeatable)")
	cmd.Flags().StringArrayVar(&tags, "tag", nil, "`tag` the medallions may carry, e.g. project_state (repeatable; any one matches)")
	cmd.Flags().IntVar(&limit, "limit", api.DefaultListLimit, "show at most `N` medallions")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if limit <= 0 {
			return usageErrorf("--limit must be at least 1 (got %d)", limit)
		}
		if len(nodes) == 0 && len(tags) == 0 {
			// The daemon refuses an empty scope too: medallions are only
			// ever found by scope, there is no "list everything".
			return usageErrorf("list needs at least one --node or --tag (e.g. --node repo:muse)")
		}
		scope := medallion.Scope{GraphNodes: nodes, Tags: tags}
		ms, err := a.client().List(cmd.Context(), scope, limit)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, api.ListResponse{Medallions: ms})
		}
		if len(ms) == 0 {
			fmt.Fprintln(a.stderr, noneFound(scope))
			return nil
		}
		tw := newTable(a.stdout)
		fmt.Fprintln(tw, "ID\tVERSION\tSTATUS\tUPDATED\tNODES\tTAGS\tMODEL")
		for _, m := range ms {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n",
				cell(m.Meta.MedallionID), m.Meta.Version, cell(string(m.Meta.Status)), when(m.Meta.UpdatedAt),
				list(m.Scope.GraphNodes), list(m.Scope.Tags), cell(m.Meta.Model))
		}
		return tw.Flush()
	}
	return cmd
}

// noneFound says what was searched when nothing matched.
func noneFound(s medallion.Scope) string {
	var parts []string
	for _, n := range s.GraphNodes {
		parts = append(parts, "node "+n)
	}
	for _, t := range s.Tags {
		parts = append(parts, "tag "+t)
	}
	return "no medallions found for " + cell(strings.Join(parts, ", "))
}
