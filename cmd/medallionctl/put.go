package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
)

// maxInputBytes caps a medallion file: real ones are a few KiB, and reading
// a huge file by mistake (a log, a binary) should fail fast.
const maxInputBytes = 8 << 20

func (a *app) putCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "put -f FILE",
		Short: "Create or update a medallion from a JSON file",
		Long: `Put stores the medallion in FILE (or stdin with -f -): it creates it when its
meta.medallion_id is new, else stores it as the next version, keeping every
earlier one (see "medallionctl history ID").

The file is one JSON medallion (see "medallionctl schema"). It is checked
here first, so a misspelt or unknown field fails with its JSON path instead
of being dropped; the daemon then validates the content and every invalid
field is listed. meta.created_at, meta.updated_at and meta.version may be
left out: the daemon sets them.

meta.version guards against lost updates: 0 (or absent) writes on top of
whatever is latest; N > 0 succeeds only if N is still the latest version,
so an edit of "medallionctl show ID -o json" cannot overwrite a newer one.

It prints "created ID (version 1)" or "updated ID (version N)".`,
		Example: `  medallionctl put -f medallion.json
  medallionctl show muse-project-state -o json > m.json && $EDITOR m.json && medallionctl put -f m.json
  generate-medallion | medallionctl put -f -`,
		Args: exactArgs(),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the medallion from `FILE` (- for stdin)")
	cmd.MarkFlagFilename("file", "json")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if file == "" {
			return usageErrorf("put needs -f FILE (or -f - for stdin)")
		}
		source, data, err := a.readInput(file)
		if err != nil {
			return err
		}
		m, err := decodeMedallion(source, data)
		if err != nil {
			return err
		}
		resp, err := a.client().Put(cmd.Context(), m)
		if err != nil {
			return putError(err, m.Meta.MedallionID)
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, resp)
		}
		id, version := m.Meta.MedallionID, m.Meta.Version
		if resp.Medallion != nil {
			id, version = resp.Medallion.Meta.MedallionID, resp.Medallion.Meta.Version
		}
		verb := "updated"
		if resp.Created {
			verb = "created"
		}
		_, err = fmt.Fprintf(a.stdout, "%s %s (version %d)\n", verb, cell(id), version)
		return err
	}
	return cmd
}

// readInput returns the bytes of file ("-" for stdin) and the name to use
// for it in messages.
func (a *app) readInput(file string) (string, []byte, error) {
	var r io.Reader = a.stdin
	source := "stdin"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return "", nil, fmt.Errorf("read medallion: %w", err)
		}
		defer f.Close()
		r, source = f, file
	}
	data, err := io.ReadAll(io.LimitReader(r, maxInputBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", source, err)
	}
	if len(data) > maxInputBytes {
		return "", nil, fmt.Errorf("%s is larger than %d MiB: not a medallion", source, maxInputBytes>>20)
	}
	return source, data, nil
}

// putError adds what to do next to the errors a user can fix.
func putError(err error, id string) error {
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Body.Code == api.CodeConflict {
		return fmt.Errorf("%w\nhint: 'medallionctl show %s -o json' prints the latest version to edit", err, id)
	}
	return err
}
