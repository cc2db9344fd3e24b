package routecore

import "testing"

// The tests mirror the SITA unit tests of Dynamo's
// lib/kv-router/src/scheduling/selector/default.rs (sita_* in its tests module).

func sitaTestConfig(share float64) KvRouterConfig {
	c := DefaultKvRouterConfig()
	c.SitaEnabled, c.SitaBoundary1, c.SitaBoundary2 = true, 1024, 8192
	c.SitaSmallBandShare, c.SitaOSLWeight, c.SitaSpillThreshold = share, 0, 1.0
	return c
}

// sitaTestWorkers are count workers with ids 0..count-1 and the given decode
// blocks (block size 64, as upstream's tests).
func sitaTestWorkers(decode func(id int) uint64, count int) []Worker {
	ws := make([]Worker, count)
	for i := range ws {
		ws[i] = Worker{ID: WorkerID(i), Runtime: RuntimeConfig{TotalKvBlocks: ptrU64(1000)},
			Loads: map[uint32]RankLoad{0: {ActiveDecodeBlocks: decode(i)}}}
	}
	return ws
}

func ptrU64(v uint64) *uint64 { return &v }

func sitaTestRequest(isl int, cachedOnZero uint64) Request {
	r := Request{ISL: isl, BlockSize: 64}
	if cachedOnZero > 0 {
		r.Overlap.CachedTokens = map[WorkerWithDpRank]uint64{{WorkerID: 0}: cachedOnZero}
	}
	return r
}

func TestSitaBandMappingUsesBoundaries(t *testing.T) {
	for _, c := range []struct {
		size, b1, b2 uint64
		want         int
	}{
		{0, 1024, 8192, 0}, {1024, 1024, 8192, 0}, {1025, 1024, 8192, 1}, {8192, 1024, 8192, 1},
		{8193, 1024, 8192, 2}, {^uint64(0), 1024, 8192, 2},
		{1024, 1024, 0, 0}, {1025, 1024, 0, 1}, {^uint64(0), 1024, 0, 1},
	} {
		if got := SitaBandForSize(c.size, c.b1, c.b2); got != c.want {
			t.Errorf("SitaBandForSize(%d, %d, %d) = %d, want %d", c.size, c.b1, c.b2, got, c.want)
		}
	}
}

func TestSitaBandSlicesAreContiguousAndNonEmpty(t *testing.T) {
	for _, c := range []struct {
		n     int
		share float64
		bands int
	}{{16, 0.5, 3}, {16, 0.5, 2}, {16, 0.125, 3}, {16, 0.75, 3}, {2, 0.5, 3}, {3, 0.5, 3}, {5, 0.125, 3}, {7, 0.75, 3}} {
		sl := SitaBandSlices(c.n, c.share, c.bands)
		used := sl[:c.bands]
		if used[0].Start != 0 || used[c.bands-1].End != c.n {
			t.Errorf("%+v: slices %v do not cover 0..%d", c, sl, c.n)
		}
		for b, s := range used {
			if s.Start >= s.End {
				t.Errorf("%+v: band %d empty: %v", c, b, sl)
			}
		}
		for i := 1; i < len(used); i++ {
			if used[i-1].End != used[i].Start && used[i-1] != used[i] {
				t.Errorf("%+v: bands %d and %d neither contiguous nor identical: %v", c, i-1, i, sl)
			}
		}
	}
	for _, c := range []struct {
		n     int
		share float64
		want  SitaSlice
	}{{16, 0.5, SitaSlice{0, 8}}, {16, 0.125, SitaSlice{0, 2}}, {10, 0.25, SitaSlice{0, 3}}} {
		if got := SitaBandSlices(c.n, c.share, 3)[0]; got != c.want {
			t.Errorf("band 0 of %d workers at share %v = %v, want %v", c.n, c.share, got, c.want)
		}
	}
}

func TestSitaUncachedLongRequestWidensBeyondItsBand(t *testing.T) {
	sl := SitaBandSlices(8, 0.5, 3)
	if sl != [3]SitaSlice{{0, 4}, {4, 6}, {6, 8}} {
		t.Fatalf("slices = %v", sl)
	}
	even := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	for _, c := range []struct {
		band   int
		cached uint64
		want   SitaSlice
	}{{2, 64, SitaSlice{6, 8}}, {1, 64, SitaSlice{4, 6}}, {2, 0, SitaSlice{4, 8}}, {1, 0, SitaSlice{4, 8}}, {0, 0, SitaSlice{0, 4}}} {
		if got := SitaWidenUncachedLongBand(c.band, sl, 8, c.cached, even, 0.85); got != c.want {
			t.Errorf("widen(band %d, cached %d) = %v, want %v", c.band, c.cached, got, c.want)
		}
	}
}

func TestSitaUncachedLongRequestBorrowsBand0OnlyWhileIdle(t *testing.T) {
	sl := SitaBandSlices(8, 0.5, 3)
	idle := []float64{0.02, 0.02, 0.02, 0.02, 1, 1, 1, 1}
	busy := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	for _, c := range []struct {
		loads []float64
		spill float64
		want  SitaSlice
	}{{idle, 0.85, SitaSlice{0, 8}}, {busy, 0.85, SitaSlice{4, 8}}, {idle, 1.0, SitaSlice{4, 8}}} {
		if got := SitaWidenUncachedLongBand(2, sl, 8, 0, c.loads, c.spill); got != c.want {
			t.Errorf("widen(%v, spill %v) = %v, want %v", c.loads, c.spill, got, c.want)
		}
	}
}

// TestSitaBandEndToEnd runs the selector-level tests of default.rs through
// ComputeSitaBand: upstream asserts the picked worker lies in a range; the
// band the pick is confined to is asserted here (the cost model then picks
// the least-loaded worker inside it, as upstream's picks show).
func TestSitaBandEndToEnd(t *testing.T) {
	zero := func(int) uint64 { return 0 }
	osl := uint64(2048)
	for _, c := range []struct {
		name    string
		cfg     func(KvRouterConfig) KvRouterConfig
		decode  func(int) uint64
		req     Request
		expOut  *uint64
		applied bool
		want    SitaSlice
	}{
		{"short request stays in band 0 (sita_routes_short_and_long_requests_to_disjoint_bands)", nil, zero, sitaTestRequest(256, 64), nil, true, SitaSlice{0, 4}},
		{"long cached request stays in band 2", nil, zero, sitaTestRequest(16384, 64), nil, true, SitaSlice{6, 8}},
		{"uncached long request reaches the medium band (sita_uncached_long_request_can_use_the_medium_band)", nil,
			func(id int) uint64 { return map[bool]uint64{true: 900}[id >= 6] }, sitaTestRequest(16384, 0), nil, true, SitaSlice{4, 8}},
		{"cached long request keeps its band under load", nil,
			func(id int) uint64 { return map[bool]uint64{true: 900}[id >= 6] }, sitaTestRequest(16384, 64), nil, true, SitaSlice{6, 8}},
		{"without the OSL weight the output estimate is ignored (sita_osl_weight_promotes_long_output_requests)", nil, zero, sitaTestRequest(512, 0), &osl, true, SitaSlice{0, 4}},
		{"the OSL weight promotes a long-output request", func(c KvRouterConfig) KvRouterConfig { c.SitaOSLWeight = 1; return c }, zero, sitaTestRequest(512, 0), &osl, true, SitaSlice{4, 8}},
		{"cache overlap shrinks the effective size (sita_cache_overlap_shrinks_effective_size)", nil, zero, sitaTestRequest(2048, 1800), nil, true, SitaSlice{0, 4}},
		{"no spill when spilling is off (sita_spills_into_adjacent_band_when_target_is_saturated)", nil,
			func(id int) uint64 { return map[bool]uint64{true: 950}[id < 4] }, sitaTestRequest(256, 0), nil, true, SitaSlice{0, 4}},
		{"a saturated band spills into the idle band above", func(c KvRouterConfig) KvRouterConfig { c.SitaSpillThreshold = 0.85; return c },
			func(id int) uint64 { return map[bool]uint64{true: 950}[id < 4] }, sitaTestRequest(256, 0), nil, true, SitaSlice{0, 6}},
		{"never spills into a busier band (sita_never_spills_into_a_busier_band)", func(c KvRouterConfig) KvRouterConfig { c.SitaSpillThreshold = 0.5; return c },
			func(id int) uint64 { return map[bool]uint64{true: 900, false: 980}[id < 4] }, sitaTestRequest(256, 0), nil, true, SitaSlice{0, 4}},
		{"top band confined with spilling off (sita_top_band_spills_down_but_never_into_the_short_band)", nil,
			func(id int) uint64 { return []uint64{150, 150, 150, 150, 0, 0, 950, 950}[id] }, sitaTestRequest(9000, 64), nil, true, SitaSlice{6, 8}},
		{"top band spills down into band 1, never band 0", func(c KvRouterConfig) KvRouterConfig { c.SitaSpillThreshold = 0.85; return c },
			func(id int) uint64 { return []uint64{150, 150, 150, 150, 0, 0, 950, 950}[id] }, sitaTestRequest(9000, 64), nil, true, SitaSlice{4, 8}},
		{"an idle band 0 is lent to a saturated long band (sita_long_band_borrows_band_0_only_while_it_is_idle)", func(c KvRouterConfig) KvRouterConfig { c.SitaSpillThreshold = 0.85; return c },
			func(id int) uint64 { return map[bool]uint64{false: 950}[id < 4] }, sitaTestRequest(9000, 0), nil, true, SitaSlice{0, 8}},
		{"a busy band 0 stays reserved", func(c KvRouterConfig) KvRouterConfig { c.SitaSpillThreshold = 0.85; return c },
			func(int) uint64 { return 950 }, sitaTestRequest(9000, 0), nil, true, SitaSlice{4, 8}},
		{"disabled SITA changes nothing (sita_disabled_is_identical_to_stock)", func(c KvRouterConfig) KvRouterConfig { c.SitaEnabled = false; return c }, zero, sitaTestRequest(256, 0), nil, false, SitaSlice{}},
	} {
		cfg := sitaTestConfig(0.5)
		if c.cfg != nil {
			cfg = c.cfg(cfg)
		}
		in := SitaInputFor(sitaTestWorkers(c.decode, 8), c.req, BusyThresholds{})
		in.ExpectedOutputTokens = c.expOut
		b := ComputeSitaBand(cfg, in)
		if b.Applied != c.applied || (c.applied && b.Range != c.want) {
			t.Errorf("%s: band %+v, want applied=%v range %v", c.name, b, c.applied, c.want)
		}
		if c.applied && (b.First != WorkerID(c.want.Start) || b.Last != WorkerID(c.want.End-1)) {
			t.Errorf("%s: bounds [%d, %d], want [%d, %d]", c.name, b.First, b.Last, c.want.Start, c.want.End-1)
		}
	}
}

func TestSitaRespectsPinnedWorkersAndTinyPools(t *testing.T) {
	cfg := sitaTestConfig(0.5)
	pinned := sitaTestRequest(256, 0)
	pinned.Pinned = &WorkerWithDpRank{WorkerID: 7}
	if b := ComputeSitaBand(cfg, SitaInputFor(sitaTestWorkers(func(int) uint64 { return 0 }, 8), pinned, BusyThresholds{})); b.Applied || !b.Allows(7) {
		t.Errorf("pinned request: %+v", b)
	}
	if b := ComputeSitaBand(cfg, SitaInputFor(sitaTestWorkers(func(int) uint64 { return 0 }, 1), sitaTestRequest(16384, 0), BusyThresholds{})); b.Applied {
		t.Errorf("single worker: %+v", b)
	}
}

func TestSitaInputSkipsIneligibleWorkers(t *testing.T) {
	ws := sitaTestWorkers(func(int) uint64 { return 0 }, 4)
	ws[1].Fenced = true
	ws[2].Runtime.Taints = []string{"zone=a"}
	req := sitaTestRequest(256, 0)
	req.AllowedWorkers = []WorkerID{0, 1, 2}
	in := SitaInputFor(ws, req, BusyThresholds{})
	if len(in.Workers) != 2 || in.Workers[0].ID != 0 || in.Workers[1].ID != 2 {
		t.Errorf("workers = %+v, want 0 and 2", in.Workers)
	}
	req.Constraints.RequiredTaints = []string{"zone=a"}
	if in := SitaInputFor(ws, req, BusyThresholds{}); len(in.Workers) != 1 || in.Workers[0].ID != 2 {
		t.Errorf("with required taint: %+v, want 2", in.Workers)
	}
}
