package search

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Postings are kept in blocks: the value of q/p/<term> 0x00 <block id>
// is blockFormat and then postingSize bytes per document holding the
// term (its id, the term's frequency in it and its length, both capped at
// 255). A write adds one block per term of the documents it creates,
// under a new block id (the time and a sequence number), so two writes
// never touch the same key and never conflict. Reading a term's postings
// is then one key per block rather than per document: Badger iterates
// keys at about a microsecond each, which at a million items made the
// common words cost a tenth of a second. A term read in more than mergeAt
// blocks is merged, in the background, into blocks of up to
// maxBlockPostings; the merge deletes exactly the blocks it read, in the
// transaction that writes their union, so a reader sees either and a
// writer adding a block meanwhile is not disturbed.
const (
	blockFormat      = 1
	postingSize      = idSize + 2
	maxBlockPostings = 4096
	mergeAt          = 8
	// mergeChunk bounds the blocks one merge transaction replaces (their
	// keys are deleted in it).
	mergeChunk = 1024
	// flushPostings bounds the postings a rebuild holds in memory before
	// writing them out (14 bytes each).
	flushPostings = 1 << 20
)

func termPrefix(term string) []byte {
	return append(append([]byte(prefixPosting), term...), sep)
}

func (ix *Index) blockKey(term string) []byte {
	k := binary.BigEndian.AppendUint64(termPrefix(term), uint64(time.Now().UnixNano()))
	return binary.BigEndian.AppendUint64(k, ix.seq.Add(1))
}

// appendPosting appends one posting to a block (or starts one).
func appendPosting(block []byte, id docID, tf, dl int) []byte {
	if len(block) == 0 {
		block = append(block, blockFormat)
	}
	block = append(block, id[:]...)
	return append(block, byte(min(tf, 255)), byte(min(dl, 255)))
}

// posting is one document holding a term.
type posting struct {
	id     docID
	tf, dl uint8
}

// decodeBlock appends a block's postings to out.
func decodeBlock(v []byte, out []posting) ([]posting, error) {
	if len(v) == 0 || v[0] != blockFormat || (len(v)-1)%postingSize != 0 {
		return out, fmt.Errorf("bad posting block of %d bytes", len(v))
	}
	for p := v[1:]; len(p) > 0; p = p[postingSize:] {
		out = append(out, posting{id: docID(p[:idSize]), tf: p[idSize], dl: p[idSize+1]})
	}
	return out, nil
}

// postings appends the postings of term to out and says in how many
// blocks they were.
func postings(ctx context.Context, txn *badger.Txn, term string, out []posting) ([]posting, int, error) {
	p := termPrefix(term)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true, PrefetchSize: 16})
	defer it.Close()
	blocks := 0
	for it.Seek(p); it.ValidForPrefix(p); it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		err := it.Item().Value(func(v []byte) (err error) { out, err = decodeBlock(v, out); return err })
		if err != nil {
			return nil, 0, fmt.Errorf("term %q: %w", term, err)
		}
		blocks++
	}
	return out, blocks, nil
}

// postingBuffer gathers the postings of documents by term until they are
// written as blocks.
type postingBuffer struct {
	blocks map[string][]byte
	n      int // postings held
}

func (pb *postingBuffer) add(term string, id docID, tf, dl int) {
	if pb.blocks == nil {
		pb.blocks = map[string][]byte{}
	}
	pb.blocks[term] = appendPosting(pb.blocks[term], id, tf, dl)
	pb.n++
}

// take moves the postings of o into pb.
func (pb *postingBuffer) take(o *postingBuffer) {
	if pb.blocks == nil {
		pb.blocks = map[string][]byte{}
	}
	for term, block := range o.blocks {
		if cur := pb.blocks[term]; len(cur) > 0 {
			pb.blocks[term] = append(cur, block[1:]...)
		} else {
			pb.blocks[term] = block
		}
	}
	pb.n += o.n
}

// write sets the buffered blocks in txn, cut at maxBlockPostings, and
// empties the buffer.
func (pb *postingBuffer) write(ix *Index, txn *badger.Txn) error {
	for term, block := range pb.blocks {
		if err := ix.setBlocks(txn, term, block); err != nil {
			return err
		}
	}
	pb.blocks, pb.n = nil, 0
	return nil
}

// setBlocks writes the postings of block (one term) as blocks of at most
// maxBlockPostings.
func (ix *Index) setBlocks(txn *badger.Txn, term string, block []byte) error {
	const max = maxBlockPostings * postingSize
	for body := block[1:]; len(body) > 0; {
		n := min(len(body), max)
		v := append([]byte{blockFormat}, body[:n]...)
		if err := txn.Set(ix.blockKey(term), v); err != nil {
			return err
		}
		body = body[n:]
	}
	return nil
}

// flushBuffer writes what a rebuild gathered, in transactions of a
// bounded number of blocks.
func (ix *Index) flushBuffer(write func(func(*badger.Txn) error) error, pb *postingBuffer) error {
	terms := make([]string, 0, len(pb.blocks))
	for t := range pb.blocks {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	const perTxn = 2000
	for len(terms) > 0 {
		chunk := terms[:min(perTxn, len(terms))]
		terms = terms[len(chunk):]
		err := write(func(txn *badger.Txn) error {
			for _, t := range chunk {
				if err := ix.setBlocks(txn, t, pb.blocks[t]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	pb.blocks, pb.n = nil, 0
	return nil
}

// requestMerge asks the merger to merge term's blocks; a full queue drops
// the request (the next search of the term asks again).
func (ix *Index) requestMerge(term string) {
	select {
	case ix.merges <- term:
	default:
	}
}

// merger merges the blocks of the terms searches found fragmented, until
// Close.
func (ix *Index) merger() {
	defer close(ix.mergerDone)
	pending := map[string]bool{}
	for {
		select {
		case <-ix.stop:
			return
		case term := <-ix.merges:
			if pending[term] {
				continue
			}
			pending[term] = true
			if err := ix.merge(term); err != nil {
				ix.log.Warn("merge search postings", "error", err)
			}
			delete(pending, term)
		}
	}
}

// merge rewrites the blocks of term as few full blocks.
func (ix *Index) merge(term string) error {
	ctx := context.Background()
	var keys [][]byte
	err := ix.st.View(ctx, func(txn *badger.Txn) error {
		p := termPrefix(term)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
		defer it.Close()
		for it.Seek(p); it.ValidForPrefix(p); it.Next() {
			keys = append(keys, it.Item().KeyCopy(nil))
		}
		return nil
	})
	if err != nil || len(keys) <= 1 {
		return err
	}
	for len(keys) > 1 {
		chunk := keys[:min(mergeChunk, len(keys))]
		keys = keys[len(chunk):]
		err := ix.st.Write(ctx, func(txn *badger.Txn) error {
			var merged []byte
			for _, k := range chunk {
				item, err := txn.Get(k)
				if err != nil {
					return err // a block gone is another merge's work: retry later
				}
				if err := item.Value(func(v []byte) error {
					if len(v) == 0 || v[0] != blockFormat {
						return fmt.Errorf("bad posting block of term %q", term)
					}
					if merged == nil {
						merged = []byte{blockFormat}
					}
					merged = append(merged, v[1:]...)
					return nil
				}); err != nil {
					return err
				}
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return ix.setBlocks(txn, term, merged)
		})
		if err != nil {
			return fmt.Errorf("term %q: %w", term, err)
		}
	}
	return nil
}

// Close stops the background merger; the index must not be used after.
// It is idempotent.
func (ix *Index) Close() {
	ix.closeOnce.Do(func() {
		close(ix.stop)
		<-ix.mergerDone
	})
}
