package transcript

import (
	"path/filepath"
	"strings"
)

// PathInfo is what a transcript's path says about its session.
type PathInfo struct {
	// SessionID is the session the file belongs to: the file stem for a
	// Claude Code session file, the thread uuid of a Codex rollout.
	SessionID string
	// ParentSessionID is set for Claude Code subagent files kept under
	// "<parent session>/subagents/".
	ParentSessionID string
	// AgentID is the subagent id of an "agent-<id>.jsonl" file.
	AgentID string
}

// SessionFromPath reads the session identity encoded in a transcript path:
//
//	~/.claude/projects/<proj>/<session>.jsonl                  SessionID
//	~/.claude/projects/<proj>/<session>/subagents/agent-<id>.jsonl  ParentSessionID, AgentID
//	~/.claude/projects/<proj>/agent-<id>.jsonl                 AgentID (the parent is in the records)
//	~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl   SessionID
//
// Records are the better source; adapters use this only for what they lack.
func SessionFromPath(path string) PathInfo {
	if path == "" {
		return PathInfo{}
	}
	base := filepath.Base(path)
	stem := base
	for _, ext := range []string{".zst", ".gz", ".jsonl", ".json"} {
		stem = strings.TrimSuffix(stem, ext)
	}
	if agent, ok := strings.CutPrefix(stem, "agent-"); ok {
		info := PathInfo{AgentID: agent}
		dir := filepath.Dir(path)
		if filepath.Base(dir) == "subagents" {
			info.ParentSessionID = filepath.Base(filepath.Dir(dir))
		}
		return info
	}
	if strings.HasPrefix(stem, "rollout-") && len(stem) >= 36 {
		if id := stem[len(stem)-36:]; isUUID(id) {
			return PathInfo{SessionID: id}
		}
	}
	return PathInfo{SessionID: stem}
}

// isUUID reports whether s looks like a canonical 8-4-4-4-12 hex UUID.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// pathCache remembers the PathInfo of the last path seen: a parser reads
// one file, so this computes it once.
type pathCache struct {
	path string
	info PathInfo
}

func (c *pathCache) get(path string) PathInfo {
	if path != c.path {
		c.path, c.info = path, SessionFromPath(path)
	}
	return c.info
}
