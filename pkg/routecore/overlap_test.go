package routecore

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestTierConvertsWeightedAndRawTierOverlapOnce(t *testing.T) {
	// Dynamo scheduling/overlap.rs converts_weighted_and_raw_tier_overlap_once.
	w := wr(7, 1)
	m := TieredMatches{Device: OverlapScores{{Worker: w, Blocks: 2}}}
	m.Lower[TierHostPinned] = []TierHits{{w, 3}}
	m.Lower[TierDisk] = []TierHits{{w, 4}}
	m.Lower[TierExternal] = []TierHits{{w, 5}}
	est := EstimateCacheHits(m, TierWeights{HostPinned: 0.5, Disk: 0.25}, 16)
	if len(est) != 1 || est[0].EffectiveBlocks != 5.75 || est[0].CachedTokens != 92 {
		t.Fatalf("estimates = %+v, want 5.75 blocks, 92 tokens", est)
	}
	tiers := TierOverlapBlocks(m)
	if len(tiers) != 1 || tiers[0] != (TierOverlap{Worker: w, Device: 2, HostPinned: 3, Disk: 9}) {
		t.Fatalf("tiers = %+v, want device 2 host 3 disk 9", tiers)
	}
	if m.Hits(TierDevice, w) != 2 || m.Hits(TierExternal, w) != 5 || m.Hits(TierDisk, wr(1, 0)) != 0 {
		t.Fatal("Hits lookup")
	}
}

func TestTierEstimateEdgeCases(t *testing.T) {
	a, b := wr(1, 0), wr(2, 0)
	m := TieredMatches{Device: OverlapScores{{Worker: a, Blocks: 1}}}
	m.Lower[TierHostPinned] = []TierHits{{a, 0}, {b, 3}}
	m.Lower[TierDisk] = []TierHits{{b, 2}}
	est := EstimateCacheHits(m, TierWeights{HostPinned: 0.5, Disk: 0}, 3)
	// b appears only through host; disk weight 0 adds nothing; 1.5*3 = 4.5 rounds away from zero.
	want := []CacheHitEstimate{{a, 1, 3}, {b, 1.5, 5}}
	if !slices.Equal(est, want) {
		t.Fatalf("got %+v, want %+v", est, want)
	}
	for _, tc := range []struct {
		in   float64
		want uint64
	}{{2.5, 3}, {-0.5, 0}, {math.NaN(), 0}, {math.Inf(1), math.MaxUint64}, {-3, 0}, {0.49999999999999994, 0}} {
		if got := roundTokens(tc.in); got != tc.want {
			t.Errorf("roundTokens(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestSharedCacheHitsBeyond(t *testing.T) {
	// Dynamo protocols.rs test_shared_cache_hits_beyond: ranges [1..3, 5..8].
	h := NewSharedCacheHits([]SharedHitRange{{1, 3}, {5, 8}})
	if h.TotalHits != 5 {
		t.Fatalf("total = %d", h.TotalHits)
	}
	for _, tc := range []struct{ d, want uint32 }{{0, 5}, {2, 4}, {3, 3}, {6, 2}, {8, 0}} {
		if got := h.HitsBeyond(tc.d); got != tc.want {
			t.Errorf("HitsBeyond(%d) = %d, want %d", tc.d, got, tc.want)
		}
	}
	// test_shared_cache_hits_from_hits.
	f := SharedCacheHitsFromHits([]bool{false, true, true, false, false, true, true, true})
	if !slices.Equal(f.Ranges, h.Ranges) || f.TotalHits != 5 {
		t.Fatalf("from hits = %+v", f)
	}
	// _beyond_sparse.
	s := SharedCacheHitsFromHits([]bool{true, false, true, false, true})
	if s.HitsBeyond(1) != 2 || s.HitsBeyond(5) != 0 || s.TotalHits != 3 {
		t.Fatalf("sparse: %+v", s)
	}
	if (SharedCacheHits{}).HitsBeyond(0) != 0 {
		t.Fatal("empty hits")
	}
}

func tierStore(tier StorageTier, worker uint64, rank uint32, id uint64, parent *uint64, locals, exts []uint64) RouterEvent {
	s := &KvCacheStoreData{}
	if parent != nil {
		p := SequenceHash(*parent)
		s.ParentHash = &p
	}
	for i := range locals {
		s.Blocks = append(s.Blocks, KvCacheStoredBlock{BlockHash: SequenceHash(exts[i]), TokensHash: LocalBlockHash(locals[i])})
	}
	return RouterEvent{WorkerID: WorkerID(worker), StorageTier: tier, Event: KvCacheEvent{EventID: id, DpRank: rank, Data: KvCacheEventData{Stored: s}}}
}

func tierRemove(tier StorageTier, worker uint64, id uint64, exts ...uint64) RouterEvent {
	r := &KvCacheRemoveData{}
	for _, e := range exts {
		r.BlockHashes = append(r.BlockHashes, SequenceHash(e))
	}
	return RouterEvent{WorkerID: WorkerID(worker), StorageTier: tier, Event: KvCacheEvent{EventID: id, Data: KvCacheEventData{Removed: r}}}
}

// hitsFrom runs the host tier from explicit continuations, like Dynamo's
// query_contiguous_hits.
func hitsFrom(ix *Index, q []LocalBlockHash, w WorkerWithDpRank, pos int, parent *uint64) int {
	c := continuation{pos: pos}
	if parent != nil {
		c.hash, c.hasHash = *parent, true
	}
	return ix.lower[TierHostPinned].advance(w, q, &c)
}

func TestTierLowerTierIndexer(t *testing.T) {
	// Dynamo indexer/lower_tier.rs tests.
	H := TierHostPinned
	t.Run("root_query_uses_none_parent_transition", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 7, 0, 0, nil, []uint64{11, 12, 13}, []uint64{101, 102, 103}))
		if got := hitsFrom(ix, lh(11, 12, 13), wr(7, 0), 0, nil); got != 3 {
			t.Fatalf("hits = %d", got)
		}
	})
	t.Run("root_workers_only_include_matching_root_edges", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 7, 0, 0, nil, []uint64{11, 12}, []uint64{101, 102}),
			tierStore(H, 8, 0, 1, u64p(500), []uint64{11}, []uint64{201}))
		got := ix.FindTierMatches(H, lh(11))
		if len(got) != 1 || got[0].Worker != wr(7, 0) || got[0].Blocks != 1 {
			t.Fatalf("root matches = %v", got)
		}
	})
	t.Run("remove_worker_dp_rank_keeps_other_rank", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 43, 0, 0, nil, []uint64{11}, []uint64{101}),
			tierStore(H, 43, 1, 1, nil, []uint64{11}, []uint64{101}))
		ix.lower[H].removeSlot(wr(43, 0))
		if hitsFrom(ix, lh(11), wr(43, 0), 0, nil) != 0 || hitsFrom(ix, lh(11), wr(43, 1), 0, nil) != 1 {
			t.Fatal("rank removal")
		}
	})
	t.Run("cleared_event_preserves_other_workers", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 29, 0, 0, nil, []uint64{101, 102}, []uint64{1001, 1002}),
			tierStore(H, 30, 0, 1, nil, []uint64{101, 102}, []uint64{1001, 1002}),
			RouterEvent{WorkerID: 29, StorageTier: H, Event: KvCacheEvent{EventID: 2, Data: KvCacheEventData{Cleared: true}}})
		if hitsFrom(ix, lh(101, 102), wr(29, 0), 0, nil) != 0 || hitsFrom(ix, lh(101, 102), wr(30, 0), 0, nil) != 2 {
			t.Fatal("cleared")
		}
	})
	t.Run("missing_parent_tail_queries_exactly_from_last_matched_hash", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 3, 0, 0, u64p(999), []uint64{21, 22, 23}, []uint64{201, 202, 203}))
		if got := hitsFrom(ix, lh(1, 2, 21, 22, 23), wr(3, 0), 2, u64p(999)); got != 3 {
			t.Fatalf("hits = %d", got)
		}
	})
	t.Run("mid_segment_continuation_works_without_materialization", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 5, 0, 0, u64p(700), []uint64{31, 32, 33}, []uint64{301, 302, 303}))
		if got := hitsFrom(ix, lh(10, 31, 32, 33), wr(5, 0), 2, u64p(301)); got != 2 {
			t.Fatalf("hits = %d", got)
		}
	})
	t.Run("branch_matching_is_exact_by_parent_hash", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 9, 0, 0, u64p(500), []uint64{91, 92}, []uint64{901, 902}),
			tierStore(H, 9, 0, 1, u64p(700), []uint64{91, 93}, []uint64{903, 904}))
		if hitsFrom(ix, lh(91, 92), wr(9, 0), 0, u64p(500)) != 2 || hitsFrom(ix, lh(91, 92), wr(9, 0), 0, u64p(700)) != 1 {
			t.Fatal("branch")
		}
	})
	t.Run("duplicate_store_is_idempotent_for_remove", func(t *testing.T) {
		ix := NewIndex()
		ev := tierStore(H, 13, 0, 0, u64p(800), []uint64{61}, []uint64{601})
		mustApply(t, ix, ev, ev)
		if hitsFrom(ix, lh(61), wr(13, 0), 0, u64p(800)) != 1 {
			t.Fatal("initial")
		}
		mustApply(t, ix, tierRemove(H, 13, 1, 601))
		if hitsFrom(ix, lh(61), wr(13, 0), 0, u64p(800)) != 0 {
			t.Fatal("after one remove")
		}
	})
	t.Run("removing_one_owner_preserves_shared_edge_for_other_workers", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 1, 0, 0, nil, []uint64{11, 12}, []uint64{101, 102}),
			tierStore(H, 2, 0, 1, nil, []uint64{11, 12}, []uint64{101, 102}),
			tierRemove(H, 1, 2, 101, 102))
		if hitsFrom(ix, lh(11, 12), wr(1, 0), 0, nil) != 0 || hitsFrom(ix, lh(11, 12), wr(2, 0), 0, nil) != 2 {
			t.Fatal("shared edge")
		}
	})
	t.Run("conflicting_store_keeps_first_mapping", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 1, 0, 0, nil, []uint64{11}, []uint64{101}),
			tierStore(H, 2, 0, 1, nil, []uint64{11}, []uint64{999}))
		if hitsFrom(ix, lh(11), wr(2, 0), 0, nil) != 0 {
			t.Fatal("conflicting child hash was accepted")
		}
	})
	t.Run("remove_stops_at_first_unknown_block", func(t *testing.T) {
		ix := NewIndex()
		mustApply(t, ix, tierStore(H, 1, 0, 0, nil, []uint64{11, 12}, []uint64{101, 102}))
		err := ix.ApplyEvent(tierRemove(H, 1, 1, 555, 101))
		if !errors.Is(err, ErrBlockNotFound) {
			t.Fatalf("err = %v", err)
		}
		if hitsFrom(ix, lh(11, 12), wr(1, 0), 0, nil) != 2 {
			t.Fatal("blocks after the unknown one were removed")
		}
	})
}

func TestTierFindTieredMatchesExtendsDevicePrefix(t *testing.T) {
	ix := NewIndex()
	// Worker 1: device blocks 1,2 (hashes 100,200); host holds 3,4 after 200;
	// disk holds 5 after 400. Worker 2: only host, from the root.
	mustApply(t, ix,
		storeEv(1, 0, []uint64{1, 2}, nil),
		tierStore(TierHostPinned, 1, 0, 0, u64p(200), []uint64{3, 4}, []uint64{300, 400}),
		tierStore(TierDisk, 1, 0, 0, u64p(400), []uint64{5}, []uint64{500}),
		tierStore(TierHostPinned, 2, 0, 0, nil, []uint64{1, 2, 3}, []uint64{100, 200, 300}),
		// Host also holds block 1 for worker 1 from the root: it must not be
		// double-counted, because worker 1 continues from its device prefix.
		tierStore(TierHostPinned, 1, 0, 1, nil, []uint64{1}, []uint64{100}),
	)
	m := ix.FindTieredMatches(lh(1, 2, 3, 4, 5, 6))
	if m.Device.Blocks(wr(1, 0)) != 2 || m.Hits(TierHostPinned, wr(1, 0)) != 2 || m.Hits(TierDisk, wr(1, 0)) != 1 {
		t.Fatalf("worker 1: %+v", m)
	}
	if m.Hits(TierHostPinned, wr(2, 0)) != 3 || m.Hits(TierDisk, wr(2, 0)) != 0 {
		t.Fatalf("worker 2: %+v", m)
	}
	if m.Lower[TierExternal] != nil {
		t.Fatal("external tier never received events but has results")
	}
	est := EstimateCacheHits(m, TierWeights{HostPinned: 0.5, Disk: 0.25}, 16)
	want := []CacheHitEstimate{{wr(1, 0), 3.25, 52}, {wr(2, 0), 1.5, 24}}
	if !slices.Equal(est, want) {
		t.Fatalf("estimates %+v, want %+v", est, want)
	}
	in := ToOverlapInput(m, TierWeights{HostPinned: 0.5, Disk: 0.25}, 16, nil)
	if in.DeviceBlocks[wr(1, 0)] != 2 || in.HostBlocks[wr(2, 0)] != 3 || in.DiskBlocks[wr(1, 0)] != 1 || in.CachedTokens[wr(1, 0)] != 52 {
		t.Fatalf("overlap input %+v", in)
	}
	if ix.TierBlockCount(TierHostPinned) != 6 || ix.TierBlockCount(TierDevice) != 2 {
		t.Fatalf("tier block counts %d %d", ix.TierBlockCount(TierHostPinned), ix.TierBlockCount(TierDevice))
	}
	ix.RemoveWorker(1)
	m = ix.FindTieredMatches(lh(1, 2, 3, 4, 5, 6))
	if m.Device.Blocks(wr(1, 0)) != 0 || m.Hits(TierHostPinned, wr(1, 0)) != 0 || m.Hits(TierHostPinned, wr(2, 0)) != 3 {
		t.Fatalf("after RemoveWorker(1): %+v", m)
	}
}
