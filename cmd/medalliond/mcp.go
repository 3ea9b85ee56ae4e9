package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/mcpserver"
	"github.com/medallionhq/medallion/internal/paths"
)

// mcpCommand serves MCP on stdin/stdout as a client of the running daemon.
// It lives in medalliond, not medallionctl: the go-sdk links net/http,
// crypto/tls and oauth2, whose package initialisation every medallionctl
// process would pay, the SessionStart hook included. "medallionctl mcp"
// hands over to this command.
func (e *env) mcpCommand() *cobra.Command {
	var socket, logLevel string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the save files to an MCP client on stdin/stdout (what medallionctl mcp runs)",
		Long: `mcp is a Model Context Protocol server on stdin/stdout for any MCP client
(Claude Desktop, Cursor, Codex, Gemini CLI …). It asks the running medalliond
over its socket, like medallionctl, and exits at once with a message on stderr
when the daemon does not answer. Logs go to stderr; stdout is the protocol.

Tools: load (the save file for a project), search (past decisions, rules,
fixes and questions, superseded and resolved ones included), get (one item
with its evidence and history), record (an agent's decision, rule, question or
dead end, pending review) and checkpoint.

"medallionctl integrate mcp --client NAME" writes the client's config.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("socket") {
				socket = e.getenv("MEDALLION_SOCKET")
				if socket == "" {
					socket = paths.Socket()
				}
			}
			logger := hclog.New(&hclog.LoggerOptions{Name: "mcp", Level: hclog.LevelFromString(logLevel), Output: e.stderr})
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return mcpserver.New(client.New(socket), logger).RunStdio(ctx)
		},
	}
	cmd.Flags().StringVar(&socket, "socket", "", "`path` of medalliond's Unix socket (default $MEDALLION_SOCKET, else the default path)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level on stderr: trace, debug, info, warn or error")
	return cmd
}
