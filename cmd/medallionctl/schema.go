package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/medallion"
)

func (a *app) schemaCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of a medallion",
		Long: `Schema prints the JSON Schema (draft 2020-12) of the medallion format this
build reads and writes (` + medallion.SchemaVersion + `): every field, which are required, the allowed
values of status, subsystem status and priority, and the range of
confidence. It is derived from the same Go types the daemon validates
against, and it works without a running daemon.

Use it to check a hand-written medallion before "medallionctl put", or to
give an LLM the exact shape to produce.`,
		Example: `  medallionctl schema > medallion.schema.json`,
		Args:    exactArgs(),
		RunE: func(*cobra.Command, []string) error {
			b, err := medallion.JSONSchema()
			if err != nil {
				return fmt.Errorf("build schema: %w", err)
			}
			_, err = fmt.Fprintf(a.stdout, "%s\n", b)
			return err
		},
	}
}
