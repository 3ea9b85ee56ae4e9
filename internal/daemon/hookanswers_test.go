package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/medallionhq/medallion/internal/episode"
)

// TestRecentCWDs: the folders readied at start are those of the latest
// events, once each, only those still there and recent, at most
// recentHookFolders.
func TestRecentCWDs(t *testing.T) {
	now := time.Now()
	dir := func(name string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := dir("a"), dir("b"), dir("c")
	at := func(cwd string, ago time.Duration) episode.SessionInfo {
		return episode.SessionInfo{ID: cwd, CWD: cwd, LastEventAt: now.Add(-ago)}
	}
	got := recentCWDs([]episode.SessionInfo{
		at(a, 3*time.Hour),
		at(b+"/", time.Hour), // cleaned
		at(a, 2*time.Hour),   // a again
		at("/nowhere/at/all", time.Minute),
		at("relative/path", time.Minute),
		at("", time.Minute),
		at(c, recentHookAge+time.Hour),
	}, now)
	if want := []string{b, a}; !slices.Equal(got, want) {
		t.Errorf("recentCWDs = %q, want %q", got, want)
	}

	var many []episode.SessionInfo
	for i := range recentHookFolders + 5 {
		many = append(many, at(dir(fmt.Sprint("d", i)), time.Duration(i)*time.Minute))
	}
	if got := recentCWDs(many, now); len(got) != recentHookFolders || got[0] != many[0].CWD {
		t.Errorf("%d folders, first %q; want %d, the newest first", len(got), got[0], recentHookFolders)
	}
}
