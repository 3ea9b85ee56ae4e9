package ingest

import (
	"crypto/sha256"

	"github.com/medallionhq/medallion/internal/shasum"
)

// The parsers this package runs hash every message's text into its event's
// id (internal/transcript, through internal/shasum). This package links
// crypto/sha256 anyway (file fingerprints, commits), which uses the CPU's
// SHA instructions: 12 % of a Claude Code transcript's parse went to
// shasum's plain Go, 4 % to crypto/sha256. medallionctl, which must not
// link crypto/sha256 (internal/shasum), never links this package.
func init() { shasum.Use(sha256.Sum256) }
