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

// prune turns MaxScore's cut on; tests compare with it off.
var prune = true

// Hit is one document found.
type Hit struct {
	*Doc
	Score float64
}

// Result is a search's answer.
type Result struct {
	// Terms are the query's index terms, each once.
	Terms []string
	// Matched counts the documents holding at least one term (in
	// scope); with several terms, those holding only the commonest ones
	// are left out once the best are settled without them.
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
	score := func(p posting, idf float64) float64 {
		tf := float64(p.tf)
		return idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(p.dl)/avgdl))
	}
	type list struct {
		post []posting
		idf  float64
		// bound is more than the term can add to any score: BM25's
		// tf/(tf+K) stays below 1.
		bound float64
	}
	var lists []list
	err := ix.st.View(ctx, func(txn *badger.Txn) error {
		for _, t := range terms {
			post, blocks, err := postings(ctx, txn, t, nil)
			if err != nil {
				return err
			}
			if blocks > mergeAt {
				ix.requestMerge(t)
			}
			if allowed != nil {
				post = slices.DeleteFunc(post, func(p posting) bool { return !allowed[[midSize]byte(p.id[:midSize])] })
			}
			df := float64(len(post))
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			lists = append(lists, list{post, idf, idf * (bm25K1 + 1)})
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("search: %w", err)
	}
	k := limit * overfetch
	var best []candidate
	if len(lists) == 1 {
		// One term: rank its postings straight into the top k.
		h := make(minHeap, 0, k+1)
		for _, p := range lists[0].post {
			h.offer(candidate{p.id, score(p, lists[0].idf)}, k)
		}
		res.Matched, best = len(lists[0].post), h.sorted()
	} else {
		// Rarest terms first. Once k documents score above what all the
		// terms left could add together, a document none of the terms so
		// far holds cannot reach the top k: the commoner terms then only
		// add to the documents already scored (MaxScore's cut), and a
		// word in half the items costs lookups, not a map of half the
		// index.
		slices.SortStableFunc(lists, func(a, b list) int { return cmpDesc(a.bound, b.bound) })
		left := 0.0
		for _, l := range lists {
			left += l.bound
		}
		scores := map[docID]float64{}
		for _, l := range lists {
			grow := !prune || len(scores) < k || kth(scores, k) <= left
			for _, p := range l.post {
				if cur, ok := scores[p.id]; ok {
					scores[p.id] = cur + score(p, l.idf)
				} else if grow {
					scores[p.id] = score(p, l.idf)
				}
			}
			left -= l.bound
		}
		res.Matched, best = len(scores), top(scores, k)
	}
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
		if c := cmpDesc(a.Score, b.Score); c != 0 {
			return c
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

// offer keeps c when it is among the k best seen.
func (h *minHeap) offer(c candidate, k int) {
	if len(*h) < k {
		heap.Push(h, c)
	} else if c.score > (*h)[0].score {
		(*h)[0] = c
		heap.Fix(h, 0)
	}
}

// sorted returns the kept candidates, best first (ties by id).
func (h minHeap) sorted() []candidate {
	out := []candidate(h)
	slices.SortFunc(out, func(a, b candidate) int {
		if c := cmpDesc(a.score, b.score); c != 0 {
			return c
		}
		return slices.Compare(a.id[:], b.id[:])
	})
	return out
}

// top returns the k best-scored ids, best first, without sorting them all.
func top(scores map[docID]float64, k int) []candidate {
	h := make(minHeap, 0, k+1)
	for id, s := range scores {
		h.offer(candidate{id, s}, k)
	}
	return h.sorted()
}

// kth is the k-th best score (scores holds at least k).
func kth(scores map[docID]float64, k int) float64 {
	h := make(minHeap, 0, k+1)
	for id, s := range scores {
		h.offer(candidate{id, s}, k)
	}
	return h[0].score
}

// cmpDesc orders larger first.
func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
