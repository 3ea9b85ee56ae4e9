package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/medallion"
)

func (a *app) showCommand() *cobra.Command {
	var version int
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one medallion",
		Long: `Show prints the medallion with the given id: its meta data, scope, summary,
subsystems, decisions (with confidence), open questions (with priority and
what they are blocked on) and affordances.

By default it shows the latest version; --version N shows an older one (see
"medallionctl history ID" for the versions). -o json prints the medallion
itself, ready to edit and store again with "medallionctl put -f".`,
		Example: `  medallionctl show muse-project-state
  medallionctl show muse-project-state --version 2
  medallionctl show muse-project-state -o json > medallion.json`,
		Args:              exactArgs("ID"),
		ValidArgsFunction: a.completeIDs,
	}
	out := addOutputFlag(cmd)
	cmd.Flags().IntVar(&version, "version", 0, "show version `N` instead of the latest")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var (
			m   *medallion.Medallion
			err error
		)
		switch {
		case version < 0:
			return usageErrorf("--version must be at least 1 (got %d)", version)
		case version > 0:
			m, err = a.client().GetVersion(cmd.Context(), args[0], version)
		default:
			m, err = a.client().Get(cmd.Context(), args[0])
		}
		if err != nil {
			return err
		}
		if *out == outputJSON {
			return writeJSON(a.stdout, m)
		}
		return render(a.stdout, m)
	}
	return cmd
}

// render prints m for a human reader, section by section, skipping empty
// ones so that a young medallion stays short.
func render(w io.Writer, m *medallion.Medallion) error {
	p := &printer{w: w}
	meta := m.Meta
	p.linef("%s  version %d  %s  model %s", cell(meta.MedallionID), meta.Version, cell(string(meta.Status)), cell(meta.Model))
	p.linef("created %s  updated %s", when(meta.CreatedAt), when(meta.UpdatedAt))
	if meta.KnowledgeMinTS != "" || meta.KnowledgeMaxTS != "" {
		p.linef("knowledge from %s to %s", whenOrDash(meta.KnowledgeMinTS), whenOrDash(meta.KnowledgeMaxTS))
	}

	p.section("Scope")
	p.linef("  nodes  %s", list(m.Scope.GraphNodes))
	p.linef("  tags   %s", list(m.Scope.Tags))

	if strings.TrimSpace(m.Summary.HighLevel) != "" {
		p.section("Summary" + pinned(m, medallion.ItemSummary, m.Summary.HighLevel))
		p.linef("  %s", text(m.Summary.HighLevel, "  "))
	}

	if len(m.Summary.Subsystems) > 0 {
		p.section("Subsystems  (subsystem:N)")
		tw := newTable(w)
		for i, s := range m.Summary.Subsystems {
			pin := pinned(m, medallion.ItemSubsystem, s.Name)
			if strings.TrimSpace(s.Notes) == "" {
				fmt.Fprintf(tw, "  %d. %s\t%s%s\n", i+1, cell(s.Name), cell(string(s.Status)), pin)
				continue
			}
			fmt.Fprintf(tw, "  %d. %s\t%s\t%s%s\n", i+1, cell(s.Name), cell(string(s.Status)), cell(s.Notes), pin)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	if len(m.Decisions) > 0 {
		p.section("Decisions")
		for _, d := range m.Decisions {
			p.linef("  %s  %s  (confidence %.2f)%s", cell(d.ID), text(d.Statement, "    "), d.Confidence, pinned(m, d.ID, ""))
			if strings.TrimSpace(d.Rationale) != "" {
				p.linef("    why: %s", text(d.Rationale, "         "))
			}
		}
	}

	if len(m.OpenQuestions) > 0 {
		p.section("Open questions")
		for _, q := range m.OpenQuestions {
			p.linef("  %s  [%s]  %s%s", cell(q.ID), cell(string(q.Priority)), text(q.Question, "    "), pinned(m, q.ID, ""))
			if len(q.BlockedOn) > 0 {
				p.linef("    blocked on: %s", cell(strings.Join(q.BlockedOn, ", ")))
			}
		}
	}

	// Numbered, so that the address of an item ("invariant:2") can be
	// read off for forget, edit, pin and review.
	aff := []struct {
		title, name string
	}{
		{"Recommended entry points", medallion.ItemEntryPoint},
		{"Avoid repeating", medallion.ItemAvoidRepeating},
		{"Invariants", medallion.ItemInvariant},
	}
	for _, s := range aff {
		items := *m.List(s.name)
		if len(items) == 0 {
			continue
		}
		p.section(s.title + "  (" + s.name + ":N)")
		for i, it := range items {
			p.linef("  %d. %s%s", i+1, text(it, "     "), pinned(m, s.name, it))
		}
	}
	return p.err
}

// pinned marks an item the user pinned.
func pinned(m *medallion.Medallion, item, text string) string {
	if m.IsPinned(item, text) {
		return "  (pinned)"
	}
	return ""
}

func whenOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return when(s)
}

// printer writes lines and remembers the first write error, so render can
// stay a straight list of sections.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) linef(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

func (p *printer) section(title string) {
	p.linef("\n%s", title)
}
