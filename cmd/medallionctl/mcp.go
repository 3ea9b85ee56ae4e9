package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func (a *app) mcpCommand() *cobra.Command {
	var logLevel string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the save files to an MCP client on stdin/stdout",
		Long: `mcp is a Model Context Protocol server on stdin/stdout, for any MCP client
(Claude Desktop, Cursor, Codex, Gemini CLI …): point the client at
"medallionctl mcp" ("medallionctl integrate mcp --client NAME" writes its
config). It asks the running medalliond over its socket and exits at once,
saying so on stderr, when the daemon does not answer. Logs go to stderr.

Tools:
  load        the save file for a project (cwd) or scope (node)
  search      decisions, rules, fixes, dead ends and questions of every version,
              superseded and resolved ones included, best match first
  get         one item with its evidence and every earlier wording
  record      an agent's decision, rule, open question or dead end, marked as
              agent-made and pending review (medallionctl review)
  checkpoint  save the watched sessions into the save file now

The server itself is "medalliond mcp", which this command runs in its place
(the medalliond next to medallionctl, else the one on PATH): the MCP SDK
links an HTTP stack that every medallionctl command, the session-start hook
included, would otherwise pay for at start-up.`,
		Example: `  medallionctl mcp
  npx @modelcontextprotocol/inspector --cli medallionctl mcp --method tools/list`,
		Args: exactArgs(),
	}
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log `level` on stderr: trace, debug, info, warn or error")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		path, err := findDaemon()
		if err != nil {
			return fmt.Errorf("mcp is served by medalliond: %w", err)
		}
		return execReplace(path, []string{"medalliond", "mcp", "--socket", a.socket, "--log-level", logLevel}, os.Environ())
	}
	return cmd
}
