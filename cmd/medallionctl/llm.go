package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
)

func (a *app) llmCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "llm",
		Short: "Check the model the daemon curates with (Tier 1)",
		Long: `With an llm block in the config, medalliond has a model distil each
session into its medallion (Tier 1). "medallionctl llm check" tests that
model; "medallionctl status" shows its figures (calls, tokens against the
daily cap, fallbacks, the last error, items awaiting review).`,
		Example:                    `  medallionctl llm check`,
		Args:                       noSubcommand,
		SuggestionsMinimumDistance: 2,
		RunE:                       func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.llmCheckCommand())
	return cmd
}

func (a *app) llmCheckCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Send the model one tiny structured request and say what works",
		Long: `Check asks medalliond to send its configured model one tiny structured
request, and prints what it found, one line per step: whether the endpoint
is reachable, whether it accepts the key (api_key_env), whether it takes a
strict json_schema response format (if not, structured = "auto" falls back
to json_object), and whether the model answered valid JSON.

It can take as long as the llm block's timeout. The exit code is 0 when Tier
1 can run (reachable, key accepted, valid JSON), else 1. Without an llm
block in the config it says so and exits 1.`,
		Example: `  medallionctl llm check
  medallionctl llm check -o json`,
		Args: exactArgs(),
	}
	out := addOutputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		res, err := a.client().LLMCheck(cmd.Context())
		if err != nil {
			return err
		}
		if *out == outputJSON {
			if err := writeJSON(a.stdout, res); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(a.stdout, "%s at %s\n", cell(res.Model), cell(res.Endpoint))
			for _, l := range res.Lines {
				fmt.Fprintf(a.stdout, "  %s\n", text(l, "    "))
			}
		}
		if !res.OK {
			return errors.New("the model cannot curate yet: fix what the check reports, then run it again")
		}
		return nil
	}
	return cmd
}

// printLLM prints the Tier 1 part of the status.
func printLLM(w io.Writer, l *api.LLMStatus) {
	fmt.Fprintf(w, "\nLLM\n")
	const keyWidth = len("pending review")
	row := func(key, format string, args ...any) {
		fmt.Fprintf(w, "  %-*s  %s\n", keyWidth, key, fmt.Sprintf(format, args...))
	}
	row("endpoint", "%s", cell(l.Endpoint))
	row("model", "%s", cell(l.Model))
	row("structured", "%s", cell(l.Structured))
	row("calls", "%d since the daemon started", l.Calls)
	if l.DailyTokens > 0 {
		row("tokens today", "%d of %d (%.0f%%)", l.TokensToday, l.DailyTokens, 100*float64(l.TokensToday)/float64(l.DailyTokens))
	} else {
		row("tokens today", "%d (no daily cap)", l.TokensToday)
	}
	row("passes", "%d", l.Passes)
	fallbacks := "none"
	if l.Fallbacks > 0 {
		fallbacks = fmt.Sprintf("%d (the Tier 0 version stood)", l.Fallbacks)
	}
	row("fallbacks", "%s", fallbacks)
	row("refused ops", "%d", l.Refused)
	last := "none"
	if l.LastError != "" {
		last = cell(l.LastError)
		if l.LastErrorAt != "" {
			at := when(l.LastErrorAt)
			if t, err := medallion.ParseTime(l.LastErrorAt); err == nil {
				at += ", " + ago(t)
			}
			last += " (" + at + ")"
		}
	}
	row("last error", "%s", last)
	pending := fmt.Sprintf("%d", l.PendingReview)
	if l.PendingReview > 0 {
		pending += ": medallionctl review"
	}
	row("pending review", "%s", strings.TrimSpace(pending))
}
