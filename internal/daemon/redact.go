package daemon

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/redact"
	"github.com/medallionhq/medallion/internal/store"
)

// redactingStore is the store every medallion write of the daemon goes
// through (API put, checkpoint curation from transcripts or evidence, an
// LLM's reply, import): each free-text field is redacted before it is
// stored. Events are redacted by the ingest pipeline; medallions were
// stored verbatim, so a token in a "medallionctl put" file reached the disk
// and the save file load hands the next agent (issue 11).
type redactingStore struct {
	*store.Badger
	r   *redact.Redactor
	log hclog.Logger
}

var _ store.Store = (*redactingStore)(nil)

func newRedactingStore(st *store.Badger, logger hclog.Logger) *redactingStore {
	return &redactingStore{Badger: st, r: redact.Default, log: logger}
}

// clean returns a redacted copy of m (m itself is the caller's).
func (s *redactingStore) clean(m *medallion.Medallion) *medallion.Medallion {
	if m == nil {
		return nil
	}
	c := m.Clone()
	total := 0
	c.EachText(func(t *string) {
		out, n := s.r.Redact(*t)
		*t, total = out, total+n
	})
	if total > 0 {
		s.log.Info("secrets redacted from a medallion before storing it", "id", c.Meta.MedallionID, "secrets", total)
	}
	return c
}

// Create redacts m, then stores it (see store.Store).
func (s *redactingStore) Create(ctx context.Context, m *medallion.Medallion) (*medallion.Medallion, error) {
	return s.Badger.Create(ctx, s.clean(m))
}

// Update redacts m, then stores it (see store.Store).
func (s *redactingStore) Update(ctx context.Context, m *medallion.Medallion) (*medallion.Medallion, error) {
	return s.Badger.Update(ctx, s.clean(m))
}

// Import redacts every version, then stores them (see store.Badger.Import).
func (s *redactingStore) Import(ctx context.Context, versions []*medallion.Medallion) error {
	clean := make([]*medallion.Medallion, len(versions))
	for i, v := range versions {
		clean[i] = s.clean(v)
	}
	return s.Badger.Import(ctx, clean)
}
