package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf16"

	rendering "github.com/medallionhq/medallion/internal/render"
)

// The agents integrate and hook serve.
const (
	agentClaudeCode = "claude-code"
	agentCodex      = "codex"
	agentGemini     = "gemini"
)

// hookAgent is what integrate and hook know about one agent: where its
// hooks live, the SessionStart entry that runs our hook, and how much
// context its hooks may add.
type hookAgent struct {
	name  string // as on the command line
	title string // as in messages
	// settings returns the default hooks file.
	settings func() (string, error)
	// group is the hooks.SessionStart entry that runs command, its keys in
	// the order the agent's own files use.
	group func(command string) any
	// afterInstall and beforeRemove do what the agent needs beyond its
	// hooks file (Codex: trust, AGENTS.md); nil when nothing.
	afterInstall func(*integration) error
	beforeRemove func(*integration, *settingsFile) error

	// The agent's bound on hook context: at most limit units as measure
	// counts them. A longer context is cut (Codex), or moved into a file
	// the model sees only a preview of (Claude Code).
	limit   int
	unit    string
	measure func(string) int
	// budget is the largest token budget (render.Tokens) whose every text
	// is within limit.
	budget int
	// escape, when set, rewrites the context for the agent.
	escape func(string) string
}

// Claude Code saves an additionalContext over 10,000 characters to a file
// and shows the model a 2 KB preview of it.
const claudeContextChars = 10000

// codexContextLimit is the additionalContextLimit integrate writes on the
// Codex hook, in Codex's tokens (bytes / 4). Without it Codex cuts hook
// context past 2,500 tokens, in the middle; with it, a save file of any
// budget the hook allows arrives whole (rendering.BudgetForBytes).
const codexContextLimit = 6000

// geminiContextBytes bounds what the Gemini hook adds: Gemini CLI sets no
// limit of its own, and 40 KB was seen to arrive whole.
const geminiContextBytes = 40000

// hookTimeoutSeconds is the timeout written into the agents' settings for
// the hook. The hook gives up on the daemon after 700 ms by itself; this is
// the agent's backstop if the process itself is stuck.
const hookTimeoutSeconds = 5

var hookAgents = []*hookAgent{
	{
		name: agentClaudeCode, title: "Claude Code",
		settings: homeFile(".claude", "settings.json"),
		group: func(command string) any {
			return claudeGroup{Hooks: []claudeHook{{Type: "command", Command: command, Timeout: hookTimeoutSeconds}}}
		},
		limit: claudeContextChars - 100, unit: "characters", measure: utf16Len,
		budget: rendering.BudgetForChars(claudeContextChars - 100),
	},
	{
		name: agentCodex, title: "Codex",
		settings: func() (string, error) {
			home, err := codexHome()
			return filepath.Join(home, "hooks.json"), err
		},
		group: func(command string) any {
			return codexGroup{Matcher: codexMatcher, Hooks: []codexHook{{
				Type: "command", Command: command, Timeout: hookTimeoutSeconds, AdditionalContextLimit: codexContextLimit,
			}}}
		},
		afterInstall: codexAfterInstall,
		beforeRemove: codexBeforeRemove,
		limit:        4 * codexContextLimit, unit: "bytes", measure: func(s string) int { return len(s) },
		budget: codexContextLimit,
	},
	{
		name: agentGemini, title: "Gemini CLI",
		settings: homeFile(".gemini", "settings.json"),
		group: func(command string) any {
			return geminiGroup{Matcher: "*", Hooks: []geminiHook{{
				Name: "medallion", Type: "command", Command: command, Timeout: hookTimeoutSeconds * 1000,
			}}}
		},
		limit: geminiContextBytes, unit: "bytes", measure: func(s string) int { return len(s) },
		budget: rendering.BudgetForBytes(geminiContextBytes),
		// Gemini CLI wraps the context in <hook_context>…</hook_context>
		// and writes it into the user's prompt in the transcript; the
		// Gemini adapter cuts it out at the first closing tag, so the
		// context must not hold one.
		escape: func(s string) string { return strings.ReplaceAll(s, "</hook_context>", "<\\/hook_context>") },
	},
}

// The SessionStart entries integrate adds, per agent. Claude Code matches
// every source with "", Gemini CLI compares matchers by equality and takes
// "*" for all, Codex matches the source (startup, resume) as a regex.
type claudeGroup struct {
	Matcher string       `json:"matcher"`
	Hooks   []claudeHook `json:"hooks"`
}

type claudeHook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"` // seconds
}

type codexGroup struct {
	Matcher string      `json:"matcher"`
	Hooks   []codexHook `json:"hooks"`
}

// codexMatcher is the sources the Codex hook runs for: a new session and a
// resumed one (Codex's own example).
const codexMatcher = "startup|resume"

type codexHook struct {
	Type                   string `json:"type"`
	Command                string `json:"command"`
	Timeout                int    `json:"timeout"` // seconds
	AdditionalContextLimit int    `json:"additionalContextLimit"`
}

type geminiGroup struct {
	Matcher string       `json:"matcher"`
	Hooks   []geminiHook `json:"hooks"`
}

type geminiHook struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"` // milliseconds
}

// agentNamed returns the agent named on the command line.
func agentNamed(name string) (*hookAgent, error) {
	var names []string
	for _, ag := range hookAgents {
		if ag.name == name {
			return ag, nil
		}
		names = append(names, ag.name)
	}
	return nil, usageErrorf("unknown agent %q: the supported ones are %s", name, strings.Join(names, ", "))
}

// homeFile returns a settings function for ~/<dir>/<name>.
func homeFile(dir, name string) func() (string, error) {
	return func() (string, error) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, dir, name), nil
	}
}

// codexHome is $CODEX_HOME, or ~/.codex.
func codexHome() (string, error) {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return h, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find Codex's home: %w (set CODEX_HOME)", err)
	}
	return filepath.Join(home, ".codex"), nil
}

// utf16Len is the length of s as JavaScript counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
