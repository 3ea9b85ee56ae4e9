package llm

import (
	"context"
	"sync"
	"time"
)

// Ledger stores tokens spent per UTC day ("2006-01-02"). The daemon keeps it
// in its store so the daily cap survives restarts; MemoryLedger serves tests
// and runs without a store.
type Ledger interface {
	Used(ctx context.Context, day string) (int, error)
	Add(ctx context.Context, day string, tokens int) error
}

// Budget caps the tokens (prompt + completion) the client spends per UTC day.
//
// The check happens before a request and the spending is recorded after the
// reply, so concurrent calls can overshoot the cap by what is in flight; a
// cap is a cost guard, not an exact quota.
type Budget struct {
	Ledger Ledger
	// DailyTokens is the cap; 0 or less means no cap (spending is still
	// recorded, for Stats).
	DailyTokens int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// day is today's ledger key. UTC, so the cap resets at the same instant
// wherever the daemon runs and a timezone change cannot double a day.
func (b *Budget) day() string {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	return now().UTC().Format(time.DateOnly)
}

// MemoryLedger is a Ledger in memory, safe for concurrent use.
type MemoryLedger struct {
	mu   sync.Mutex
	days map[string]int
}

var _ Ledger = (*MemoryLedger)(nil)

// NewMemoryLedger returns an empty MemoryLedger.
func NewMemoryLedger() *MemoryLedger { return &MemoryLedger{days: map[string]int{}} }

// Used returns the tokens recorded for day.
func (l *MemoryLedger) Used(_ context.Context, day string) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.days[day], nil
}

// Add records tokens spent on day.
func (l *MemoryLedger) Add(_ context.Context, day string, tokens int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.days == nil {
		l.days = map[string]int{}
	}
	l.days[day] += tokens
	return nil
}
