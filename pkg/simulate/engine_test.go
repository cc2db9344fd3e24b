package simulate

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// refLRU is the straightforward reference: a slice in recency order, most
// recent first.
type refLRU struct {
	capacity int
	order    []routecore.SequenceHash
}

func (r *refLRU) prefix(seq []routecore.SequenceHash) int {
	for i, h := range seq {
		if !slices.Contains(r.order, h) {
			return i
		}
	}
	return len(seq)
}

func (r *refLRU) store(seq []routecore.SequenceHash) (int, []routecore.SequenceHash) {
	first := r.prefix(seq)
	for k := len(seq) - 1; k >= 0; k-- {
		if i := slices.Index(r.order, seq[k]); i >= 0 {
			r.order = slices.Delete(r.order, i, i+1)
		}
		r.order = slices.Insert(r.order, 0, seq[k])
	}
	var evicted []routecore.SequenceHash
	for len(r.order) > r.capacity && len(r.order) > len(seq) {
		evicted = append(evicted, r.order[len(r.order)-1])
		r.order = r.order[:len(r.order)-1]
	}
	return first, evicted
}

// TestLRUMatchesReference drives the engine model's prefix cache and the
// reference with the same random stores (chained prompts sharing prefixes,
// hash 0 included, capacities below one prompt included) and compares every
// answer, every eviction in order, and the contents.
func TestLRUMatchesReference(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 99))
		capacity := []int{1, 3, 8, 40, 200, 1000}[seed]
		l, ref := newLRU(uint64(capacity)), &refLRU{capacity: capacity}
		for op := range 4000 {
			n := 1 + rng.IntN(12)
			family := uint64(rng.IntN(6))
			seq := make([]routecore.SequenceHash, n)
			for i := range seq {
				if i < n/2 {
					seq[i] = routecore.SequenceHash(family*1000 + uint64(i)) // shared prefix (family 0 holds hash 0)
				} else {
					seq[i] = routecore.SequenceHash(rng.Uint64N(1 << 62))
				}
			}
			if got, want := l.prefix(seq), ref.prefix(seq); got != want {
				t.Fatalf("seed %d op %d: prefix %d, reference %d", seed, op, got, want)
			}
			first, evicted := l.store(seq, nil)
			wfirst, wevicted := ref.store(seq)
			if first != wfirst || !slices.Equal(evicted, wevicted) {
				t.Fatalf("seed %d op %d: store → first new %d evicted %v; reference %d %v", seed, op, first, evicted, wfirst, wevicted)
			}
			if l.len() != len(ref.order) {
				t.Fatalf("seed %d op %d: %d blocks, reference %d", seed, op, l.len(), len(ref.order))
			}
		}
		// Contents, most recent first.
		var got []routecore.SequenceHash
		for i := l.head; i >= 0; i = l.next[i] {
			got = append(got, l.hash[i])
		}
		if !slices.Equal(got, ref.order) {
			t.Fatalf("seed %d: contents differ", seed)
		}
	}
}

// TestHashIndexMatchesMap checks the open-addressing table against a Go map
// over random puts, overwrites and deletes (with clustered keys, so runs wrap
// and backward shifts cross the table's end).
func TestHashIndexMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var h hashIndex
	ref := map[uint64]int32{}
	for op := range 200000 {
		k := rng.Uint64N(3000)
		if rng.IntN(4) == 0 {
			k = rng.Uint64()
		}
		switch rng.IntN(3) {
		case 0, 1:
			v := int32(rng.IntN(1 << 20))
			h.put(k, v)
			ref[k] = v
		case 2:
			h.del(k)
			delete(ref, k)
		}
		if h.n != len(ref) {
			t.Fatalf("op %d: %d entries, map %d", op, h.n, len(ref))
		}
		probe := rng.Uint64N(3000)
		v, ok := h.get(probe)
		wv, wok := ref[probe]
		if ok != wok || v != wv {
			t.Fatalf("op %d: get(%d) = %d,%v; map %d,%v", op, probe, v, ok, wv, wok)
		}
	}
	for k, v := range ref {
		if got, ok := h.get(k); !ok || got != v {
			t.Fatalf("final: get(%d) = %d,%v, want %d", k, got, ok, v)
		}
	}
}
