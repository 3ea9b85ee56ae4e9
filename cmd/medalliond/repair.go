package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/daemon"
)

func (e *env) repairCommand() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Build a new store after damage, from what can be read and the newest export",
		Long: `Repair is for a store medalliond refuses to open because it is damaged (the
log says "the store under DATA_DIR/store is damaged"). With the daemon
stopped, it:

  1. moves DATA_DIR/store aside to DATA_DIR/store.damaged-<time> (it is
     never deleted: remove it yourself once you are satisfied);
  2. reads every medallion version it can from it, through Badger and
     straight from its value logs, past the damage;
  3. adds the medallions of the newest automatic export
     (DATA_DIR/exports, written daily) that it could not read whole;
  4. leaves the events to the next start: medalliond re-ingests the
     transcripts still on disk into the new store.

It prints what it recovered from where.

` + precedenceHelp,
		Example: `  medalliond service stop --user
  medalliond repair
  medalliond service start --user`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load(cmd, e.getenv)
			if err != nil {
				return err
			}
			rep, err := daemon.Repair(cmd.Context(), cfg, newLogger(cfg, e.stderr))
			if rep != nil {
				printRepair(e.stdout, rep, cfg.DataDir)
			}
			return err
		},
	}
	cf.register(cmd)
	return cmd
}

func printRepair(w io.Writer, rep *daemon.RepairReport, dataDir string) {
	if rep.Aside == "" {
		fmt.Fprintf(w, "no store under %s: a new one was created\n", dataDir)
	} else {
		fmt.Fprintf(w, "moved the old store aside to %s (delete it once you are satisfied)\n", rep.Aside)
		fmt.Fprintf(w, "read %d medallion versions from it (%d straight from its value logs), %d unreadable\n",
			rep.Salvage.Versions, rep.Salvage.FromLogs, rep.Salvage.Unreadable)
		if rep.SalvageErr != nil {
			fmt.Fprintf(w, "reading it stopped early: %v\n", rep.SalvageErr)
		}
		fmt.Fprintf(w, "stored %d medallions from it", rep.Salvaged)
		if rep.Partial > 0 {
			fmt.Fprintf(w, " (%d without their newest versions)", rep.Partial)
		}
		fmt.Fprintln(w)
	}
	if rep.Export == "" {
		fmt.Fprintln(w, "no automatic export to add (the daemon writes one a day under exports/)")
	} else {
		fmt.Fprintf(w, "added %d medallions from the export %s\n", rep.FromExport, rep.Export)
	}
	fmt.Fprintln(w, "start medalliond again (medalliond run, or medalliond service start): it re-ingests the transcripts still on disk")
}
