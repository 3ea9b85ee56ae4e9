package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Limits of one Ingest call. Badger refuses a transaction of more than
// 15% of a memtable (1.2 MB with the 8 MB memtables of badgerOptions) or
// more than that divided by 96 bytes entries (13107). What a batch costs
// (see the key layout in keys.go): ~30 bytes and one entry per added event
// (its dedupe marker), one entry per 64 KiB chunk of events (a chunk over
// the 512-byte value threshold costs only its key), and at most ~2 KB plus
// twice the session id per session (its record and its last, possibly
// small, chunk).
const (
	// MaxIngestEvents is the most events one IngestBatch may hold; Ingest
	// refuses more with ErrBatchTooLarge before reading anything.
	MaxIngestEvents = 8192
	// MaxIngestBytes bounds the events a batch adds, encoded as stored;
	// Ingest refuses more with ErrBatchTooLarge. It bounds the memory a
	// batch holds rather than Badger's limit: chunks go to the value log.
	// Stored events are about the size of the lines they came from or
	// smaller (texts are capped) except for very short lines, so an
	// ingester that reads a few MiB of lines per batch stays far below it.
	// A single event larger than this can never be stored: the caller has
	// to skip its line.
	MaxIngestBytes = 16 << 20
	// MaxIngestSessions is how many sessions a batch within the two
	// limits above may touch and still be sure to fit one transaction,
	// whatever its session ids (up to MaxSessionIDLen): 8192 markers take
	// 250 KB of the 1.2 MB and 8.2k of the 13.1k entries; 64 sessions'
	// records and chunks (at most 320 chunks for 16 MiB) take under
	// 550 KB more. A batch touching more sessions is not refused: Badger
	// decides, and ErrBatchTooLarge says to split it. A file's lines
	// belong to one session, or two with an inline sidechain.
	MaxIngestSessions = 64
	// MaxSessionIDLen bounds a session id in bytes; it is part of keys.
	MaxSessionIDLen = 1024
	// MaxParserState bounds IngestBatch.ParserState. A state over the
	// value threshold goes to the value log and costs a transaction only
	// its key, so the bound is about what one write may cost, not about
	// Badger's limits; the parsers' own bounds keep states far below it.
	MaxParserState = 1 << 20

	// DedupeTTL is how long an event id is remembered. Without a TTL the
	// dedupe set would grow with every event ever ingested. It is safe
	// because an id is only seen again when bytes are read again: a
	// file's offset never moves back except when the file was truncated,
	// rewritten or replaced, and an agent copies history into a new file
	// only when a session is resumed. Both happen to recent sessions; an
	// event older than this coming back means a months-old session was
	// rewritten, and then a duplicate is the lesser harm.
	DedupeTTL = 180 * 24 * time.Hour
)

// Internal sizes.
const (
	// maxChunkBytes is where a chunk is cut: a read of a few events pulls
	// in at most this much, and a backfill writes few, large values.
	maxChunkBytes = 64 << 10
	// chunkFormat is the first byte of every chunk written: its events
	// in transcript.Event's binary encoding. chunkFormatJSON is the one
	// older builds wrote (each event as encoding/json writes it), still read:
	// a session's buffer may span an upgrade.
	chunkFormat     = 2
	chunkFormatJSON = 1
	chunkHeader     = 1 + 4 // format, event count u32 BE
	markerHashLen   = 16
	// maxSessionFiles bounds SessionInfo.Files: the last ones are kept.
	maxSessionFiles = 20
	// txnAttempts bounds the retries of a transaction that lost a race
	// (badger.ErrConflict) with another writer of the same keys.
	txnAttempts = 20
)

// maxEpisodePresize bounds the events Episode makes room for up front.
const maxEpisodePresize = 8192

// clearBatchKeys is how many chunks one ClearEpisode transaction deletes;
// 4096 chunks hold up to 256 MiB of events. A variable so that tests can
// make ClearEpisode take several transactions.
var clearBatchKeys = 4096

// beforeCommit, when set by a test, runs at the end of every attempt of an
// Ingest ("ingest") or of ClearEpisode's first transaction ("clear"), just
// before the commit: a test makes the other writer commit there to force
// a conflict.
var beforeCommit func(op string)

var _ EpisodeStore = (*Badger)(nil)

// sessionRecord is the value of an s/ key: the summary, plus where the
// episode buffer stands. Buffered is always LastSeq - ClearedUpto.
type sessionRecord struct {
	episode.SessionInfo
	// LastSeq is the seq of the session's last event (0: none yet).
	LastSeq uint64 `json:"last_seq"`
	// ClearedUpto is the highest seq cleared by a checkpoint; chunks at or
	// below it are garbage even while a crash left them stored.
	ClearedUpto uint64 `json:"cleared_upto"`
	// DeletedUpto is where the chunks still stored begin: every chunk
	// whose last seq is at or below it is deleted. A checkpoint deletes
	// from here, not from the session's first chunk: Badger's iterators
	// step over every deleted key (tombstone) in their way, so starting
	// at the first chunk made each checkpoint of a long session slower
	// than the one before. It lags ClearedUpto only after a crash between
	// ClearEpisode's transactions, so the next one deletes the leftovers.
	DeletedUpto uint64 `json:"deleted_upto"`
}

func fileKey(key string) []byte {
	return append([]byte(prefixFile), key...)
}

func parserKey(key string) []byte {
	return append([]byte(prefixParser), key...)
}

func sessionKey(id string) []byte {
	return append([]byte(prefixSession), id...)
}

// chunkPrefix is the prefix of every chunk of session id; the separator
// keeps session "a" from matching the chunks of "a/b".
func chunkPrefix(id string) []byte {
	k := make([]byte, 0, len(prefixChunk)+len(id)+1+8)
	k = append(k, prefixChunk...)
	k = append(k, id...)
	return append(k, sep)
}

func chunkKey(id string, lastSeq uint64) []byte {
	return binary.BigEndian.AppendUint64(chunkPrefix(id), lastSeq)
}

// chunkLastSeq reads the last seq from a chunk key with the given prefix.
func chunkLastSeq(key, prefix []byte) (uint64, error) {
	if len(key) != len(prefix)+8 {
		return 0, fmt.Errorf("bad chunk key %q", key)
	}
	return binary.BigEndian.Uint64(key[len(prefix):]), nil
}

// markerKey is the dedupe marker key of an event id (see the key layout).
func markerKey(id string) []byte {
	sum := sha256.Sum256([]byte(id))
	return append([]byte(prefixMarker), sum[:markerHashLen]...)
}

// checkSessionID reports whether id can key a session.
func checkSessionID(id string) error {
	switch {
	case id == "":
		return errors.New("empty session id")
	case len(id) > MaxSessionIDLen:
		return fmt.Errorf("session id of %d bytes (limit %d)", len(id), MaxSessionIDLen)
	case strings.IndexByte(id, sep) >= 0:
		return fmt.Errorf("session id %q holds a NUL byte", id)
	}
	return nil
}

// checkBatch validates a batch before any transaction starts.
func checkBatch(b *IngestBatch) error {
	if b.File.Key == "" {
		return errors.New("file state without a key")
	}
	if n := len(b.ParserState); n > MaxParserState && !b.KeepParserState {
		return fmt.Errorf("parser state of %d bytes (limit %d)", n, MaxParserState)
	}
	if n := len(b.Events); n > MaxIngestEvents {
		return fmt.Errorf("%d events (limit %d): %w", n, MaxIngestEvents, ErrBatchTooLarge)
	}
	for i := range b.Events {
		e := &b.Events[i]
		if e.ID == "" {
			return fmt.Errorf("event %d (offset %d): empty id", i, e.Source.Offset)
		}
		if err := checkSessionID(e.SessionID); err != nil {
			return fmt.Errorf("event %s: %w", e.ID, err)
		}
	}
	return nil
}

// updateRetry runs fn in a read-write transaction, again from scratch
// while it loses races (badger.ErrConflict: another commit changed a key
// fn read, such as an Ingest and a ClearEpisode of one session), so
// neither writer's data is lost. The short growing pause lets the winner
// finish instead of both starting over in lockstep.
func (b *Badger) updateRetry(ctx context.Context, fn func(*badger.Txn) error) error {
	for attempt := 1; ; attempt++ {
		err := b.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
		if attempt == txnAttempts {
			return fmt.Errorf("%d attempts lost a race with other writers: %w", attempt, ErrConflict)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

// Ingest stores a batch in one transaction (see EpisodeStore.Ingest).
func (b *Badger) Ingest(ctx context.Context, batch IngestBatch) (IngestResult, error) {
	key := batch.File.Key
	if err := b.begin(ctx); err != nil {
		return IngestResult{}, fmt.Errorf("ingest %s: %w", key, err)
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return IngestResult{}, fmt.Errorf("ingest %s: %w", key, err)
	}
	if err := checkBatch(&batch); err != nil {
		return IngestResult{}, fmt.Errorf("ingest %s: %w", key, err)
	}
	file := batch.File
	now := b.now().UTC().Round(0)
	if file.UpdatedAt.IsZero() {
		file.UpdatedAt = now
	}
	fileValue, err := json.Marshal(&file)
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest %s: encode file state: %w", key, err)
	}

	in := ingestion{batch: &batch, now: now, fileValue: fileValue, markers: &b.markers}
	var res IngestResult
	defer b.counters.writing()()
	err = func() error {
		// Held to the commit (markers.go); deferred, so that a panic in
		// the transaction cannot leave every later Ingest waiting.
		b.markers.lock()
		defer b.markers.unlock()
		return b.updateRetry(ctx, func(txn *badger.Txn) error {
			var err error
			if res, err = in.run(txn); err != nil {
				return err
			}
			return b.counters.put(txn, in.delta.counts())
		})
	}()
	in.release()
	switch {
	case err == nil:
		b.counters.committed(in.delta.counts())
		return res, nil
	case errors.Is(err, badger.ErrTxnTooBig):
		// Badger's own limit (see MaxIngestSessions); the discarded
		// transaction stored nothing.
		return IngestResult{}, fmt.Errorf("ingest %s: %d events: %w", key, len(batch.Events), ErrBatchTooLarge)
	default:
		return IngestResult{}, fmt.Errorf("ingest %s: %w", key, err)
	}
}

// ingestion is one Ingest call; run is one attempt at its transaction and
// starts from scratch every time.
type ingestion struct {
	batch     *IngestBatch
	now       time.Time
	fileValue []byte
	// markers says which markers need no lookup; the caller holds its
	// lock.
	markers *markerFilter
	// delta is what the attempt changes in the episode totals.
	delta totalsDelta

	// scratch holds one event's encoding between encoding and copying it
	// into its chunk, so encoding allocates nothing per event.
	scratch []byte
	// chunks are the chunk buffers the attempts took from chunkBufs,
	// given back by release once the transaction is done.
	chunks []*[]byte
}

// chunkBufs recycles chunk buffers. Badger copies a value into its value
// log or memtable before a commit returns, and nothing of a discarded
// transaction is kept, so a chunk's buffer is free again once Ingest's
// transaction is done, whatever its outcome. Without it a backfill
// allocates every byte it stores a second time (issue 12: 77 of the 722 MB
// the 200 MB generated backfill allocated), and the Go collector runs
// that much more often. A sync.Pool, not a free list, so that an idle
// daemon's collector takes the buffers back. One thing Badger reads after
// a commit returns: a subscriber's updates (DB.Subscribe), which it copies
// on another goroutine. Nothing subscribes; a subscriber to chunk keys
// would need the buffers kept.
var chunkBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, chunkHeader+maxChunkBytes)
	return &b
}}

// newChunk starts a chunk in a buffer from chunkBufs.
func (in *ingestion) newChunk() []byte {
	p := chunkBufs.Get().(*[]byte)
	in.chunks = append(in.chunks, p)
	c := append((*p)[:0], chunkFormat, 0, 0, 0, 0)
	return c[:chunkHeader]
}

// release gives the chunk buffers back; called once the transaction is
// committed or discarded, never while Badger may still read them.
func (in *ingestion) release() {
	for _, p := range in.chunks {
		chunkBufs.Put(p)
	}
	in.chunks = nil
}

// touched is a session that receives events in this attempt.
type touched struct {
	rec sessionRecord
	key []byte
	// chunk is the chunk being filled: header, then events; n events,
	// the last with seq rec.LastSeq.
	chunk []byte
	n     uint32
	// stored says the record existed; buffered is its Buffered then.
	stored   bool
	buffered int64
}

func (in *ingestion) run(txn *badger.Txn) (IngestResult, error) {
	var res IngestResult
	in.delta = totalsDelta{}
	events := in.batch.Events
	sessions := make(map[string]*touched)
	var order []*touched
	seen := make(map[[markerHashLen]byte]struct{}, len(events))
	var added int

	for i := range events {
		e := &events[i]
		mk := markerKey(e.ID)
		var h [markerHashLen]byte
		copy(h[:], mk[len(prefixMarker):])
		if _, dup := seen[h]; dup {
			res.Duplicates++
			continue
		}
		seen[h] = struct{}{}
		if in.markers.mayHold(h[:]) {
			switch _, err := txn.Get(mk); {
			case err == nil:
				res.Duplicates++
				continue
			case !errors.Is(err, badger.ErrKeyNotFound):
				return res, fmt.Errorf("read dedupe marker of %s: %w", e.ID, err)
			}
		}

		s := sessions[e.SessionID]
		if s == nil {
			var err error
			if s, err = loadTouched(txn, e.SessionID); err != nil {
				return res, err
			}
			sessions[e.SessionID] = s
			order = append(order, s)
		}

		js, err := e.AppendBinary(in.scratch[:0])
		if err != nil {
			return res, fmt.Errorf("encode event %s: %w", e.ID, err)
		}
		in.scratch = js
		if added += len(js); added > MaxIngestBytes {
			return res, fmt.Errorf("events of more than %d bytes: %w", MaxIngestBytes, ErrBatchTooLarge)
		}
		if s.n > 0 && len(s.chunk)+binary.MaxVarintLen64+len(js) > maxChunkBytes {
			if err := s.flush(txn); err != nil {
				return res, err
			}
		}
		if s.chunk == nil {
			s.chunk = in.newChunk()
		}
		s.chunk = binary.AppendUvarint(s.chunk, uint64(len(js)))
		s.chunk = append(s.chunk, js...)
		s.n++
		s.rec.LastSeq++
		s.rec.add(e)

		// Into the filter before the commit (markers.go).
		in.markers.add(h[:])
		if err := txn.SetEntry(badger.NewEntry(mk, nil).WithTTL(DedupeTTL)); err != nil {
			return res, err
		}
		res.Added++
	}

	for _, s := range order {
		if err := s.flush(txn); err != nil {
			return res, err
		}
		s.rec.finish(in.now, in.batch.File.Path, in.batch.Scopes[s.rec.ID])
		if !s.stored {
			in.delta.sessions++
		}
		in.delta.buffered += s.rec.Buffered - s.buffered
		v, err := json.Marshal(&s.rec)
		if err != nil {
			return res, fmt.Errorf("encode session %s: %w", s.rec.ID, err)
		}
		if err := txn.Set(s.key, v); err != nil {
			return res, err
		}
		res.Sessions = append(res.Sessions, s.rec.SessionInfo)
	}
	if err := txn.Set(fileKey(in.batch.File.Key), in.fileValue); err != nil {
		return res, err
	}
	switch {
	case in.batch.KeepParserState:
	case len(in.batch.ParserState) == 0:
		if err := txn.Delete(parserKey(in.batch.File.Key)); err != nil {
			return res, err
		}
	default:
		if err := txn.Set(parserKey(in.batch.File.Key), in.batch.ParserState); err != nil {
			return res, err
		}
	}
	if beforeCommit != nil {
		beforeCommit("ingest")
	}
	return res, nil
}

// loadTouched reads a session's record, or starts a new one.
func loadTouched(txn *badger.Txn, id string) (*touched, error) {
	s := &touched{key: sessionKey(id)}
	rec, err := getSession(txn, id)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		s.rec = *rec
		s.stored, s.buffered = true, rec.Buffered
	} else {
		s.rec.ID = id
	}
	// Empty, not null, in JSON.
	if s.rec.ByKind == nil {
		s.rec.ByKind = map[string]int64{}
	}
	if s.rec.Scope == nil {
		s.rec.Scope = []string{}
	}
	if s.rec.Files == nil {
		s.rec.Files = []string{}
	}
	return s, nil
}

// flush writes the chunk being filled, if any, and starts a new one.
// Badger holds the value until the commit, so its buffer goes back to
// chunkBufs only with release, never here.
func (s *touched) flush(txn *badger.Txn) error {
	if s.n == 0 {
		return nil
	}
	binary.BigEndian.PutUint32(s.chunk[1:chunkHeader], s.n)
	if err := txn.Set(chunkKey(s.rec.ID, s.rec.LastSeq), s.chunk); err != nil {
		return err
	}
	s.chunk, s.n = nil, 0
	return nil
}

// add counts an event into the summary. Identity fields come from the
// latest event that carries them: a session's cwd or branch can change.
func (r *sessionRecord) add(e *transcript.Event) {
	r.Events++
	r.ByKind[string(e.Kind)]++
	if !e.Time.IsZero() {
		t := e.Time.UTC().Round(0)
		if r.FirstEventAt.IsZero() || t.Before(r.FirstEventAt) {
			r.FirstEventAt = t
		}
		if t.After(r.LastEventAt) {
			r.LastEventAt = t
		}
	}
	if e.ParentSessionID != "" {
		r.ParentID = e.ParentSessionID
	}
	if e.Agent != "" {
		r.Agent = e.Agent
	}
	if e.CWD != "" {
		r.CWD = e.CWD
	}
	if e.GitBranch != "" {
		r.GitBranch = e.GitBranch
	}
}

// finish completes the summary of a session that received events.
func (r *sessionRecord) finish(now time.Time, path string, scope []string) {
	r.LastIngestAt = now
	r.Buffered = int64(r.LastSeq - r.ClearedUpto)
	if path != "" && !slices.Contains(r.Files, path) {
		r.Files = append(r.Files, path)
		if n := len(r.Files) - maxSessionFiles; n > 0 {
			r.Files = slices.Delete(r.Files, 0, n)
		}
	}
	if len(scope) > 0 {
		r.Scope = slices.Clone(scope)
	}
}

// getSession reads a session record, nil when absent.
func getSession(txn *badger.Txn, id string) (*sessionRecord, error) {
	item, err := txn.Get(sessionKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rec := new(sessionRecord)
	if err := item.Value(func(v []byte) error { return json.Unmarshal(v, rec) }); err != nil {
		return nil, fmt.Errorf("decode session %s: %w", id, err)
	}
	return rec, nil
}

// FileState returns the stored state of a file, or (nil, nil).
func (b *Badger) FileState(ctx context.Context, key string) (*FileState, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("file state %s: %w", key, err)
	}
	defer b.mu.RUnlock()
	var fs *FileState
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(fileKey(key))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		fs = new(FileState)
		return item.Value(func(v []byte) error { return json.Unmarshal(v, fs) })
	})
	if err != nil {
		return nil, fmt.Errorf("file state %s: %w", key, err)
	}
	return fs, nil
}

// ParserState returns the parser state stored with a file's offset, or nil.
func (b *Badger) ParserState(ctx context.Context, key string) ([]byte, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("parser state %s: %w", key, err)
	}
	defer b.mu.RUnlock()
	var state []byte
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(parserKey(key))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		state, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("parser state %s: %w", key, err)
	}
	return state, nil
}

// FileStates lists every stored file state, by key.
func (b *Badger) FileStates(ctx context.Context) ([]FileState, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("file states: %w", err)
	}
	defer b.mu.RUnlock()
	out := []FileState{}
	err := scan(b.db, []byte(prefixFile), func(k, v []byte) error {
		var fs FileState
		if err := json.Unmarshal(v, &fs); err != nil {
			return fmt.Errorf("decode %s: %w", k, err)
		}
		out = append(out, fs)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("file states: %w", err)
	}
	return out, nil
}

// DeleteFileState forgets a file; deleting an absent one is no error.
func (b *Badger) DeleteFileState(ctx context.Context, key string) error {
	if err := b.begin(ctx); err != nil {
		return fmt.Errorf("delete file state %s: %w", key, err)
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return fmt.Errorf("delete file state %s: %w", key, err)
	}
	// A blind write reads nothing, so it cannot conflict.
	err := b.db.Update(func(txn *badger.Txn) error {
		if err := txn.Delete(fileKey(key)); err != nil {
			return err
		}
		return txn.Delete(parserKey(key))
	})
	if err != nil {
		return fmt.Errorf("delete file state %s: %w", key, err)
	}
	return nil
}

// scan calls fn with every key and value under prefix, in key order; both
// are valid only during the call.
func scan(db *badger.DB, prefix []byte, fn func(k, v []byte) error) error {
	return db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 16})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			if err := item.Value(func(v []byte) error { return fn(item.Key(), v) }); err != nil {
				return err
			}
		}
		return nil
	})
}

// Sessions lists every session, the most recently ingested first (ties:
// id ascending).
func (b *Badger) Sessions(ctx context.Context) ([]episode.SessionInfo, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	defer b.mu.RUnlock()
	out := []episode.SessionInfo{}
	err := scan(b.db, []byte(prefixSession), func(k, v []byte) error {
		var rec sessionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode %s: %w", k, err)
		}
		out = append(out, rec.SessionInfo)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	slices.SortFunc(out, func(a, b episode.SessionInfo) int {
		if c := b.LastIngestAt.Compare(a.LastIngestAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Session returns one session, or (nil, nil) when unknown.
func (b *Badger) Session(ctx context.Context, id string) (*episode.SessionInfo, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	defer b.mu.RUnlock()
	var rec *sessionRecord
	err := b.db.View(func(txn *badger.Txn) error {
		var err error
		rec, err = getSession(txn, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	if rec == nil {
		return nil, nil
	}
	return &rec.SessionInfo, nil
}

// EpisodeTotals reports, for the daemon's status, how many sessions there
// are, how many events wait in their buffers, and how many checkpoints
// cleared them: sums kept in memory (see episodeTotals), not read from the
// records.
func (b *Badger) EpisodeTotals(ctx context.Context) (sessions int, buffered, checkpoints int64, err error) {
	if err := b.begin(ctx); err != nil {
		return 0, 0, 0, fmt.Errorf("episode totals: %w", err)
	}
	defer b.mu.RUnlock()
	sessions, buffered, checkpoints = b.counters.episodes.get()
	return sessions, buffered, checkpoints, nil
}

// Episode returns up to limit buffered events of a session after seq
// `after`, in seq order (see EpisodeStore.Episode). An unknown session has
// no events.
func (b *Badger) Episode(ctx context.Context, sessionID string, after uint64, limit int) ([]episode.BufferedEvent, error) {
	if err := b.begin(ctx); err != nil {
		return nil, fmt.Errorf("episode %s: %w", sessionID, err)
	}
	defer b.mu.RUnlock()
	out := []episode.BufferedEvent{}
	err := b.db.View(func(txn *badger.Txn) error {
		rec, err := getSession(txn, sessionID)
		if err != nil || rec == nil {
			return err
		}
		// Seqs at or below the watermark are cleared even if a crash left
		// their chunk behind.
		start := max(after, rec.ClearedUpto) + 1
		if start > rec.LastSeq {
			return nil
		}
		// Sized once: a checkpoint's episode is thousands of events of
		// a few hundred bytes each, and growing it by doubling allocated
		// more than the events' own texts (issue 12). Bounded, so that
		// a damaged record cannot ask for a huge slice up front.
		want := rec.LastSeq - start + 1
		if limit > 0 {
			want = min(want, uint64(limit))
		}
		out = make([]episode.BufferedEvent, 0, min(want, maxEpisodePresize))
		prefix := chunkPrefix(sessionID)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		full := false
		for it.Seek(chunkKey(sessionID, start)); !full && it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			last, err := chunkLastSeq(item.Key(), prefix)
			if err != nil {
				return err
			}
			err = item.Value(func(v []byte) error {
				return decodeChunk(v, last, func(seq uint64, decode func(*transcript.Event) error) (bool, error) {
					if seq < start {
						return true, nil
					}
					// Decoded in place: a BufferedEvent decoded on its
					// own escapes to the heap, then is copied.
					out = append(out, episode.BufferedEvent{Seq: seq})
					if err := decode(&out[len(out)-1].Event); err != nil {
						return false, fmt.Errorf("decode event %d: %w", seq, err)
					}
					full = limit > 0 && len(out) >= limit
					return !full, nil
				})
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("episode %s: %w", sessionID, err)
	}
	return out, nil
}

// decodeChunk calls fn with the seq of each event in a chunk whose last
// seq is last, and a function decoding the event, until fn returns false;
// decode is valid only during the call.
func decodeChunk(v []byte, last uint64, fn func(seq uint64, decode func(*transcript.Event) error) (bool, error)) error {
	if len(v) < chunkHeader || (v[0] != chunkFormat && v[0] != chunkFormatJSON) {
		return fmt.Errorf("bad chunk %d: header %x", last, v[:min(len(v), chunkHeader)])
	}
	var enc []byte
	decode := func(e *transcript.Event) error { return e.UnmarshalBinary(enc) }
	if v[0] == chunkFormatJSON {
		decode = func(e *transcript.Event) error { return transcript.UnmarshalStored(enc, e) }
	}
	n := uint64(binary.BigEndian.Uint32(v[1:chunkHeader]))
	if n == 0 || n > last {
		return fmt.Errorf("bad chunk %d: %d events", last, n)
	}
	rest := v[chunkHeader:]
	for seq := last - n + 1; seq <= last; seq++ {
		size, k := binary.Uvarint(rest)
		if k <= 0 || size > uint64(len(rest)-k) {
			return fmt.Errorf("bad chunk %d: event %d truncated", last, seq)
		}
		enc = rest[k : k+int(size)]
		more, err := fn(seq, decode)
		if err != nil || !more {
			return err
		}
		rest = rest[k+int(size):]
	}
	return nil
}

// ClearEpisode clears a session's buffer up to seq upto and counts a
// checkpoint (see EpisodeStore.ClearEpisode). The first transaction moves
// the session's watermark, fixes Buffered and counts the checkpoint, so
// from its commit on the cleared events are gone for every reader; it and
// any further transactions then delete the chunks below the watermark.
// A crash between them leaves chunks nobody reads, which the session's
// next ClearEpisode deletes. upto beyond the last ingested seq clears
// what there is: a later event must never be hidden by an old watermark.
func (b *Badger) ClearEpisode(ctx context.Context, sessionID string, upto uint64) error {
	if err := b.begin(ctx); err != nil {
		return fmt.Errorf("clear episode %s: %w", sessionID, err)
	}
	defer b.mu.RUnlock()
	if err := b.roomToWrite(); err != nil {
		return fmt.Errorf("clear episode %s: %w", sessionID, err)
	}
	now := b.now().UTC().Round(0)
	var watermark, from uint64
	var more bool
	var delta totalsDelta
	done := b.counters.writing()
	err := b.updateRetry(ctx, func(txn *badger.Txn) error {
		rec, err := getSession(txn, sessionID)
		if err != nil {
			return err
		}
		if rec == nil {
			return ErrNotFound
		}
		delta = totalsDelta{buffered: -rec.Buffered, checkpoints: 1}
		rec.ClearedUpto = max(rec.ClearedUpto, min(upto, rec.LastSeq))
		rec.Buffered = int64(rec.LastSeq - rec.ClearedUpto)
		rec.Checkpoints++
		rec.LastCheckpointAt = now
		delta.buffered += rec.Buffered
		watermark = rec.ClearedUpto
		if more, from, err = deleteChunks(txn, sessionID, rec.DeletedUpto, watermark); err != nil {
			return err
		}
		if !more {
			rec.DeletedUpto = max(rec.DeletedUpto, watermark)
		}
		v, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encode session: %w", err)
		}
		if err := txn.Set(sessionKey(sessionID), v); err != nil {
			return err
		}
		if err := b.counters.put(txn, delta.counts()); err != nil {
			return err
		}
		if beforeCommit != nil {
			beforeCommit("clear")
		}
		return nil
	})
	done()
	if err == nil {
		b.counters.committed(delta.counts())
	}
	for err == nil && more {
		if err = ctx.Err(); err != nil {
			break
		}
		var next uint64
		err = b.updateRetry(ctx, func(txn *badger.Txn) error {
			var err error
			if more, next, err = deleteChunks(txn, sessionID, from, watermark); err != nil || more {
				return err
			}
			// The last batch: record that the chunks up to the
			// watermark are gone.
			rec, err := getSession(txn, sessionID)
			if err != nil || rec == nil || rec.DeletedUpto >= watermark {
				return err
			}
			rec.DeletedUpto = watermark
			v, err := json.Marshal(rec)
			if err != nil {
				return fmt.Errorf("encode session: %w", err)
			}
			return txn.Set(sessionKey(sessionID), v)
		})
		from = next
	}
	if err != nil {
		return fmt.Errorf("clear episode %s: %w", sessionID, err)
	}
	return nil
}

// deleteChunks deletes up to clearBatchKeys chunks of a session whose
// events all have seqs in (from, watermark]: it seeks past the chunks
// already deleted rather than stepping over their tombstones. more
// reports that the limit was hit, and next is the last seq of the last
// chunk deleted, where the next call starts.
func deleteChunks(txn *badger.Txn, sessionID string, from, watermark uint64) (more bool, next uint64, err error) {
	prefix := chunkPrefix(sessionID)
	next = from
	var keys [][]byte
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	for it.Seek(chunkKey(sessionID, from+1)); it.ValidForPrefix(prefix) && len(keys) < clearBatchKeys; it.Next() {
		k := it.Item().Key()
		last, err := chunkLastSeq(k, prefix)
		if err != nil {
			it.Close()
			return false, from, err
		}
		if last > watermark {
			break
		}
		keys = append(keys, it.Item().KeyCopy(nil))
		next = last
	}
	it.Close()
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return false, from, err
		}
	}
	return len(keys) == clearBatchKeys, next, nil
}
