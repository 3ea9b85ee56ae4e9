package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/history"
	"github.com/medallionhq/medallion/internal/medallion"
)

func (a *app) diffCommand() *cobra.Command {
	var from, to int
	cmd := &cobra.Command{
		Use:   "diff ID",
		Short: "Show what changed between two versions of a medallion",
		Long: `Diff compares two stored versions of the medallion with the given id and
lists, section by section, what was added (+), changed (~) and removed (-):
a decision superseded by a newer one says which, a question that left the
open questions is marked resolved (and by which decision, when one says so).

By default it compares the latest version with the one before; --from and
--to pick other versions (see "medallionctl history ID"). -o json prints
the changes as a structure.`,
		Example: `  medallionctl diff muse-project-state
  medallionctl diff muse-project-state --from 1 --to 4
  medallionctl diff muse-project-state -o json`,
		Args:              exactArgs("ID"),
		ValidArgsFunction: a.completeIDs,
	}
	out := addOutputFlag(cmd)
	cmd.Flags().IntVar(&from, "from", 0, "compare from version `N` (default: the one before --to)")
	cmd.Flags().IntVar(&to, "to", 0, "compare up to version `M` (default: the latest)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if from < 0 || to < 0 {
			return usageErrorf("--from and --to must be at least 1")
		}
		id := args[0]
		c := a.client()
		latest, err := c.Get(cmd.Context(), id)
		if err != nil {
			return err
		}
		n := latest.Meta.Version
		if n < 2 && from == 0 && to == 0 {
			return fmt.Errorf("medallion %q has only one version: there is nothing to diff yet (the next checkpoint or put makes version 2)", id)
		}
		if to == 0 {
			to = n
		}
		if from == 0 {
			from = max(to-1, 1)
		}
		for _, v := range []int{to, from} {
			if v > n {
				return fmt.Errorf("medallion %q has versions 1 to %d, not %d", id, n, v)
			}
		}
		if from == to {
			return usageErrorf("--from and --to are both version %d: give two different versions (1 to %d)", from, n)
		}
		fetch := func(v int) (*medallion.Medallion, error) {
			if v == n {
				return latest, nil
			}
			m, err := c.GetVersion(cmd.Context(), id, v)
			var ae *client.APIError
			if errors.As(err, &ae) && ae.Body.Code == api.CodeNotFound {
				return nil, fmt.Errorf("version %d of medallion %q is no longer stored: %w", v, id, err)
			}
			return m, err
		}
		fm, err := fetch(from)
		if err != nil {
			return err
		}
		tm, err := fetch(to)
		if err != nil {
			return err
		}
		ch := history.Diff(fm, tm)
		if *out == outputJSON {
			return writeJSON(a.stdout, ch)
		}
		return renderDiff(a.stdout, &ch)
	}
	return cmd
}

// renderDiff prints ch for a human reader: one header, then one block per
// section that changed, each entry behind its + / ~ / - marker.
func renderDiff(w io.Writer, ch *history.Changes) error {
	p := &printer{w: w}
	p.linef("%s  version %d → %d", cell(ch.ID), ch.FromVersion, ch.ToVersion)
	for _, f := range ch.Meta {
		if f.Field == "version" {
			continue
		}
		from, to := f.From, f.To
		// Seconds are enough to read, unless two checkpoints in the same
		// second would then look alike.
		if f.Field == "updated_at" && when(from) != when(to) {
			from, to = when(from), when(to)
		}
		p.linef("  %s: %s → %s", f.Field, cell(from), cell(to))
	}
	if ch.Empty() {
		p.linef("\nNo changes in content.")
		return p.err
	}

	if ch.HighLevel != nil {
		p.section("Summary")
		if strings.TrimSpace(ch.HighLevel.From) != "" {
			p.linef("  - %s", text(ch.HighLevel.From, "    "))
		}
		if strings.TrimSpace(ch.HighLevel.To) != "" {
			p.linef("  + %s", text(ch.HighLevel.To, "    "))
		}
	}

	if len(ch.Subsystems) > 0 {
		p.section("Subsystems")
		for _, s := range ch.Subsystems {
			switch s.Kind {
			case history.Added:
				p.linef("  + %s  %s  %s", cell(s.Name), cell(string(s.To.Status)), cell(s.To.Notes))
			case history.Changed:
				p.linef("  ~ %s", cell(s.Name))
				fieldLines(p, s.Fields)
			case history.Forgotten:
				p.linef("  - %s  (forgotten: removed by you)", cell(s.Name))
			default:
				p.linef("  - %s", cell(s.Name))
			}
		}
	}

	if len(ch.Decisions) > 0 {
		p.section("Decisions")
		for _, d := range ch.Decisions {
			switch d.Kind {
			case history.Added:
				p.linef("  + %s  %s  (confidence %.2f)", cell(d.ID), text(d.To.Statement, "      "), d.To.Confidence)
				if strings.TrimSpace(d.To.Rationale) != "" {
					p.linef("      why: %s", text(d.To.Rationale, "           "))
				}
			case history.Changed:
				p.linef("  ~ %s  %s", cell(d.ID), text(d.To.Statement, "      "))
				fieldLines(p, d.Fields)
			case history.Superseded:
				p.linef("  - %s  %s  (superseded by %s)", cell(d.ID), text(d.From.Statement, "      "), cell(d.By))
			case history.Forgotten:
				p.linef("  - %s  %s  (forgotten: removed by you)", cell(d.ID), text(d.From.Statement, "      "))
			default:
				p.linef("  - %s  %s", cell(d.ID), text(d.From.Statement, "      "))
			}
		}
	}

	if len(ch.OpenQuestions) > 0 {
		p.section("Open questions")
		for _, q := range ch.OpenQuestions {
			switch q.Kind {
			case history.Added:
				p.linef("  + %s  [%s]  %s", cell(q.ID), cell(string(q.To.Priority)), text(q.To.Question, "      "))
				if len(q.To.BlockedOn) > 0 {
					p.linef("      blocked on: %s", cell(strings.Join(q.To.BlockedOn, ", ")))
				}
			case history.Changed:
				p.linef("  ~ %s  %s", cell(q.ID), text(q.To.Question, "      "))
				fieldLines(p, q.Fields)
			default:
				how := "resolved"
				switch {
				case q.Kind == history.Forgotten:
					how = "forgotten: removed by you"
				case q.By != "":
					how = "resolved by " + cell(q.By)
				}
				p.linef("  - %s  %s  (%s)", cell(q.ID), text(q.From.Question, "      "), how)
			}
		}
	}

	for _, s := range []struct {
		title string
		items []history.ItemChange
	}{
		{"Invariants", ch.Invariants},
		{"Avoid repeating", ch.AvoidRepeating},
		{"Recommended entry points", ch.RecommendedEntryPoints},
	} {
		if len(s.items) == 0 {
			continue
		}
		p.section(s.title)
		for _, it := range s.items {
			how := ""
			if it.Kind == history.Forgotten {
				how = "  (forgotten: removed by you)"
			}
			p.linef("  %s %s%s", it.Kind.Marker(), text(it.Text, "    "), how)
		}
	}

	if len(ch.Review) > 0 {
		p.section("Review (items a model wrote)")
		for _, r := range ch.Review {
			name := cell(r.Item)
			// List items have no id: their text says which one.
			if slices.Contains(medallion.ReviewLists, r.Item) {
				name += " " + strconv.Quote(clip(cell(r.Text), 60))
			}
			if r.From == "" {
				p.linef("  + %s  %s", name, cell(string(r.To)))
				continue
			}
			p.linef("  ~ %s  %s → %s", name, cell(string(r.From)), cell(string(r.To)))
		}
	}
	if len(ch.Pins) > 0 {
		p.section("Pinned by you")
		for _, pin := range ch.Pins {
			name := cell(pin.Item)
			if pin.Text != "" {
				name += " " + strconv.Quote(clip(cell(pin.Text), 60))
			}
			what := "pinned"
			if pin.Kind == history.Removed {
				what = "unpinned"
			}
			p.linef("  %s %s  %s", pin.Kind.Marker(), name, what)
		}
	}
	return p.err
}

// fieldLines prints the fields of a changed entry, one "name: old → new"
// line each; long text is shown as two lines.
func fieldLines(p *printer, fs []history.FieldChange) {
	for _, f := range fs {
		if len(f.From)+len(f.To) > 60 {
			p.linef("      %s was: %s", f.Field, cellOrNone(f.From))
			p.linef("      %s now: %s", f.Field, cellOrNone(f.To))
			continue
		}
		p.linef("      %s: %s → %s", f.Field, cellOrNone(f.From), cellOrNone(f.To))
	}
}

func cellOrNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return cell(s)
}
