package search

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
)

// BM25 parameters: the usual ones. bm25K1 bounds what repeating a term adds;
// bm25B is how much a long item is marked down against a short one.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// pastWeight marks down an item text no longer in its medallion's latest
// version: with the same words, what holds now ranks first, while a
// superseded decision still comes up when it is what the words describe.
const pastWeight = 0.85

// overfetch is how many candidates per result are read: candidates of a
// medallion outside the scope that shares its hash, and the past items
// marked down, are settled on the documents themselves.
const overfetch = 3

// Hit is one document found.
type Hit struct {
	*Doc
	Score float64
}

// Result is a search's answer.
type Result struct {
	// Terms are the query's index terms, each once.
	Terms []string
	// Matched counts the documents holding at least one term (in scope).
	Matched int
	Hits    []Hit
}

// Search ranks the documents holding any of the query's terms by BM25 and
// returns the best limit. When scope is not nil, only documents of the
// medallions it names count.
func (ix *Index) Search(ctx context.Context, query string, scope []string, limit int) (Result, error) {
	terms := slices.Compact(sortedCopy(Terms(query)))
	res := Result{Terms: terms}
	if len(terms) == 0 || limit <= 0 || (scope != nil && len(scope) == 0) {
		return res, nil
	}
	var allowed map[[midSize]byte]bool
	var inScope map[string]bool
	if scope != nil {
		allowed, inScope = map[[midSize]byte]bool{}, map[string]bool{}
		for _, mid := range scope {
			allowed[midHash(mid)] = true
			inScope[mid] = true
		}
	}
	n := float64(max(ix.docs.Load(), 1))
	avgdl := max(float64(ix.length.Load())/n, 1)
	scores := map[docID]float64{}
	err := ix.st.View(ctx, func(txn *badger.Txn) error {
		var post []posting
		for _, t := range terms {
			var blocks int
			var err error
			if post, blocks, err = postings(ctx, txn, t, post[:0]); err != nil {
				return err
			}
			if blocks > mergeAt {
				ix.requestMerge(t)
			}
			df := float64(len(post))
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			for _, p := range post {
				if allowed != nil && !allowed[[midSize]byte(p.id[:midSize])] {
					continue
				}
				tf := float64(p.tf)
				scores[p.id] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(p.dl)/avgdl))
			}
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("search: %w", err)
	}
	res.Matched = len(scores)
	best := top(scores, limit*overfetch)
	err = ix.st.View(ctx, func(txn *badger.Txn) error {
		for _, c := range best {
			d, err := getDoc(txn, c.id)
			if err != nil {
				return err
			}
			if d == nil || (inScope != nil && !inScope[d.MedallionID]) {
				continue
			}
			score := c.score
			if d.Until != 0 {
				score *= pastWeight
			}
			res.Hits = append(res.Hits, Hit{Doc: d, Score: score})
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("search: %w", err)
	}
	slices.SortStableFunc(res.Hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.MedallionID+"\x00"+a.Ref, b.MedallionID+"\x00"+b.Ref)
	})
	if len(res.Hits) > limit {
		res.Hits = res.Hits[:limit]
	}
	return res, nil
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// candidate is a scored document id.
type candidate struct {
	id    docID
	score float64
}

// minHeap keeps the best candidates seen, the worst on top.
type minHeap []candidate

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// top returns the k best-scored ids, best first, without sorting them all.
func top(scores map[docID]float64, k int) []candidate {
	h := make(minHeap, 0, k+1)
	for id, s := range scores {
		if len(h) < k {
			heap.Push(&h, candidate{id, s})
		} else if s > h[0].score {
			h[0] = candidate{id, s}
			heap.Fix(&h, 0)
		}
	}
	out := []candidate(h)
	slices.SortFunc(out, func(a, b candidate) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return slices.Compare(a.id[:], b.id[:])
	})
	return out
}
