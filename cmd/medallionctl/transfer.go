package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) exportCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "export [-f FILE]",
		Short: "Write every medallion, with every version, as JSON Lines",
		Long: `Export writes every version of every medallion the daemon stores (status,
evidence and timestamps included) as JSON Lines: one medallion.v1 document
per line, by id, oldest version first. It goes to stdout, or to FILE with -f,
which is written whole or not at all (a temporary file renamed at the end).

Transcripts can rebuild the daemon's events; medallions exist only in its
store. An export is how to keep them safe, carry them to a new machine or
keep a project's state in git; "medallionctl import" reads it back.`,
		Example: `  medallionctl export -f medallions.jsonl
  medallionctl export | gzip > medallions-$(date +%F).jsonl.gz`,
		Args: exactArgs(),
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "write to `FILE` instead of stdout")
	cmd.MarkFlagFilename("file", "jsonl")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if file == "" || file == "-" {
			return a.client().Export(cmd.Context(), a.stdout)
		}
		tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer os.Remove(tmp.Name()) // a no-op once renamed
		lines := &lineCounter{w: tmp}
		err = a.client().Export(cmd.Context(), lines)
		if cerr := tmp.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("export: write %s: %w", tmp.Name(), cerr)
		}
		if err != nil {
			return err
		}
		if err := os.Rename(tmp.Name(), file); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		_, err = fmt.Fprintf(a.stdout, "exported %s to %s\n", plural(lines.n, "medallion version"), file)
		return err
	}
	return cmd
}

func (a *app) importCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Store the medallions of an export",
		Long: `Import reads JSON Lines as "medallionctl export" writes them (FILE, or - for
stdin) and stores every medallion with all its versions as they are.
A medallion whose id is stored already is left unchanged and listed: an
import never overwrites. A bad line stops the import with its number; the
medallions before it stay imported, so fix the line and import again.
The daemon's own daily exports (DATA_DIR/exports/*.jsonl.zst) are
compressed with zstd: decompress them into import, as below.`,
		Example: `  medallionctl import medallions.jsonl
  zstd -dc ~/.local/share/medallion/exports/medallions-20260301T120000Z.jsonl.zst | medallionctl import -
  gunzip -c medallions-2026-03-01.jsonl.gz | medallionctl import -`,
		Args: exactArgs("FILE"),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var in io.Reader = a.stdin
		if args[0] != "-" {
			f, err := os.Open(args[0])
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			defer f.Close()
			in = f
		}
		r := bufio.NewReader(in)
		if tool := compressedWith(r); tool != "" {
			file := args[0]
			if file == "-" {
				file = "FILE"
			}
			return fmt.Errorf("import: the input is compressed with %s (the daemon's automatic exports are); decompress it into import: %s -dc %s | medallionctl import -", tool, tool, file)
		}
		res, err := a.client().Import(cmd.Context(), r)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, res)
		}
		fmt.Fprintf(a.stdout, "imported %s (%s)\n", plural(res.Imported, "medallion"), plural(res.Versions, "version"))
		if len(res.Existing) > 0 {
			fmt.Fprintf(a.stdout, "left %s already stored: %s\n", plural(len(res.Existing), "medallion"), strings.Join(res.Existing, ", "))
		}
		return nil
	}
	return cmd
}

// lineCounter counts the lines written through it.
type lineCounter struct {
	w io.Writer
	n int
}

func (l *lineCounter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	l.n += bytes.Count(p[:n], []byte{'\n'})
	return n, err
}

// compressedWith names the tool that compressed what r holds, from its
// first bytes, or is "" for anything else (JSON Lines start with '{').
func compressedWith(r *bufio.Reader) string {
	head, _ := r.Peek(4)
	switch {
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip"
	}
	return ""
}
