// Package store persists medallions and every version of them.
//
// Store is the contract (DESIGN.md "Store contract", seed 002); the Badger
// implementation and its key layout live in badger.go. Any implementation
// must pass the contract suite in storetest.
package store

import (
	"context"
	"errors"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Sentinel errors callers branch on. Implementations wrap them with context,
// so test with errors.Is.
var (
	// ErrNotFound: Update, History or a versioned read of an id that is not stored.
	ErrNotFound = errors.New("not found")
	// ErrExists: Create of an id that is already stored.
	ErrExists = errors.New("already exists")
	// ErrConflict: Update based on a version that is no longer the latest.
	ErrConflict = errors.New("version conflict")
	// ErrBatchTooLarge: an IngestBatch that does not fit one transaction.
	ErrBatchTooLarge = errors.New("batch too large for one transaction")
)

// Store is the medallion store contract.
//
// Validation failures are returned as *medallion.ValidationError (use
// errors.As) and nothing is written.
type Store interface {
	// Create stores a new medallion as version 1. Empty created_at and
	// updated_at are set to now (updated_at defaults to created_at), an
	// empty status to active; meta.version is ignored and stored as 1.
	// It fails with ErrExists when the id is taken.
	Create(ctx context.Context, m *medallion.Medallion) (*medallion.Medallion, error)

	// Update stores m as the next version of an existing medallion.
	// m.Meta.Version must equal the stored (latest) version, or the update
	// fails with ErrConflict: two writers racing never lose an update
	// silently. The store keeps created_at from the first version, sets
	// updated_at to now (always later than the previous version's) and
	// stores version+1. It fails with ErrNotFound when the id is absent.
	Update(ctx context.Context, m *medallion.Medallion) (*medallion.Medallion, error)

	// Get returns the latest version, or (nil, nil) when the id is absent.
	Get(ctx context.Context, id string) (*medallion.Medallion, error)

	// GetVersion returns one stored version, or (nil, nil) when the id or
	// that version is absent.
	GetVersion(ctx context.Context, id string, version int) (*medallion.Medallion, error)

	// History lists every stored version, oldest first; ErrNotFound when
	// the id is absent.
	History(ctx context.Context, id string) ([]medallion.VersionInfo, error)

	// LatestForScope returns up to limit medallions (latest versions) whose
	// graph_nodes contain every requested node and whose tags overlap the
	// requested tags (an empty requested tag list matches any tags), newest
	// updated_at first (ties: id ascending). An empty scope or limit <= 0
	// gives an empty list. Implementations answer from indexes, not a scan.
	LatestForScope(ctx context.Context, scope medallion.Scope, limit int) ([]*medallion.Medallion, error)

	// Count returns how many medallions are stored.
	Count(ctx context.Context) (int, error)

	// Close releases the store; it is idempotent.
	Close() error
}
