// Package mcpserver serves medalliond's save files to any MCP client (Claude
// Desktop, Cursor, Codex, Gemini CLI, an IDE) over the Model Context
// Protocol, with the official go-sdk.
//
// It is a client of the running daemon, like medallionctl: every tool is
// one request over the daemon's socket (package client), and nothing here
// opens the store. The tool set is small on purpose — agents rarely call
// memory tools unprompted, and fewer, clearer tools get used — and each
// description says when to call it.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/version"
)

// Name is the server's name in the MCP handshake and in client configs.
const Name = "medallion"

// probeTimeout bounds the status request that checks the daemon is up
// before the server answers its client.
const probeTimeout = 3 * time.Second

// instructions is what the server tells its client about itself; clients
// hand it to the model with the tool list.
const instructions = `Medallion is this project's save file: what earlier sessions (yours and other agents') understood, decided and left open, the user's rules, known fixes and dead ends.
At the start of a task call load with the absolute path of the project you work in. Before you decide something, debug an error or try an approach, call search. When the user states a rule, when you make a decision worth keeping, or when an approach fails, call record. Items agents record wait for the user's review.`

// Server is an MCP server backed by one daemon.
type Server struct {
	c   *client.Client
	log hclog.Logger
	mcp *mcp.Server
}

// New returns a server whose tools ask the daemon behind c.
func New(c *client.Client, logger hclog.Logger) *Server {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &Server{c: c, log: logger}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: Name, Title: "Medallion", Version: version.String()},
		&mcp.ServerOptions{Instructions: instructions})
	s.addTools()
	return s
}

// MCP returns the go-sdk server, for transports other than stdio (tests
// use in-memory ones).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// CheckDaemon fails with the client's "cannot reach medalliond at …"
// message when the daemon does not answer: an MCP client shows a server
// that exits at once with its stderr, which beats tools that all fail.
func (s *Server) CheckDaemon(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	st, err := s.c.Status(ctx)
	if err != nil {
		return err
	}
	s.log.Info("connected to medalliond", "socket", s.c.SocketPath(), "daemon_version", st.Version, "medallions", st.Medallions)
	return nil
}

// RunStdio checks the daemon and then serves one client on stdin/stdout
// until it disconnects or ctx ends.
func (s *Server) RunStdio(ctx context.Context) error {
	if err := s.CheckDaemon(ctx); err != nil {
		return err
	}
	err := s.mcp.Run(ctx, &mcp.StdioTransport{})
	if err == nil || errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("mcp: %w", err)
}

// readOnly marks a tool that changes nothing; idempotent, as reading
// twice gives the same answer.
func readOnly(title string) *mcp.ToolAnnotations {
	no := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no}
}

// writes marks a tool that adds to the store and never destroys anything.
func writes(title string) *mcp.ToolAnnotations {
	no := false
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: &no, OpenWorldHint: &no}
}

func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "load",
		Annotations: readOnly("Load the save file"),
		Description: `Load the project's save file. Call this FIRST when you start a task or a session, before reading code: it returns what earlier sessions established for the project — the user's rules, known fixes for errors, dead ends not to repeat, decisions and why, open questions, where the work stopped. Treat it as the current state unless the user says otherwise. Pass cwd, the absolute path of the project you work in (or node, e.g. "repo:muse").`,
	}, s.load)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "search",
		Annotations: readOnly("Search past decisions and fixes"),
		Description: `Search everything recorded for past sessions: decisions (also superseded ones) and their reasons, rules, known fixes and dead ends, questions (also resolved ones), subsystems. Call it before you make a design decision, when you hit an error (search its message or the failing function), before you try an approach that might have failed before, or when the user refers to something decided earlier. Query with a few keywords or identifiers (snake_case, camelCase and paths are split). Each result has an item address for get.`,
	}, s.search)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "get",
		Annotations: readOnly("Get one item with its evidence and history"),
		Description: `Get one item from load or search in full: its whole text and rationale, the sessions and events it was taken from, whether it is current or was superseded or resolved (and by what), and every earlier wording. Call it when a search result or a line of the save file matters for what you are about to do and you need the why. Pass the item address from search (e.g. "med-1a2b:D-003") and, for an item of a past version, its version.`,
	}, s.get)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "record",
		Annotations: writes("Record a decision, rule, question or dead end"),
		Description: `Record something the next session must know, in one or two sentences. Call it when: the user states a rule or preference ("always…", "never…", "use X not Y") → kind "rule"; you and the user settle a design or implementation choice → kind "decision", with why; an approach failed and should not be tried again → kind "dead_end", with why it failed; something is left open for later → kind "question". Do not record routine steps or what the code already says. Items you record are marked as written by an agent and wait for the user's review. Pass cwd (absolute path of the project) or node.`,
	}, s.record)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "checkpoint",
		Annotations: writes("Checkpoint the sessions now"),
		Description: `Save what happened in the agent sessions medalliond is watching into the save file now, instead of waiting for the session to go idle. Call it after finishing a unit of work (a fix landed, a plan agreed, before the user ends the session), so the next session starts from it. Only sessions whose transcripts medalliond reads (Claude Code, Codex, Gemini CLI) have anything to checkpoint; use record for what must be kept from other clients.`,
	}, s.checkpoint)
}

// text is a tool result holding one text block.
func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// scopeArgs are the arguments that name a project: a directory or graph
// nodes.
type scopeArgs struct {
	CWD  string   `json:"cwd,omitempty" jsonschema:"absolute path of the project directory you work in"`
	Node []string `json:"node,omitempty" jsonschema:"graph nodes of the scope instead of cwd, e.g. repo:muse"`
}

// check refuses a scope that is neither or both, and a relative cwd: the
// daemon runs elsewhere, so "." would mean its directory, not the agent's.
func (a scopeArgs) check() error {
	switch {
	case a.CWD != "" && len(a.Node) > 0:
		return errors.New("give cwd or node, not both")
	case a.CWD == "" && len(a.Node) == 0:
		return errors.New("give cwd, the absolute path of the project you work in (or node, e.g. repo:muse)")
	case a.CWD != "" && !filepath.IsAbs(a.CWD):
		return fmt.Errorf("cwd must be an absolute path (got %q)", a.CWD)
	}
	return nil
}

type loadArgs struct {
	scopeArgs
	Budget int `json:"budget,omitempty" jsonschema:"token budget of the save file (default 1500)"`
}

func (s *Server) load(ctx context.Context, _ *mcp.CallToolRequest, in loadArgs) (*mcp.CallToolResult, any, error) {
	if err := in.check(); err != nil {
		return nil, nil, err
	}
	resp, err := s.c.Load(ctx, api.LoadRequest{CWD: in.CWD, Nodes: in.Node, Budget: in.Budget})
	if err != nil {
		return nil, nil, err
	}
	if len(resp.Medallions) == 0 {
		return text("No save file yet for %s: nothing was recorded for this project. Work as usual; use record for rules, decisions and dead ends worth keeping.", strings.Join(resp.Scope, ", ")), nil, nil
	}
	return text("%s", resp.Text), nil, nil
}

type searchArgs struct {
	Query string   `json:"query" jsonschema:"keywords, identifiers or an error message"`
	Node  []string `json:"node,omitempty" jsonschema:"only medallions of these graph nodes, e.g. repo:muse"`
	Limit int      `json:"limit,omitempty" jsonschema:"how many results (default 10, at most 100)"`
}

func (s *Server) search(ctx context.Context, _ *mcp.CallToolRequest, in searchArgs) (*mcp.CallToolResult, *api.SearchResponse, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, nil, errors.New("query is empty: give a few keywords")
	}
	resp, err := s.c.Search(ctx, api.SearchRequest{Query: in.Query, Nodes: in.Node, Limit: in.Limit})
	if err != nil {
		return nil, nil, err
	}
	return text("%s", SearchText(resp)), resp, nil
}

// SearchText renders a search answer for a model to read: one paragraph
// per result, its state first so a superseded decision is never taken for
// a current one.
func SearchText(resp *api.SearchResponse) string {
	if len(resp.Results) == 0 {
		return fmt.Sprintf("Nothing recorded matches %q.", resp.Query)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d matching items for %q, best first:\n", len(resp.Results), resp.Matched, resp.Query)
	for i, r := range resp.Results {
		fmt.Fprintf(&b, "\n%d. %s [%s, %s", i+1, r.Item, kindWord(r.Kind), stateWords(r.State, r.By, r.Version))
		if r.Review == "pending" {
			b.WriteString(", unreviewed")
		}
		fmt.Fprintf(&b, "] %s\n", r.Text)
	}
	return b.String()
}

// kindWord names a kind as a reader knows it.
func kindWord(kind string) string {
	switch kind {
	case api.KindQuestion:
		return "open question"
	case "invariant":
		return "rule"
	case "avoid_repeating":
		return "known fix / dead end"
	case "entry_point":
		return "entry point"
	}
	return kind
}

// stateWords says where an item stands: "current", or "superseded by
// D-004 after v3".
func stateWords(state, by string, version int) string {
	if state == api.StateCurrent {
		return "current"
	}
	s := state
	if by != "" {
		s += " by " + by
	}
	return fmt.Sprintf("%s after v%d", s, version)
}

type getArgs struct {
	Item    string `json:"item" jsonschema:"item address from search or load, e.g. med-1a2b:D-003 or med-1a2b:invariant:2"`
	Version int    `json:"version,omitempty" jsonschema:"the medallion version to read the item in (default: the latest; search gives it for past items)"`
}

func (s *Server) get(ctx context.Context, _ *mcp.CallToolRequest, in getArgs) (*mcp.CallToolResult, *api.Item, error) {
	it, err := s.c.Item(ctx, api.ItemRequest{Item: in.Item, Version: in.Version})
	if err != nil {
		return nil, nil, err
	}
	return text("%s", ItemText(it)), it, nil
}

// ItemText renders one item for a model to read.
func ItemText(it *api.Item) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, version %d of %d, %s", it.Item, kindWord(it.Kind), it.Version, it.Latest, stateWords(it.State, it.By, it.Version))
	if it.Review != "" {
		fmt.Fprintf(&b, ", %s by %s", reviewWord(it.Review), it.Source)
	}
	fmt.Fprintf(&b, ")\n%s\n", it.Text)
	if it.Detail != "" {
		fmt.Fprintf(&b, "%s\n", it.Detail)
	}
	if len(it.Evidence) > 0 {
		b.WriteString("\nEvidence:\n")
		for _, e := range it.Evidence {
			fmt.Fprintf(&b, "- session %s, events %s\n", e.SessionID, strings.Join(e.EventIDs, ", "))
		}
	}
	if len(it.History) > 1 {
		b.WriteString("\nHistory, oldest first:\n")
		for _, h := range it.History {
			fmt.Fprintf(&b, "- v%d–v%d (%s): %s\n", h.FirstVersion, h.Version, stateWords(h.State, h.By, h.Version), h.Text)
		}
	}
	return b.String()
}

func reviewWord(state string) string {
	if state == "pending" {
		return "unreviewed, written"
	}
	return state + ", written"
}

type recordArgs struct {
	scopeArgs
	Kind string `json:"kind" jsonschema:"decision, rule, question or dead_end"`
	Text string `json:"text" jsonschema:"the decision, rule, question or failed approach, in one or two sentences"`
	Why  string `json:"why,omitempty" jsonschema:"why: the reason for a decision or rule, or why an approach failed"`
}

func (s *Server) record(ctx context.Context, req *mcp.CallToolRequest, in recordArgs) (*mcp.CallToolResult, *api.RecordResponse, error) {
	if err := in.check(); err != nil {
		return nil, nil, err
	}
	resp, err := s.c.Record(ctx, api.RecordRequest{
		Kind: in.Kind, Text: in.Text, Why: in.Why, Nodes: in.Node, CWD: in.CWD, Source: source(req),
	})
	if err != nil {
		return nil, nil, err
	}
	if resp.Note != "" {
		return text("Not recorded again: %s (%s, version %d).", resp.Note, resp.Item, resp.Version), resp, nil
	}
	return text("Recorded as %s (version %d), pending the user's review.", resp.Item, resp.Version), resp, nil
}

// source names the agent for a review entry, from the client's handshake:
// "agent:claude-code", or "agent" when the client gave no name.
func source(req *mcp.CallToolRequest) string {
	if req != nil && req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && strings.TrimSpace(p.ClientInfo.Name) != "" {
			return "agent:" + strings.TrimSpace(p.ClientInfo.Name)
		}
	}
	return "agent"
}

type checkpointArgs struct {
	Note string `json:"note,omitempty" jsonschema:"a short note on what was just done, kept with the checkpoint"`
}

func (s *Server) checkpoint(ctx context.Context, _ *mcp.CallToolRequest, in checkpointArgs) (*mcp.CallToolResult, any, error) {
	resp, err := s.c.Checkpoint(ctx, api.CheckpointRequest{Note: in.Note})
	if err != nil {
		return nil, nil, err
	}
	if len(resp.Checkpoints) == 0 {
		return text("Nothing to checkpoint: no watched session has events waiting."), nil, nil
	}
	var b strings.Builder
	for _, r := range resp.Checkpoints {
		switch {
		case r.Error != "":
			fmt.Fprintf(&b, "session %s: failed: %s\n", r.SessionID, r.Error)
		case r.Skipped != "":
			fmt.Fprintf(&b, "session %s: skipped: %s\n", r.SessionID, r.Skipped)
		case r.MedallionID != "":
			fmt.Fprintf(&b, "session %s: %d events saved into %s version %d\n", r.SessionID, r.Events, r.MedallionID, r.Version)
		default:
			fmt.Fprintf(&b, "session %s: %d events read, nothing new to keep\n", r.SessionID, r.Events)
		}
	}
	return text("%s", b.String()), nil, nil
}
