package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/version"
)

// versionTimeout keeps "medallionctl version" quick when the daemon hangs:
// the client's own version is the main answer.
const versionTimeout = 2 * time.Second

// versions is the -o json output of the version command.
type versions struct {
	Client string `json:"client"`
	// Server is empty when the daemon could not be asked; ServerError says why.
	Server      string `json:"server,omitempty"`
	ServerError string `json:"server_error,omitempty"`
}

func (a *app) versionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the versions of medallionctl and medalliond",
		Long: `Version prints medallionctl's version and, when the daemon answers, the
version of the running medalliond. A daemon that is down is reported, not
treated as an error: the exit code is 0 either way.

Different versions usually mean medalliond was not restarted after an upgrade.`,
		Example: `  medallionctl version
  medallionctl version -o json`,
		Args: exactArgs(),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		v := versions{Client: version.String()}
		c := a.client()
		// This command shows both versions anyway; no separate warning.
		c.OnVersionMismatch = nil
		c.Timeout = versionTimeout
		ctx, cancel := context.WithTimeout(cmd.Context(), versionTimeout)
		defer cancel()
		if st, err := c.Status(ctx); err != nil {
			v.ServerError = err.Error()
		} else {
			v.Server = st.Version
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, v)
		}
		tw := newTable(a.stdout)
		fmt.Fprintf(tw, "medallionctl\t%s\n", cell(v.Client))
		if v.ServerError != "" {
			fmt.Fprintf(tw, "medalliond\tunknown (%s)\n", v.ServerError)
		} else {
			fmt.Fprintf(tw, "medalliond\t%s\n", cell(v.Server))
		}
		return tw.Flush()
	}
	return cmd
}
