package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
)

func (a *app) searchCommand() *cobra.Command {
	var req api.SearchRequest
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the items of every medallion version, superseded and resolved ones included",
		Long: `Search ranks the decisions, rules, known fixes and dead ends, open questions,
subsystems, entry points and summaries of every version of every medallion
against QUERY (BM25 over words; snake_case, camelCase and paths are split, and
the whole identifier counts too), best first. An item that has since left its
medallion is found as well and marked: superseded (by the decision that
replaced it), resolved, revised (its text changed), removed or rejected.

Each result names the item as "medallionctl show" and the MCP get tool take
it, MEDALLION_ID:REF, with the version holding it. --node keeps the
medallions of a scope.`,
		Example: `  medallionctl search "tempo changes"
  medallionctl search LatestForScope --node repo:medallion
  medallionctl search "connection refused" -o json`,
		Args: exactArgs("QUERY"),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringArrayVar(&req.Nodes, "node", nil, "only medallions whose scope holds this graph `node` (repeatable)")
	cmd.Flags().IntVar(&req.Limit, "limit", api.DefaultSearchLimit, fmt.Sprintf("at most `N` results (1 to %d)", api.MaxSearchLimit))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		req.Query = args[0]
		if strings.TrimSpace(req.Query) == "" {
			return usageErrorf("search needs a QUERY: a few keywords, an identifier or an error message")
		}
		if req.Limit < 1 || req.Limit > api.MaxSearchLimit {
			return usageErrorf("--limit must be from 1 to %d (got %d)", api.MaxSearchLimit, req.Limit)
		}
		resp, err := a.client().Search(cmd.Context(), req)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, resp)
		}
		return printSearch(a.stdout, resp)
	}
	return cmd
}

// printSearch prints one block per result: the address, kind, state and
// versions, then the text indented.
func printSearch(w io.Writer, resp *api.SearchResponse) error {
	if len(resp.Results) == 0 {
		_, err := fmt.Fprintf(w, "Nothing matches %s (%d items indexed).\n", cell(resp.Query), resp.Indexed)
		return err
	}
	for _, r := range resp.Results {
		state := r.State
		if r.By != "" {
			state += " by " + r.By
		}
		versions := fmt.Sprintf("v%d", r.Version)
		if r.FirstVersion != r.Version {
			versions = fmt.Sprintf("v%d-v%d", r.FirstVersion, r.Version)
		}
		if r.Review == "pending" {
			state += ", unreviewed (" + r.Source + ")"
		}
		if _, err := fmt.Fprintf(w, "%s  %s  %s  %s  %.2f\n  %s\n\n", cell(r.Item), r.Kind, cell(state), versions, r.Score, text(r.Text, "  ")); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d of %d matching items (%d indexed); medallionctl show MEDALLION_ID --version N shows the version.\n", len(resp.Results), resp.Matched, resp.Indexed)
	return err
}
