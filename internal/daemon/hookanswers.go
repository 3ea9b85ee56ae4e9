package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/server"
	"github.com/medallionhq/medallion/internal/store"
)

// A daemon starts with no hook answer kept (internal/hookcache), so the
// first session in every folder after a start (a reboot, an upgrade) would
// ask it. It readies the answers of the folders agents worked in last.
const (
	// recentHookFolders bounds the folders readied: the server keeps the
	// answers of 32 scopes at most.
	recentHookFolders = 16
	// recentHookAge: a folder last worked in longer ago is not readied.
	recentHookAge = 30 * 24 * time.Hour
)

// keepRecentHookAnswers has the server ready the hook answers of the
// folders of the most recent sessions.
func keepRecentHookAnswers(ctx context.Context, st *store.Badger, srv *server.Server, log hclog.Logger) {
	sessions, err := st.Sessions(ctx)
	if err != nil {
		log.Debug("hook answers of recent folders not readied", "error", err)
		return
	}
	cwds := recentCWDs(sessions, time.Now())
	log.Debug("readying the hook answers of recent folders", "folders", len(cwds))
	srv.KeepHookAnswers(cwds)
}

// recentCWDs picks the working folders of the sessions with the latest
// events, newest first: distinct, still there, worked in within
// recentHookAge, at most recentHookFolders.
func recentCWDs(sessions []episode.SessionInfo, now time.Time) []string {
	sessions = slices.Clone(sessions)
	slices.SortStableFunc(sessions, func(a, b episode.SessionInfo) int { return b.LastEventAt.Compare(a.LastEventAt) })
	var out []string
	for _, s := range sessions {
		if len(out) == recentHookFolders || now.Sub(s.LastEventAt) > recentHookAge {
			break
		}
		if s.CWD == "" || !filepath.IsAbs(s.CWD) {
			continue
		}
		cwd := filepath.Clean(s.CWD)
		if slices.Contains(out, cwd) {
			continue
		}
		if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
			continue // another machine's, or gone
		}
		out = append(out, cwd)
	}
	return out
}
