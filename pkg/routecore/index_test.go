package routecore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Test helpers follow Dynamo's test_utils convention: block_hash = 100 × local.

func storeEv(worker uint64, id uint64, locals []uint64, parent *uint64) RouterEvent {
	return storeEvRank(worker, 0, id, locals, parent)
}

func storeEvRank(worker uint64, rank uint32, id uint64, locals []uint64, parent *uint64) RouterEvent {
	s := &KvCacheStoreData{}
	if parent != nil {
		p := SequenceHash(*parent)
		s.ParentHash = &p
	}
	for _, l := range locals {
		s.Blocks = append(s.Blocks, KvCacheStoredBlock{BlockHash: SequenceHash(100 * l), TokensHash: LocalBlockHash(l)})
	}
	return RouterEvent{WorkerID: WorkerID(worker), Event: KvCacheEvent{EventID: id, DpRank: rank, Data: KvCacheEventData{Stored: s}}}
}

func removeEv(worker uint64, id uint64, locals []uint64) RouterEvent {
	r := &KvCacheRemoveData{}
	for _, l := range locals {
		r.BlockHashes = append(r.BlockHashes, SequenceHash(100*l))
	}
	return RouterEvent{WorkerID: WorkerID(worker), Event: KvCacheEvent{EventID: id, Data: KvCacheEventData{Removed: r}}}
}

func clearEv(worker uint64, rank uint32, id uint64) RouterEvent {
	return RouterEvent{WorkerID: WorkerID(worker), Event: KvCacheEvent{EventID: id, DpRank: rank, Data: KvCacheEventData{Cleared: true}}}
}

func u64p(v uint64) *uint64 { return &v }

func lh(vs ...uint64) []LocalBlockHash {
	out := make([]LocalBlockHash, len(vs))
	for i, v := range vs {
		out[i] = LocalBlockHash(v)
	}
	return out
}

func wr(id uint64, rank uint32) WorkerWithDpRank {
	return WorkerWithDpRank{WorkerID: WorkerID(id), DpRank: rank}
}

// scoreMap flattens scores for table comparisons.
func scoreMap(s OverlapScores) map[WorkerWithDpRank]uint32 {
	m := map[WorkerWithDpRank]uint32{}
	for _, e := range s {
		m[e.Worker] = e.Blocks
	}
	return m
}

func mustApply(t *testing.T, ix *Index, evs ...RouterEvent) {
	t.Helper()
	for _, ev := range evs {
		if err := ix.ApplyEvent(ev); err != nil {
			t.Fatalf("apply event %d: %v", ev.Event.EventID, err)
		}
	}
}

func sizeOf(ix *Index, w WorkerWithDpRank) int {
	for _, s := range ix.TreeSizes() {
		if s.Worker == w {
			return s.Blocks
		}
	}
	return -1
}

func TestIndexRadixTreePartialOverlap(t *testing.T) {
	// Dynamo radix_tree.rs test_radix_tree.
	ix := NewIndex()
	mustApply(t, ix, storeEv(0, 1, []uint64{1, 2, 3}, nil))
	if got := scoreMap(ix.FindMatches(lh(1, 2, 3))); got[wr(0, 0)] != 3 || len(got) != 1 {
		t.Fatalf("after worker 0 store: %v", got)
	}
	mustApply(t, ix, storeEv(1, 1, []uint64{1, 4, 5}, nil))
	if got := scoreMap(ix.FindMatches(lh(1, 2, 3))); got[wr(0, 0)] != 3 || got[wr(1, 0)] != 1 {
		t.Fatalf("after worker 1 store: %v", got)
	}
	if sizeOf(ix, wr(1, 0)) != 3 {
		t.Fatalf("worker 1 size = %d, want 3", sizeOf(ix, wr(1, 0)))
	}
	mustApply(t, ix, removeEv(1, 2, []uint64{5}))
	if sizeOf(ix, wr(1, 0)) != 2 || sizeOf(ix, wr(0, 0)) != 3 {
		t.Fatalf("after remove 5: sizes %v", ix.TreeSizes())
	}
	mustApply(t, ix, removeEv(1, 3, []uint64{4}))
	if sizeOf(ix, wr(1, 0)) != 1 {
		t.Fatalf("after remove 4: sizes %v", ix.TreeSizes())
	}
	mustApply(t, ix, storeEv(1, 4, []uint64{2, 6, 7}, u64p(100)))
	got := scoreMap(ix.FindMatches(lh(1, 2, 3)))
	want := map[WorkerWithDpRank]uint32{wr(0, 0): 3, wr(1, 0): 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("final scores = %v, want %v", got, want)
	}
	if sizeOf(ix, wr(1, 0)) != 4 || sizeOf(ix, wr(0, 0)) != 3 {
		t.Fatalf("final sizes %v", ix.TreeSizes())
	}
	// Block 200 is shared by both workers.
	if got := ix.FindMatches(lh(1, 2)); len(got) != 2 || got[0].Blocks != 2 || got[1].Blocks != 2 {
		t.Fatalf("shared block: %v", got)
	}
	if got := ix.FindMatches(lh(1, 2, 3)); got[1].LastBlockHash != 200 || got[0].LastBlockHash != 300 {
		t.Fatalf("last hashes: %+v", got)
	}
}

func TestIndexApplyEventErrors(t *testing.T) {
	// Dynamo radix_tree.rs test_radix_tree_apply_event_errors.
	ix := NewIndex()
	err := ix.ApplyEvent(storeEv(0, 0, []uint64{1, 2, 3}, u64p(12345)))
	if !errors.Is(err, ErrParentBlockNotFound) {
		t.Fatalf("unknown parent: err = %v", err)
	}
	if ix.BlockCount() != 0 || len(ix.FindMatches(lh(1, 2, 3))) != 0 {
		t.Fatal("failed store changed the index")
	}
	err = ix.ApplyEvent(removeEv(0, 0, []uint64{1, 2, 3}))
	if !errors.Is(err, ErrBlockNotFound) {
		t.Fatalf("unknown remove: err = %v", err)
	}
	mustApply(t, ix, storeEv(0, 4, []uint64{1}, nil))
	err = ix.ApplyEvent(storeEv(0, 5, []uint64{1, 2, 3}, u64p(100)))
	if !errors.Is(err, ErrInvalidBlockSequence) {
		t.Fatalf("self reference: err = %v", err)
	}
	for _, want := range []string{"worker 0/0", "event 5", "stored"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The tree is unchanged by the rejected block: [1] still scores 1.
	if got := ix.FindMatches(lh(1, 1)); len(got) != 1 || got[0].Blocks != 1 {
		t.Fatalf("after self reference: %v", got)
	}
}

func TestIndexClearAllBlocks(t *testing.T) {
	// Dynamo radix_tree.rs test_clear_all_blocks, with a Cleared event.
	ix := NewIndex()
	if len(ix.FindMatches(lh(0))) != 0 {
		t.Fatal("empty index matched")
	}
	mustApply(t, ix, clearEv(0, 0, 0)) // clearing an unknown worker is a no-op
	if len(ix.TreeSizes()) != 0 {
		t.Fatalf("clearing an unknown worker tracked it: %v", ix.TreeSizes())
	}
	mustApply(t, ix, storeEv(0, 0, []uint64{0, 1, 3}, nil), storeEv(1, 0, []uint64{0, 2, 3}, nil))
	if got := scoreMap(ix.FindMatches(lh(0))); len(got) != 2 || got[wr(0, 0)] != 1 || got[wr(1, 0)] != 1 {
		t.Fatalf("before clear: %v", got)
	}
	mustApply(t, ix, clearEv(0, 0, 1))
	if sizeOf(ix, wr(0, 0)) != 0 {
		t.Fatalf("cleared worker should stay tracked with 0 blocks: %v", ix.TreeSizes())
	}
	for _, tc := range []struct {
		q    []LocalBlockHash
		want map[WorkerWithDpRank]uint32
	}{
		{lh(0, 2), map[WorkerWithDpRank]uint32{wr(1, 0): 2}},
		{lh(0, 1, 3), map[WorkerWithDpRank]uint32{wr(1, 0): 1}},
	} {
		if got := scoreMap(ix.FindMatches(tc.q)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("query %v = %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestIndexRemoveWorkerVerifiesHashRemoval(t *testing.T) {
	// Dynamo test_remove_worker_verifies_hash_removal.
	ix := NewIndex()
	for w := uint64(0); w < 3; w++ {
		mustApply(t, ix, storeEv(w, 0, []uint64{1, 2, 3}, nil))
	}
	ix.RemoveWorker(0)
	got := ix.FindMatches(lh(1, 2, 3))
	want := OverlapScores{{wr(1, 0), 3, 300}, {wr(2, 0), 3, 300}}
	if !slices.Equal(got, want) {
		t.Fatalf("after RemoveWorker(0): %v, want %v", got, want)
	}
	if sizeOf(ix, wr(0, 0)) != -1 {
		t.Fatal("removed worker is still tracked")
	}
	if !slices.Equal(ix.Workers(), []WorkerID{1, 2}) {
		t.Fatalf("Workers() = %v", ix.Workers())
	}
	// The worker can come back and its old parent hashes are gone.
	if err := ix.ApplyEvent(storeEv(0, 1, []uint64{4}, u64p(100))); !errors.Is(err, ErrParentBlockNotFound) {
		t.Fatalf("store under a removed parent: %v", err)
	}
}

func TestIndexDpRankSeparation(t *testing.T) {
	ix := NewIndex()
	mustApply(t, ix,
		storeEvRank(7, 0, 0, []uint64{1, 2, 3}, nil),
		storeEvRank(7, 1, 0, []uint64{1, 2}, nil),
		storeEvRank(8, 0, 0, []uint64{1}, nil),
	)
	got := ix.FindMatches(lh(1, 2, 3))
	want := []WorkerWithDpRank{wr(7, 0), wr(7, 1), wr(8, 0)}
	if len(got) != 3 || got[0].Worker != want[0] || got[1].Worker != want[1] || got[2].Worker != want[2] {
		t.Fatalf("order: %v", got)
	}
	if got.Blocks(wr(7, 0)) != 3 || got.Blocks(wr(7, 1)) != 2 || got.Blocks(wr(8, 0)) != 1 || got.Blocks(wr(9, 0)) != 0 {
		t.Fatalf("scores: %v", got)
	}
	// A parent known to rank 0 is unknown to rank 1.
	if err := ix.ApplyEvent(storeEvRank(7, 1, 1, []uint64{3}, u64p(200))); err != nil {
		t.Fatalf("rank 1 knows 200: %v", err)
	}
	if err := ix.ApplyEvent(storeEvRank(8, 0, 1, []uint64{3}, u64p(200))); !errors.Is(err, ErrParentBlockNotFound) {
		t.Fatalf("worker 8 does not hold 200: %v", err)
	}
	// Clearing rank 1 leaves rank 0.
	mustApply(t, ix, clearEv(7, 1, 2))
	if got := scoreMap(ix.FindMatches(lh(1, 2, 3))); got[wr(7, 0)] != 3 || got[wr(7, 1)] != 0 {
		t.Fatalf("after clearing rank 1: %v", got)
	}
	ix.RemoveWorker(7)
	if got := scoreMap(ix.FindMatches(lh(1, 2, 3))); len(got) != 1 || got[wr(8, 0)] != 1 {
		t.Fatalf("after RemoveWorker(7): %v", got)
	}
}

func TestIndexContiguousPrefixOnly(t *testing.T) {
	// A worker holding blocks 0,1,3 of a request [0,1,2,3] scores 2.
	ix := NewIndex()
	mustApply(t, ix, storeEv(1, 0, []uint64{10, 11, 12, 13}, nil))
	mustApply(t, ix, storeEv(2, 0, []uint64{10, 11, 12, 13}, nil))
	mustApply(t, ix, removeEv(2, 1, []uint64{12}))
	got := scoreMap(ix.FindMatches(lh(10, 11, 12, 13)))
	if got[wr(1, 0)] != 4 || got[wr(2, 0)] != 2 {
		t.Fatalf("scores = %v, want w1=4 w2=2", got)
	}
}

func TestIndexFindMatchesTable(t *testing.T) {
	ix := NewIndex()
	mustApply(t, ix,
		storeEv(1, 0, []uint64{1, 2, 3, 4}, nil),
		storeEv(2, 0, []uint64{1, 2, 5}, nil),
		storeEv(3, 0, []uint64{9}, nil),
	)
	for _, tc := range []struct {
		name string
		q    []LocalBlockHash
		want map[WorkerWithDpRank]uint32
	}{
		{"empty query", nil, map[WorkerWithDpRank]uint32{}},
		{"unknown first block", lh(7, 1, 2), map[WorkerWithDpRank]uint32{}},
		{"shared prefix", lh(1, 2), map[WorkerWithDpRank]uint32{wr(1, 0): 2, wr(2, 0): 2}},
		{"branch", lh(1, 2, 5, 6), map[WorkerWithDpRank]uint32{wr(1, 0): 2, wr(2, 0): 3}},
		{"full", lh(1, 2, 3, 4, 5), map[WorkerWithDpRank]uint32{wr(1, 0): 4, wr(2, 0): 2}},
		{"single", lh(9, 9), map[WorkerWithDpRank]uint32{wr(3, 0): 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ix.FindMatches(tc.q)
			if fmt.Sprint(scoreMap(got)) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", scoreMap(got), tc.want)
			}
			if !slices.IsSortedFunc(got, func(a, b OverlapScore) int { return a.Worker.Compare(b.Worker) }) {
				t.Fatalf("not sorted: %v", got)
			}
		})
	}
}

func TestIndexRemoveKeepsApplyingAfterUnknownBlock(t *testing.T) {
	ix := NewIndex()
	mustApply(t, ix, storeEv(1, 0, []uint64{1, 2, 3}, nil))
	err := ix.ApplyEvent(removeEv(1, 1, []uint64{9, 3}))
	if !errors.Is(err, ErrBlockNotFound) {
		t.Fatalf("err = %v", err)
	}
	if sizeOf(ix, wr(1, 0)) != 2 {
		t.Fatalf("block 3 should have been removed despite the unknown 9: %v", ix.TreeSizes())
	}
}

func TestIndexEmptiedNodeForgetsChildren(t *testing.T) {
	// Dynamo's drop_worker clears the children of a node that lost its last
	// worker, even though descendants still list workers.
	ix := NewIndex()
	mustApply(t, ix, storeEv(1, 0, []uint64{1, 2}, nil), storeEv(2, 0, []uint64{1, 2}, nil))
	mustApply(t, ix, removeEv(1, 1, []uint64{1}), removeEv(2, 1, []uint64{1}))
	mustApply(t, ix, storeEv(1, 2, []uint64{1}, nil))
	if got := scoreMap(ix.FindMatches(lh(1, 2))); got[wr(1, 0)] != 1 || len(got) != 1 {
		t.Fatalf("got %v, want w1=1", got)
	}
	// Re-storing block 2 under 100 reattaches worker 1's old node (lookup reuse).
	mustApply(t, ix, storeEv(1, 3, []uint64{2}, u64p(100)))
	if got := scoreMap(ix.FindMatches(lh(1, 2))); got[wr(1, 0)] != 2 || len(got) != 1 {
		t.Fatalf("after reattach: %v", got)
	}
}

func TestIndexCompactPreservesMatches(t *testing.T) {
	ix := NewIndex()
	var evs []RouterEvent
	for w := uint64(0); w < 4; w++ {
		for c := uint64(0); c < 50; c++ {
			locals := []uint64{1000 + c%5, 2000 + c, 3000 + c + w}
			evs = append(evs, storeEv(w, c, locals, nil))
		}
	}
	mustApply(t, ix, evs...)
	for w := uint64(0); w < 4; w += 2 {
		for c := uint64(0); c < 50; c += 3 {
			_ = ix.ApplyEvent(removeEv(w, 100+c, []uint64{2000 + c, 3000 + c + w}))
		}
	}
	queries := [][]LocalBlockHash{}
	for c := uint64(0); c < 50; c++ {
		queries = append(queries, lh(1000+c%5, 2000+c, 3000+c), lh(1000+c%5, 2000+c, 3000+c+1))
	}
	before := make([]OverlapScores, len(queries))
	for i, q := range queries {
		before[i] = ix.FindMatches(q)
	}
	nodes := len(ix.dev.nodes)
	ix.dev.compact()
	if len(ix.dev.nodes) >= nodes {
		t.Errorf("compaction did not free nodes: %d -> %d", nodes, len(ix.dev.nodes))
	}
	for i, q := range queries {
		if got := ix.FindMatches(q); !slices.Equal(got, before[i]) {
			t.Fatalf("query %v changed: %v -> %v", q, before[i], got)
		}
	}
}

func ExampleIndex() {
	ix := NewIndex()
	// Worker 1 caches a 3-block prompt; worker 2 shares its first block only.
	events := `[
{"worker_id":1,"event":{"event_id":1,"dp_rank":0,"data":{"stored":{"parent_hash":null,"blocks":[
  {"block_hash":101,"tokens_hash":11},{"block_hash":102,"tokens_hash":12},{"block_hash":103,"tokens_hash":13}]}}}},
{"worker_id":2,"event":{"event_id":1,"data":{"stored":{"parent_hash":null,"blocks":[{"block_hash":101,"tokens_hash":11}]}}}}
]`
	evs, err := DecodeRouterEvents(strings.NewReader(events))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range evs {
		if err := ix.ApplyEvent(ev); err != nil {
			fmt.Println(err)
		}
	}
	for _, s := range ix.FindMatches([]LocalBlockHash{11, 12, 13, 14}) {
		fmt.Printf("%s: %d blocks = %d tokens at block size 16\n", s.Worker, s.Blocks, s.Blocks*16)
	}
	// Output:
	// 1/0: 3 blocks = 48 tokens at block size 16
	// 2/0: 1 blocks = 16 tokens at block size 16
}

// TestIndexApplyEventsMatchesApplyEvent loads a workload big enough to compact
// in the middle of the batch (shared prefixes, mass removals, clears and
// re-stores) through ApplyEvents and through ApplyEvent one by one; errors,
// overlaps and tree sizes must be the same.
func TestIndexApplyEventsMatchesApplyEvent(t *testing.T) {
	for _, deferMin := range []int{bulkDeferMin, 0} {
		t.Run(fmt.Sprintf("defer from %d", deferMin), func(t *testing.T) {
			defer func(prev int) { bulkDeferMin = prev }(bulkDeferMin)
			bulkDeferMin = deferMin
			testIndexApplyEventsMatchesApplyEvent(t)
		})
	}
}

func testIndexApplyEventsMatchesApplyEvent(t *testing.T) {
	const workers, chain = 200, 60
	var evs []RouterEvent
	id := uint64(0)
	prompt := make([]uint64, chain)
	for i := range prompt {
		prompt[i] = uint64(i + 1)
	}
	own := func(w, i int) uint64 { return 1_000_000 + uint64(w)*1000 + uint64(i) }
	for w := 0; w < workers; w++ {
		p := (w * 7) % chain
		locals := slices.Clone(prompt[:p])
		for i := p; i < chain; i++ {
			locals = append(locals, own(w, i))
		}
		id++
		evs = append(evs, storeEvRank(uint64(w), uint32(w%2), id, locals, nil))
	}
	for w := 0; w < workers; w++ {
		p := (w * 7) % chain
		var gone []uint64
		for i := max(p, chain/5); i < chain; i++ {
			gone = append(gone, own(w, i))
		}
		gone = append(gone, 999) // unknown: an error, the others still removed
		id++
		ev := removeEv(uint64(w), id, gone)
		ev.Event.DpRank = uint32(w % 2)
		evs = append(evs, ev)
		if w%17 == 0 {
			id++
			evs = append(evs, clearEv(uint64(w), uint32(w%2), id))
		}
		if w%5 == 0 { // re-store a different tail, and one with a missing parent
			id++
			evs = append(evs, storeEvRank(uint64(w), uint32(w%2), id, []uint64{1, 2, 3, 5_000_000 + uint64(w)}, nil))
			id++
			evs = append(evs, storeEvRank(uint64(w), uint32(w%2), id, []uint64{7}, u64p(123456789)))
		}
	}
	seq := NewIndex()
	var seqErrs []string
	for _, ev := range evs {
		e := ""
		if err := seq.ApplyEvent(ev); err != nil {
			e = err.Error()
		}
		seqErrs = append(seqErrs, e)
	}
	bulk := NewIndex()
	bulkErrs := make([]string, len(evs))
	bulk.ApplyEvents(evs, func(i int, err error) { bulkErrs[i] = err.Error() })
	if !slices.Equal(seqErrs, bulkErrs) {
		for i := range seqErrs {
			if seqErrs[i] != bulkErrs[i] {
				t.Fatalf("event %d: ApplyEvents error %q, ApplyEvent %q", i, bulkErrs[i], seqErrs[i])
			}
		}
	}
	if bulk.dev.compactions == 0 {
		t.Fatal("the workload did not compact during the batch; make it bigger")
	}
	if bulk.dev.deferred == 0 {
		t.Fatal("no addition was deferred; the bulk path was not exercised")
	}
	queries := [][]LocalBlockHash{lh(prompt...), lh(prompt[:5]...), lh(1, 2, 3, 5_000_000), lh(1, 2, 3, 5_000_005), lh(7)}
	for w := 0; w < workers; w += 13 {
		q := lh(prompt[:(w*7)%chain]...)
		for i := (w * 7) % chain; i < chain; i++ {
			q = append(q, LocalBlockHash(own(w, i)))
		}
		queries = append(queries, q)
	}
	for _, q := range queries {
		a, b := seq.FindMatches(q), bulk.FindMatches(q)
		if len(a) != len(b) {
			t.Fatalf("query %v: bulk %v, sequential %v", q[:min(len(q), 4)], b, a)
		}
		for i := range a {
			if a[i].Worker != b[i].Worker || a[i].Blocks != b[i].Blocks {
				t.Fatalf("query %v: bulk %v, sequential %v", q[:min(len(q), 4)], b[i], a[i])
			}
		}
	}
	if a, b := seq.TreeSizes(), bulk.TreeSizes(); !slices.Equal(a, b) {
		t.Fatalf("tree sizes: bulk %v, sequential %v", b, a)
	}
	if len(seq.FindMatches(lh(prompt...))) == 0 {
		t.Fatal("the prompt matches nothing; the comparison is vacuous")
	}
}

// TestIndexCompactAppliesDeferredSets compacts in the middle of a bulk load
// (as a kid-space overflow would) and checks nothing deferred is lost.
func TestIndexCompactAppliesDeferredSets(t *testing.T) {
	evs := []RouterEvent{
		storeEv(1, 1, []uint64{1, 2, 3}, nil),
		storeEv(2, 2, []uint64{1, 2, 4}, nil),
		storeEv(3, 3, []uint64{1, 5}, nil),
	}
	want := NewIndex()
	mustApply(t, want, evs...)
	defer func(prev int) { bulkDeferMin = prev }(bulkDeferMin)
	bulkDeferMin = 0
	ix := NewIndex()
	ix.dev.bulk = true
	for _, ev := range evs {
		if err := ix.ApplyEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	if len(ix.dev.pend.nodes) == 0 {
		t.Fatal("nothing was deferred")
	}
	ix.dev.compact()
	ix.dev.bulk = false
	for _, q := range [][]LocalBlockHash{lh(1, 2, 3), lh(1, 2, 4), lh(1, 5), lh(1)} {
		if got, w := scoreMap(ix.FindMatches(q)), scoreMap(want.FindMatches(q)); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("query %v: %v, want %v", q, got, w)
		}
	}
}
