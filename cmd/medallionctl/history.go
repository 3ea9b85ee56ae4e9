package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) historyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history ID",
		Short: "List every stored version of a medallion",
		Long: `History lists every stored version of the medallion with the given id,
oldest first: its version number, when it was written, what wrote it (tier0,
an LLM, or user) and its status. Every update keeps the previous version, so
any of them can be read back with "medallionctl show ID --version N".`,
		Example: `  medallionctl history muse-project-state
  medallionctl history muse-project-state -o json`,
		Args:              exactArgs("ID"),
		ValidArgsFunction: a.completeIDs,
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		h, err := a.client().History(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, h)
		}
		tw := newTable(a.stdout)
		fmt.Fprintln(tw, "VERSION\tUPDATED\tMODEL\tSTATUS")
		for _, v := range h.Versions {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", v.Version, when(v.UpdatedAt), cell(v.Model), cell(string(v.Status)))
		}
		return tw.Flush()
	}
	return cmd
}
