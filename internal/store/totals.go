package store

import (
	"encoding/json"
	"fmt"
	"sync"

	badger "github.com/dgraph-io/badger/v4"
)

// episodeTotals are the sums behind EpisodeTotals, kept in memory so that
// the daemon's status reads three numbers instead of decoding every
// session record (16 ms at 2,000 sessions). They are loaded from the
// stored counters when the store opens (counters.go), and afterwards
// changed only by the deltas of committed Ingest and ClearEpisode
// transactions, the only writers of session records, which store the same
// deltas; so they always equal the stored records, also after a kill -9.
type episodeTotals struct {
	mu          sync.Mutex
	sessions    int
	buffered    int64
	checkpoints int64
}

// totalsDelta is what one committed transaction changed.
type totalsDelta struct {
	sessions    int
	buffered    int64
	checkpoints int64
}

// counts is d as a change to the stored counters.
func (d totalsDelta) counts() *counts {
	return &counts{sessions: int64(d.sessions), buffered: d.buffered, checkpoints: d.checkpoints}
}

// add applies a committed transaction's delta.
func (t *episodeTotals) add(d totalsDelta) {
	t.mu.Lock()
	t.sessions += d.sessions
	t.buffered += d.buffered
	t.checkpoints += d.checkpoints
	t.mu.Unlock()
}

func (t *episodeTotals) get() (sessions int, buffered, checkpoints int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions, t.buffered, t.checkpoints
}

// set replaces the totals.
func (t *episodeTotals) set(d totalsDelta) {
	t.mu.Lock()
	t.sessions, t.buffered, t.checkpoints = d.sessions, d.buffered, d.checkpoints
	t.mu.Unlock()
}

// sumSessions sums the stored session records, decoding every one: how a
// store without stored counters is counted (counters.go).
func sumSessions(txn *badger.Txn) (totalsDelta, error) {
	var sum totalsDelta
	prefix := []byte(prefixSession)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 16})
	defer it.Close()
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		item := it.Item()
		err := item.Value(func(v []byte) error {
			var rec struct {
				Buffered    int64 `json:"buffered"`
				Checkpoints int64 `json:"checkpoints"`
			}
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode %s: %w", item.Key(), err)
			}
			sum.sessions++
			sum.buffered += rec.Buffered
			sum.checkpoints += rec.Checkpoints
			return nil
		})
		if err != nil {
			return sum, fmt.Errorf("episode totals: %w", err)
		}
	}
	return sum, nil
}
