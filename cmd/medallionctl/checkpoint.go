package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/api"
)

func (a *app) checkpointCommand() *cobra.Command {
	var req api.CheckpointRequest
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Curate buffered episodes (or explicit evidence) into medallions now",
		Long: `Checkpoint asks medalliond to checkpoint now rather than wait for the next
automatic trigger (every N events, an idle session, a correction, a
schedule). The buffered episode of the session given with --session, or of
every session with buffered events, is curated (Tier 0: known fixes, user
corrections and preferences, open todos, approved plans, files worked on)
into the medallion whose graph nodes are exactly the session's scope:
created at the first checkpoint, updated in place (version + 1) at the next
ones. The buffer is emptied once the medallion is stored. Events that
arrive meanwhile stay buffered for the next checkpoint.

A session without a scope (its agent gave no working directory) is skipped
and its events stay buffered: a medallion needs graph nodes, and a later
event with a working directory gives the session one.

--node N --evidence FILE checkpoints explicit evidence instead, for a
framework that writes no transcript: FILE (- for stdin) holds
{"session_summary": "...", "transcripts": ["user: ...\nassistant: ..."],
"artefacts": {"name": any JSON value}} (the seed's evidence, e.g.
"files_touched": ["a.py"]). In transcripts a line starting "user:" or
"human:" opens a user turn, "assistant:" or "agent:" an assistant turn, and
other lines continue the turn. The evidence is curated into the medallion
whose graph nodes are exactly the --node values; --tag adds scope tags.

--note TEXT goes to the curator with the episode: say in your own words what
was achieved or decided.

It prints one line per checkpoint: the scope, how many events were curated
and the medallion version stored with its items by kind, or why it was
skipped or failed. The exit code is 1 when any checkpoint failed; nothing to
checkpoint is not an error (a note goes to stderr). Session ids come from
"medallionctl sessions".`,
		Example: `  medallionctl checkpoint
  medallionctl checkpoint --session 0b9c6a1e-4f7d-4d0e-9a51-3c2b1e0f9a7d
  medallionctl checkpoint --note "parser done; streaming output is next"
  medallionctl checkpoint --node repo:muse --tag project_state --evidence evidence.json
  medallionctl checkpoint -o json`,
		Args: exactArgs(),
	}
	out := addOutputFlag(cmd)
	cmd.Flags().StringVar(&req.SessionID, "session", "", "checkpoint only the session with this `id` (default: every session with buffered events)")
	cmd.Flags().StringVar(&req.Note, "note", "", "`text` for the curator: what was achieved or decided")
	cmd.Flags().StringArrayVar(&req.Nodes, "node", nil, "graph `node` of the evidence's scope, such as repo:muse (repeatable; needs --evidence)")
	cmd.Flags().StringArrayVar(&req.Tags, "tag", nil, "scope `tag` for the evidence's medallion (repeatable)")
	evidence := cmd.Flags().String("evidence", "", "curate the evidence JSON in `FILE` (- for stdin) for the --node scope")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Flags().Changed("session") && strings.TrimSpace(req.SessionID) == "" {
			return usageErrorf("--session needs a session id (leave it out to checkpoint every session)")
		}
		if err := a.evidenceRequest(cmd, &req, *evidence); err != nil {
			return err
		}
		resp, err := a.client().Checkpoint(cmd.Context(), req)
		if err != nil {
			return err
		}
		if *out == outputJSON {
			if err := writeJSON(a.stdout, resp); err != nil {
				return err
			}
		} else {
			if len(resp.Checkpoints) == 0 {
				fmt.Fprintln(a.stderr, nothingToCheckpoint(req.SessionID))
				return nil
			}
			if err := printCheckpoints(a.stdout, resp.Checkpoints); err != nil {
				return err
			}
		}
		return checkpointsFailed(resp.Checkpoints)
	}
	return cmd
}

func nothingToCheckpoint(session string) string {
	if session != "" {
		return "nothing to checkpoint: session " + cell(session) + " has no buffered events"
	}
	return "nothing to checkpoint: no session has buffered events"
}

// maxEvidenceBytes bounds an evidence file: the daemon takes request
// bodies of a few MiB.
const maxEvidenceBytes = 4 << 20

// evidenceRequest checks the evidence flags and reads the evidence file
// into req.
func (a *app) evidenceRequest(cmd *cobra.Command, req *api.CheckpointRequest, file string) error {
	given := cmd.Flags().Changed("evidence")
	switch {
	case !given && (len(req.Nodes) > 0 || len(req.Tags) > 0):
		return usageErrorf("--node and --tag go with --evidence FILE (the evidence to curate for that scope)")
	case !given:
		return nil
	case file == "":
		return usageErrorf("--evidence needs a FILE (- for stdin)")
	case req.SessionID != "":
		return usageErrorf("--session and --evidence exclude each other: checkpoint a session, or evidence for a scope")
	case len(req.Nodes) == 0:
		return usageErrorf("--evidence needs --node: the graph nodes of the evidence's scope (for example --node repo:muse)")
	case slices.ContainsFunc(req.Nodes, func(n string) bool { return strings.TrimSpace(n) == "" }):
		return usageErrorf("--node needs a graph node such as repo:muse")
	case slices.ContainsFunc(req.Tags, func(t string) bool { return strings.TrimSpace(t) == "" }):
		return usageErrorf("--tag needs a tag")
	}
	var r io.Reader = a.stdin
	source := "stdin"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("read evidence: %w", err)
		}
		defer f.Close()
		r, source = f, file
	}
	data, err := io.ReadAll(io.LimitReader(r, maxEvidenceBytes+1))
	if err != nil {
		return fmt.Errorf("read evidence %s: %w", source, err)
	}
	if len(data) > maxEvidenceBytes {
		return fmt.Errorf("evidence %s is larger than %d MiB", source, maxEvidenceBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	req.Evidence = &api.Evidence{}
	if err := dec.Decode(req.Evidence); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("evidence %s: field %s: want a JSON %s, got a %s", source, te.Field, jsonTypeName(te.Type.Kind().String()), te.Value)
		}
		return fmt.Errorf("evidence %s: %s (want {\"session_summary\": ..., \"transcripts\": [...], \"artefacts\": {...}})",
			source, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// jsonTypeName names a Go kind the way JSON does.
func jsonTypeName(kind string) string {
	switch kind {
	case "slice":
		return "array"
	case "map", "struct":
		return "object"
	}
	return kind
}

// printCheckpoints writes one line per result:
//
//	checkpoint SESSION → SCOPE: N events → medallion ID version V (K kind, …)
//	checkpoint SESSION → SCOPE: N events, nothing to store
//	checkpoint SESSION → SCOPE: skipped, N events kept: REASON
//	checkpoint SESSION → SCOPE: failed: REASON
func printCheckpoints(w io.Writer, results []api.CheckpointResult) error {
	for _, r := range results {
		line := fmt.Sprintf("checkpoint %s → %s: ", cell(r.SessionID), list(r.Scope))
		switch {
		case r.Error != "":
			line += "failed: " + cell(r.Error)
		case r.Skipped != "":
			line += fmt.Sprintf("skipped, %s kept: %s", plural(r.Events, "event"), cell(r.Skipped))
		case r.MedallionID == "":
			line += plural(r.Events, "event") + ", nothing to store"
		default:
			line += fmt.Sprintf("%s → medallion %s version %d", plural(r.Events, "event"), cell(r.MedallionID), r.Version)
			if items := itemCounts(r.Items); items != "" {
				line += " (" + items + ")"
			}
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// itemCounts renders stored items by kind: "2 avoid_repeating, 1 invariants".
func itemCounts(items map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(items)) {
		parts = append(parts, fmt.Sprintf("%d %s", items[k], k))
	}
	return strings.Join(parts, ", ")
}

// checkpointsFailed is the command's error when any checkpoint failed, so
// the exit code says so; each failure has been printed already.
func checkpointsFailed(results []api.CheckpointResult) error {
	failed := 0
	for _, r := range results {
		if r.Error != "" {
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %s failed", failed, plural(len(results), "checkpoint"))
}

// plural renders "1 event", "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
