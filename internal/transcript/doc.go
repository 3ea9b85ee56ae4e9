// Package transcript turns the records of agent transcripts — Claude Code
// and Codex CLI session files, and our own one-event-per-line JSONL (see
// JSONL.md) — into one Event model that the episode buffer and the curator
// work on.
//
// The tailer hands a Parser one complete line at a time with its position
// (file fingerprint, path, byte offset). A line may hold several glued JSON
// records; each record yields zero or more events. Nothing in a line is ever
// fatal: invalid JSON, binary junk, unknown record types and uninteresting
// records (progress, token counts, snapshots) are counted in Stats by reason
// and reported to Options.OnSkip.
//
// Rules every adapter follows:
//
//   - IDs are stable. They come from ids inside the record (Claude Code
//     tool_use ids, message ids and uuids; Codex call_ids), or else from a
//     hash of the file fingerprint, byte offset and record index. Parsing the
//     same bytes again — even with a fresh Parser after a restart — yields
//     the same IDs, and a record written twice under the same ids (an
//     assistant reply piece repeated, history copied on resume) yields the
//     same ID twice, so the store keeps one.
//   - A tool result is always KindToolResult; OK=false (with ExitCode when
//     known) says it failed. KindError is for failures that are not a tool
//     result: API errors, failing hooks, error events. Event.Failed covers
//     both.
//   - Text is bounded (Options.MaxText, Options.MaxMessageText): long texts
//     keep their head and tail, TextBytes keeps the original size. Images
//     become placeholders such as "[image: image/png, 812 KB]" and any long
//     run of base64 left in a text is replaced by "[binary data: N bytes]".
//   - Harness text in the user's role that records something happening in
//     the session (slash commands, hook feedback, reminders, interrupts,
//     "Warmup", subagent prompts) becomes an event with Boilerplate=true and
//     a Subtype naming it. Pure instruction text re-sent every turn (Codex
//     developer messages, AGENTS.md, environment context) is skipped and
//     counted as "boilerplate".
//   - Todo lists (Claude Code TodoWrite, Codex update_plan) and plans put up
//     for approval (ExitPlanMode) become KindPlanUpdate events that keep the
//     tool's call id, instead of KindToolCall.
//   - What a parser remembers of earlier lines and uses to read later ones
//     (queued prompts, pending tool calls, a Codex session's identity) is
//     saved and restored through Stateful, bounded as the parser's memory
//     is; the ingest pipeline stores it with each offset, so a parser that
//     resumes mid-file after a crash reads on exactly as the one that
//     stopped there. Parsers without such memory (JSONL) need nothing.
//   - Subagent and sidechain events get SessionID "<parent>/agent-<id>" (or
//     "<parent>/sidechain" for inline sidechains without an id) and
//     ParentSessionID "<parent>", so they form their own episode attached to
//     the session that spawned them.
//
// Per-format details live beside each adapter: claude.go, codex.go, jsonl.go.
package transcript
