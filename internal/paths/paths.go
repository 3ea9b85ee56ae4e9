// Package paths computes the default locations of medallion's files
// following the XDG base directory spec, for the daemon and the CLI alike.
package paths

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// App is the directory name used under each XDG base directory.
const App = "medallion"

// ConfigFile is the default config path: $XDG_CONFIG_HOME/medallion/config.hcl
// (~/.config/medallion/config.hcl).
func ConfigFile() string {
	return filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), App, "config.hcl")
}

// DataDir is the default data directory: $XDG_DATA_HOME/medallion
// (~/.local/share/medallion).
func DataDir() string {
	return filepath.Join(xdg("XDG_DATA_HOME", filepath.Join(".local", "share")), App)
}

// Socket is the default socket path: $XDG_RUNTIME_DIR/medallion/medallion.sock,
// or, when XDG_RUNTIME_DIR is unset (macOS, some containers), a per-user
// directory under the temp dir: $TMPDIR/medallion-<uid>/medallion.sock.
func Socket() string {
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
		return filepath.Join(rt, App, "medallion.sock")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("%s-%d", App, os.Getuid()), "medallion.sock")
}

// ExpandHome expands a leading "~" or "~/" to the user's home directory;
// HCL and Go leave "~" alone, users expect it to work.
func ExpandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand %s: %w", p, err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}

func xdg(env, fallback string) string {
	if v := os.Getenv(env); v != "" && filepath.IsAbs(v) {
		return v
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		// No home (a bare service account): keep working under the temp dir.
		return filepath.Join(os.TempDir(), fmt.Sprintf("%s-%d-home", App, os.Getuid()), fallback)
	}
	return filepath.Join(home, fallback)
}
