//go:build unix

package socket

import (
	"errors"
	"os"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// Peers decides whom a socket of the daemon's serves: its own user, or
// root. Root is let in because it can read the store files and trace the
// daemon anyway, so refusing it protects nothing and would break `sudo
// medallionctl`. It counts the peers it refuses and logs them: the first
// at Warn (someone else is knocking, the owner should know), later ones at
// Debug so that a local user cannot flood the log. The API's Listener and
// the hook's socket (internal/server) share it.
type Peers struct {
	uid      int
	log      hclog.Logger
	rejected atomic.Uint64
}

// NewPeers lets in this process's user and root; log (nil: none) hears of
// the others.
func NewPeers(log hclog.Logger) *Peers {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Peers{uid: os.Geteuid(), log: log}
}

// Allow reports whether the peer whose uid was read as uid, or not (err),
// is served. Where the OS cannot tell who is on the other end, the 0700
// directory and the 0600 socket are the protection, and it is.
func (p *Peers) Allow(uid int, err error) bool {
	if errors.Is(err, errNoPeerCred) {
		return true
	}
	if err == nil && (uid == p.uid || uid == 0) {
		return true
	}
	n := p.rejected.Add(1)
	switch {
	case err != nil:
		p.log.Warn("refused connection: cannot read peer credentials", "error", err, "refused", n)
	case n == 1:
		p.log.Warn("refused connection from another user", "peer_uid", uid, "uid", p.uid)
	default:
		p.log.Debug("refused connection from another user", "peer_uid", uid, "uid", p.uid, "refused", n)
	}
	return false
}

// Rejected returns how many peers Allow has refused.
func (p *Peers) Rejected() uint64 { return p.rejected.Load() }
