package routecore

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// Helpers are prefixed "sel" to stay clear of other test files in the package.

func selW(id WorkerID) WorkerWithDpRank { return WorkerWithDpRank{WorkerID: id} }

func selF(v float64) *float64 { return &v }

func selU(v uint64) *uint64 { return &v }

func selB(v bool) *bool { return &v }

// selWorkers builds single-rank workers with the given ids.
func selWorkers(ids ...WorkerID) []Worker {
	ws := make([]Worker, len(ids))
	for i, id := range ids {
		ws[i] = Worker{ID: id}
	}
	return ws
}

// selDecodeLoads mirrors worker_loads_with_active_decode: a load entry per worker
// with only active_decode_blocks set.
func selDecodeLoads(ws []Worker, decode map[WorkerID]uint64) []Worker {
	for i := range ws {
		if d, ok := decode[ws[i].ID]; ok {
			ws[i].Loads = map[uint32]RankLoad{0: {ActiveDecodeBlocks: d}}
		}
	}
	return ws
}

func selTainted(id WorkerID, taints ...string) Worker {
	return Worker{ID: id, Runtime: RuntimeConfig{Taints: taints}}
}

func selCfg(mod func(*KvRouterConfig)) KvRouterConfig {
	c := DefaultKvRouterConfig()
	if mod != nil {
		mod(&c)
	}
	return c
}

func selCost(t *testing.T, d Decision, c WorkerWithDpRank) float64 {
	t.Helper()
	for _, ev := range d.Candidates {
		if ev.Candidate == c {
			if !ev.Scored {
				t.Fatalf("candidate %s was not scored: %+v", c, ev.Reason)
			}
			return ev.Terms.Cost
		}
	}
	t.Fatalf("candidate %s missing from decision", c)
	return 0
}

func selMustSelect(t *testing.T, cfg KvRouterConfig, th BusyThresholds, ws []Worker, req Request, u float64) Decision {
	t.Helper()
	d, err := SelectWithDraw(cfg, th, ws, req, u)
	if err != nil {
		t.Fatalf("SelectWithDraw: %v", err)
	}
	return d
}

// TestSelectorVectors covers the default.rs selector tests of router-semantics.md §7
// with the exact costs each one implies.
func TestSelectorVectors(t *testing.T) {
	w0, w1 := selW(0), selW(1)
	tests := []struct {
		name     string
		cfg      KvRouterConfig
		th       BusyThresholds
		workers  []Worker
		req      Request
		want     WorkerWithDpRank
		wantCost map[WorkerWithDpRank]float64
	}{
		{
			// test_effective_overlap_falls_back_when_tier_blocks_are_absent
			name:    "effective overlap falls back when tier blocks are absent",
			cfg:     selCfg(nil),
			workers: selDecodeLoads(selWorkers(0, 1), map[WorkerID]uint64{0: 1, 1: 0}),
			req: Request{ISL: 64, BlockSize: 16,
				Overlap: OverlapInput{EffectiveBlocks: map[WorkerWithDpRank]float64{w0: 4}}},
			want:     w0,
			wantCost: map[WorkerWithDpRank]float64{w0: 1, w1: 4},
		},
		{
			// test_shared_cache_hits_scoring
			name:    "shared cache hits scoring",
			cfg:     selCfg(func(c *KvRouterConfig) { c.SharedCacheMultiplier = 0.5 }),
			workers: selWorkers(0, 1),
			req: Request{ISL: 4, BlockSize: 1, Overlap: OverlapInput{
				EffectiveBlocks: map[WorkerWithDpRank]float64{w0: 2},
				CachedTokens:    map[WorkerWithDpRank]uint64{w0: 2},
				DeviceBlocks:    map[WorkerWithDpRank]uint64{w0: 2},
				SharedHits:      []SharedHitRange{{0, 4}},
			}},
			want:     w0,
			wantCost: map[WorkerWithDpRank]float64{w0: 1, w1: 2},
		},
		{
			// test_no_shared_cache_unchanged
			name:    "no shared cache single worker",
			cfg:     selCfg(nil),
			workers: selWorkers(0),
			req: Request{ISL: 64, BlockSize: 16,
				Overlap: OverlapInput{EffectiveBlocks: map[WorkerWithDpRank]float64{w0: 2}}},
			want:     w0,
			wantCost: map[WorkerWithDpRank]float64{w0: 2},
		},
		{
			// test_prefill_load_scale_applies_after_overlap_credits (kept aside; by hand):
			// w0: raw (0+32+32)/16=4, credit 2, adjusted 2, 2·2 + 3 = 7; w1: 2·4 + 0 = 8.
			name:    "prefill load scale applies after overlap credits",
			cfg:     selCfg(func(c *KvRouterConfig) { c.PrefillLoadScale = 2 }),
			workers: selDecodeLoads(selWorkers(0, 1), map[WorkerID]uint64{0: 3, 1: 0}),
			req: Request{ISL: 64, BlockSize: 16, Overlap: OverlapInput{
				CachedTokens: map[WorkerWithDpRank]uint64{w0: 32},
				DeviceBlocks: map[WorkerWithDpRank]uint64{w0: 2},
			}},
			want:     w0,
			wantCost: map[WorkerWithDpRank]float64{w0: 7, w1: 8},
		},
		{
			// test_overlap_credit_above_one_can_prefer_colocated_worker, credit 1 (by hand):
			// warm: 128/16=8 − 4 = 4, + decode 5 = 9; cold (no load): 8.
			name:    "credit one prefers the cold worker",
			cfg:     selCfg(nil),
			workers: selDecodeLoads(selWorkers(0, 1), map[WorkerID]uint64{0: 5}),
			req: Request{ISL: 128, BlockSize: 16, Overlap: OverlapInput{
				DeviceBlocks: map[WorkerWithDpRank]uint64{w0: 4},
				CachedTokens: map[WorkerWithDpRank]uint64{w0: 64},
			}},
			want:     w1,
			wantCost: map[WorkerWithDpRank]float64{w0: 9, w1: 8},
		},
		{
			// same, credit 1.5: warm 8 − 6 = 2, + 5 = 7 < 8.
			name:    "credit above one prefers the colocated worker",
			cfg:     selCfg(func(c *KvRouterConfig) { c.OverlapScoreCredit = 1.5 }),
			workers: selDecodeLoads(selWorkers(0, 1), map[WorkerID]uint64{0: 5}),
			req: Request{ISL: 128, BlockSize: 16, Overlap: OverlapInput{
				DeviceBlocks: map[WorkerWithDpRank]uint64{w0: 4},
				CachedTokens: map[WorkerWithDpRank]uint64{w0: 64},
			}},
			want:     w0,
			wantCost: map[WorkerWithDpRank]float64{w0: 7, w1: 8},
		},
		{
			// test_overlap_credit_decay_can_prefer_less_loaded_cold_worker, no decay:
			// warm raw (48+0+64)/16 = 7 − 4 = 3; cold 4.
			name: "no decay keeps the warm worker",
			cfg:  selCfg(nil),
			workers: []Worker{
				{ID: 0, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 48}}},
				{ID: 1},
			},
			req: Request{ISL: 64, BlockSize: 16, Overlap: OverlapInput{
				DeviceBlocks: map[WorkerWithDpRank]uint64{w0: 4},
				CachedTokens: map[WorkerWithDpRank]uint64{w0: 64},
			}},
			want:     w0,
			wantCost: map[WorkerWithDpRank]float64{w0: 3, w1: 4},
		},
		{
			// with decay 1: min active 0 (cold has no load), excess 48/16 = 3 blocks,
			// norm 3/4, factor 1/1.75, credit 4/1.75; warm 7 − 16/7 = 33/7 > 4.
			name: "decay prefers the less loaded cold worker",
			cfg:  selCfg(func(c *KvRouterConfig) { c.OverlapScoreCreditDecay = 1 }),
			workers: []Worker{
				{ID: 0, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 48}}},
				{ID: 1},
			},
			req: Request{ISL: 64, BlockSize: 16, Overlap: OverlapInput{
				DeviceBlocks: map[WorkerWithDpRank]uint64{w0: 4},
				CachedTokens: map[WorkerWithDpRank]uint64{w0: 64},
			}},
			want:     w1,
			wantCost: map[WorkerWithDpRank]float64{w0: 7 - 4*(1/1.75), w1: 4},
		},
		{
			// test_required_taints_filter_out_incompatible_workers
			name:    "required taints filter out incompatible workers",
			cfg:     selCfg(nil),
			workers: []Worker{selTainted(10, "mdc-a"), selTainted(20, "mdc-b")},
			req:     Request{ISL: 16, BlockSize: 16, Constraints: RoutingConstraints{RequiredTaints: []string{"mdc-b"}}},
			want:    selW(20),
		},
		{
			// test_preferred_taints_prefer_matching_worker: (1+100)·0.50104 ≈ 50.6 vs 91.
			name: "preferred taint prefers the matching worker",
			cfg:  selCfg(nil),
			workers: selDecodeLoads([]Worker{selTainted(10, "mdc-a"), selTainted(20, "mdc-b")},
				map[WorkerID]uint64{10: 100, 20: 90}),
			req: Request{ISL: 16, BlockSize: 16,
				Constraints: RoutingConstraints{PreferredTaints: map[string]float64{"mdc-a": 0.85}}},
			want: selW(10),
			wantCost: map[WorkerWithDpRank]float64{
				selW(10): 101 * libmExp(-libmTanh(float64(float32(0.85)))), selW(20): 91},
		},
		{
			// test_negative_preferred_taints_avoid_matching_worker: 91·1.27752 ≈ 116.3 vs 101.
			name: "negative preferred taint avoids the matching worker",
			cfg:  selCfg(nil),
			workers: selDecodeLoads([]Worker{selTainted(10, "mdc-a"), selTainted(20, "mdc-b")},
				map[WorkerID]uint64{10: 90, 20: 100}),
			req: Request{ISL: 16, BlockSize: 16,
				Constraints: RoutingConstraints{PreferredTaints: map[string]float64{"mdc-a": -0.25}}},
			want: selW(20),
			wantCost: map[WorkerWithDpRank]float64{
				selW(10): 91 * libmExp(-libmTanh(float64(float32(-0.25)))), selW(20): 101},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := selMustSelect(t, tt.cfg, tt.th, tt.workers, tt.req, 0)
			if d.Selected != tt.want {
				t.Errorf("selected %s, want %s", d.Selected, tt.want)
			}
			for c, want := range tt.wantCost {
				if got := selCost(t, d, c); got != want {
					t.Errorf("cost(%s) = %v, want %v", c, got, want)
				}
			}
		})
	}
}

func TestPreferredTaintCostsApproximate(t *testing.T) {
	for _, tc := range []struct {
		w, decode10, decode20 float64
		want10, want20        float64
	}{
		{0.85, 100, 90, 50.6, 91},
		{-0.25, 90, 100, 116.3, 101},
	} {
		ws := selDecodeLoads([]Worker{selTainted(10, "mdc-a"), selTainted(20, "mdc-b")},
			map[WorkerID]uint64{10: uint64(tc.decode10), 20: uint64(tc.decode20)})
		d := selMustSelect(t, selCfg(nil), BusyThresholds{}, ws, Request{ISL: 16, BlockSize: 16,
			Constraints: RoutingConstraints{PreferredTaints: map[string]float64{"mdc-a": tc.w}}}, 0)
		if got := selCost(t, d, selW(10)); math.Abs(got-tc.want10) > 0.05 {
			t.Errorf("w=%v: cost(10) = %v, want ≈ %v", tc.w, got, tc.want10)
		}
		if got := selCost(t, d, selW(20)); got != tc.want20 {
			t.Errorf("w=%v: cost(20) = %v, want %v", tc.w, got, tc.want20)
		}
	}
}

// TestCandidateLogitVectors covers the tests that call worker_logit directly.
func TestCandidateLogitVectors(t *testing.T) {
	latest, _ := ProfileLatest.Behavior()
	legacy, _ := ProfileLegacyV1_1.Behavior()
	base := ResolvedWeights{OverlapScoreCredit: 1, PrefillLoadScale: 1, TrackPrefillTokens: true,
		HostCacheHitWeight: 0.75, DiskCacheHitWeight: 0.25}
	withScale2 := base
	withScale2.PrefillLoadScale = 2
	noTrack := withScale2
	noTrack.TrackPrefillTokens = false
	reqW32 := base
	reqW32.DecodeActiveRequestWeight = 32
	decodeNoTrack := base
	decodeNoTrack.TrackPrefillTokens = false

	clampIn := CostInput{ISL: 64, BlockSize: 16, RequestBlocks: 4, HasLoad: true,
		ActivePrefillTokens: 16, ActiveDecodeBlocks: 2, AdditionalActiveBlocks: 3,
		DeviceBlocks: 6, CachedTokens: 96}
	reqIn := CostInput{ISL: 0, BlockSize: 16, RequestBlocks: 0, HasLoad: true,
		ActiveDecodeBlocks: 100, ActiveRequests: 4}
	decodeIn := CostInput{ISL: 64, BlockSize: 16, RequestBlocks: 4, HasLoad: true,
		WorkerType: WorkerTypeDecode, ActiveDecodeBlocks: 10, DeviceBlocks: 3}

	tests := []struct {
		name string
		b    ProfileBehavior
		w    ResolvedWeights
		in   CostInput
		want float64
	}{
		// test_worker_logit_clamps_non_decode_overlap_credit
		{"clamp: tracked", latest, withScale2, clampIn, 7.0},
		{"clamp: untracked clamps at zero", latest, noTrack, clampIn, 5.0},
		// the older test_worker_logit_does_not_clamp_negative_prefill_cost
		{"legacy: tracked", legacy, withScale2, clampIn, 7.0},
		{"legacy: untracked keeps the negative prefill", legacy, noTrack, clampIn, -7.0},
		// test_worker_logit_can_charge_active_requests
		{"active requests: default weight", latest, base, reqIn, 100.0},
		{"active requests: weight 32", latest, reqW32, reqIn, 228.0},
		// test_decode_worker_logit_credits_overlap_without_prefill_tracking
		{"decode worker credits overlap", latest, decodeNoTrack, decodeIn, 7.0},
		// without the branch (legacy) the unclamped prefill term −3 gives the same 7
		{"legacy decode worker uses the prefill formula", legacy, decodeNoTrack, decodeIn, 7.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			terms := CandidateLogit(tt.b, tt.w, tt.in)
			if terms.Logit != tt.want {
				t.Errorf("logit = %v, want %v", terms.Logit, tt.want)
			}
			wantFormula := "prefill"
			if tt.b.DecodeOverlapBranch && tt.in.WorkerType == WorkerTypeDecode {
				wantFormula = "decode-overlap"
			}
			if terms.Formula != wantFormula {
				t.Errorf("formula %q, want %q", terms.Formula, wantFormula)
			}
		})
	}
}

// TestClampVectorThroughSelect checks the row construction of selector/mod.rs on the
// clamp vector: the 7.0 must also come out of Select.
func TestClampVectorThroughSelect(t *testing.T) {
	w := selW(0)
	ws := []Worker{{ID: 0, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 16, ActiveDecodeBlocks: 2}}}}
	req := Request{ISL: 64, BlockSize: 16,
		AdditionalActiveBlocks: map[WorkerWithDpRank]uint64{w: 3},
		Overlap: OverlapInput{DeviceBlocks: map[WorkerWithDpRank]uint64{w: 6},
			CachedTokens: map[WorkerWithDpRank]uint64{w: 96}}}
	cfg := selCfg(func(c *KvRouterConfig) { c.PrefillLoadScale = 2 })
	d := selMustSelect(t, cfg, BusyThresholds{}, ws, req, 0)
	terms := d.Candidates[0].Terms
	if terms.Logit != 7 || terms.RawPrefillBlocks != 7 || terms.CreditBlocks != 6 || terms.DecodeBlocks != 5 {
		t.Errorf("terms = %+v, want logit 7, raw 7, credit 6, decode 5", terms)
	}
	req.Override.TrackPrefillTokens = selB(false)
	d = selMustSelect(t, cfg, BusyThresholds{}, ws, req, 0)
	if got := d.Candidates[0].Terms.Logit; got != 5 {
		t.Errorf("untracked logit = %v, want 5", got)
	}
	cfg.Profile = ProfileLegacyV1_1
	d = selMustSelect(t, cfg, BusyThresholds{}, ws, req, 0)
	if got := d.Candidates[0].Terms.Logit; got != -7 {
		t.Errorf("legacy untracked logit = %v, want -7", got)
	}
}

// TestPerRequestOverridesChangeSelection is per_request_overrides_change_selection.
func TestPerRequestOverridesChangeSelection(t *testing.T) {
	warm, cold := selW(0), selW(1)
	ws := selDecodeLoads(selWorkers(0, 1), map[WorkerID]uint64{0: 1})
	base := Request{ISL: 4, BlockSize: 1, Overlap: OverlapInput{
		DeviceBlocks: map[WorkerWithDpRank]uint64{warm: 2},
		CachedTokens: map[WorkerWithDpRank]uint64{warm: 2},
		SharedHits:   []SharedHitRange{{0, 4}},
	}}
	cfg := selCfg(nil)
	tests := []struct {
		name           string
		override       RouterConfigOverride
		draw           float64
		want           WorkerWithDpRank
		warmC, coldC   float64
		wantRule       SelectionRule
		wantWarmProbab float64
	}{
		{"no override", RouterConfigOverride{}, 0, warm, 3, 4, RuleMinimumCost, 1},
		{"overlap_score_credit", RouterConfigOverride{OverlapScoreCredit: selF(0)}, 0, cold, 5, 4, RuleMinimumCost, 0},
		{"prefill_load_scale", RouterConfigOverride{PrefillLoadScale: selF(0)}, 0, cold, 1, 0, RuleMinimumCost, 0},
		{"shared_cache_multiplier", RouterConfigOverride{SharedCacheMultiplier: selF(1)}, 0, cold, 1, 0, RuleMinimumCost, 0},
		// T=1: p(warm) = 1/(1+e^-1) ≈ 0.731; Dynamo's seeded draw lands on cold, as does 0.9.
		{"router_temperature", RouterConfigOverride{RouterTemperature: selF(1)}, 0.9, cold, 3, 4, RuleSoftmaxSample, 1 / (1 + math.Exp(-1))},
		// legacy overlap_score_weight 0 ⇒ scale 0 and credit 0: warm 1, cold 0.
		{"legacy overlap_score_weight 0", RouterConfigOverride{OverlapScoreWeight: selF(0)}, 0, cold, 1, 0, RuleMinimumCost, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := base
			req.Override = tt.override
			d := selMustSelect(t, cfg, BusyThresholds{}, ws, req, tt.draw)
			if d.Selected != tt.want || d.SelectionRule != tt.wantRule {
				t.Errorf("selected %s by %s, want %s by %s", d.Selected, d.SelectionRule, tt.want, tt.wantRule)
			}
			if got := selCost(t, d, warm); got != tt.warmC {
				t.Errorf("warm cost %v, want %v", got, tt.warmC)
			}
			if got := selCost(t, d, cold); got != tt.coldC {
				t.Errorf("cold cost %v, want %v", got, tt.coldC)
			}
			if got := d.Candidates[0].Probability; math.Abs(got-tt.wantWarmProbab) > 1e-15 {
				t.Errorf("warm probability %v, want %v", got, tt.wantWarmProbab)
			}
		})
	}
}

func TestSelectErrors(t *testing.T) {
	prefillTh := BusyThresholds{ActivePrefillTokensThreshold: selU(100)}
	busy := map[uint32]RankLoad{0: {ActivePrefillTokens: 1000}}
	w0 := selW(0)
	tests := []struct {
		name    string
		cfg     KvRouterConfig
		th      BusyThresholds
		workers []Worker
		req     Request
		wantErr error
		kind    string
		want    WorkerWithDpRank
	}{
		{
			// test_overloaded_high_overlap_worker_is_skipped
			name:    "overloaded high-overlap worker is skipped",
			cfg:     selCfg(nil),
			th:      prefillTh,
			workers: []Worker{{ID: 0, Loads: busy}, {ID: 1}},
			req: Request{ISL: 64, BlockSize: 16, Overlap: OverlapInput{
				EffectiveBlocks: map[WorkerWithDpRank]float64{w0: 4},
				CachedTokens:    map[WorkerWithDpRank]uint64{w0: 64}}},
			want: selW(1),
		},
		{
			// test_all_eligible_workers_overloaded_returns_overload_error
			name:    "all eligible workers overloaded",
			cfg:     selCfg(func(c *KvRouterConfig) { c.OverlapScoreCreditDecay = 1 }),
			th:      prefillTh,
			workers: []Worker{{ID: 0, Loads: busy}, {ID: 1, Loads: busy}},
			req:     Request{ISL: 16, BlockSize: 16},
			wantErr: ErrAllEligibleWorkersOverloaded,
			kind:    "AllEligibleWorkersOverloaded",
		},
		{
			// test_overloaded_pinned_worker_is_not_rerouted
			name:    "overloaded pinned worker is not rerouted",
			cfg:     selCfg(nil),
			th:      prefillTh,
			workers: []Worker{{ID: 0, Loads: busy}, {ID: 1}},
			req:     Request{ISL: 16, BlockSize: 16, Pinned: &w0},
			wantErr: ErrPinnedWorkerOverloaded,
			kind:    "PinnedWorkerOverloaded",
		},
		{
			name:    "pinned worker outside the allow-list",
			cfg:     selCfg(nil),
			workers: selWorkers(0, 1),
			req:     Request{ISL: 16, BlockSize: 16, Pinned: &w0, AllowedWorkers: []WorkerID{1}},
			wantErr: ErrPinnedWorkerNotAllowed,
			kind:    "PinnedWorkerNotAllowed",
		},
		{
			name:    "pinned worker fenced is no endpoints",
			cfg:     selCfg(nil),
			workers: []Worker{{ID: 0, Fenced: true}, {ID: 1}},
			req:     Request{ISL: 16, BlockSize: 16, Pinned: &w0},
			wantErr: ErrNoEndpoints,
			kind:    "NoEndpoints",
		},
		{
			name:    "pinned unknown worker is no endpoints",
			cfg:     selCfg(nil),
			workers: selWorkers(1),
			req:     Request{ISL: 16, BlockSize: 16, Pinned: &w0},
			wantErr: ErrNoEndpoints,
			kind:    "NoEndpoints",
		},
		{
			// test_required_taints_return_no_endpoints_when_no_worker_matches
			name:    "required taints with no match",
			cfg:     selCfg(nil),
			workers: []Worker{selTainted(10, "mdc-a")},
			req:     Request{ISL: 16, BlockSize: 16, Constraints: RoutingConstraints{RequiredTaints: []string{"mdc-b"}}},
			wantErr: ErrNoEndpoints,
			kind:    "NoEndpoints",
		},
		{
			name:    "overloaded but tainted out is no endpoints",
			cfg:     selCfg(nil),
			th:      prefillTh,
			workers: []Worker{{ID: 0, Loads: busy, Runtime: RuntimeConfig{Taints: []string{"a"}}}},
			req:     Request{ISL: 16, BlockSize: 16, Constraints: RoutingConstraints{RequiredTaints: []string{"b"}}},
			wantErr: ErrNoEndpoints,
			kind:    "NoEndpoints",
		},
		{
			name:    "no workers",
			cfg:     selCfg(nil),
			req:     Request{ISL: 16, BlockSize: 16},
			wantErr: ErrNoEndpoints,
			kind:    "NoEndpoints",
		},
		{
			name:    "empty prompt",
			cfg:     selCfg(nil),
			workers: selWorkers(0),
			req:     Request{ISL: 0, BlockSize: 16},
			wantErr: ErrInvalidRequest,
			kind:    "InvalidRequest",
		},
		{
			name:    "duplicate worker",
			cfg:     selCfg(nil),
			workers: selWorkers(3, 3),
			req:     Request{ISL: 1, BlockSize: 16},
			wantErr: ErrInvalidRequest,
			kind:    "InvalidRequest",
		},
		{
			name:    "NaN preferred weight",
			cfg:     selCfg(nil),
			workers: selWorkers(0),
			req:     Request{ISL: 1, BlockSize: 16, Constraints: RoutingConstraints{PreferredTaints: map[string]float64{"a": math.NaN()}}},
			wantErr: ErrInvalidRequest,
			kind:    "InvalidRequest",
		},
		{
			name:    "infinite effective overlap",
			cfg:     selCfg(nil),
			workers: selWorkers(0),
			req:     Request{ISL: 1, BlockSize: 16, Overlap: OverlapInput{EffectiveBlocks: map[WorkerWithDpRank]float64{w0: math.Inf(1)}}},
			wantErr: ErrInvalidRequest,
			kind:    "InvalidRequest",
		},
		{
			name:    "invalid override",
			cfg:     selCfg(nil),
			workers: selWorkers(0),
			req:     Request{ISL: 1, BlockSize: 16, Override: RouterConfigOverride{SharedCacheMultiplier: selF(2)}},
			wantErr: ErrInvalidOverride,
			kind:    "InvalidConfig",
		},
		{
			name:    "invalid config",
			cfg:     selCfg(func(c *KvRouterConfig) { c.PrefillLoadScale = math.Inf(1) }),
			workers: selWorkers(0),
			req:     Request{ISL: 1, BlockSize: 16},
			wantErr: ErrInvalidConfig,
			kind:    "InvalidConfig",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := SelectWithDraw(tt.cfg, tt.th, tt.workers, tt.req, 0)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if d.Selected != tt.want {
					t.Errorf("selected %s, want %s", d.Selected, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if d.ErrorKind != tt.kind {
				t.Errorf("ErrorKind %q, want %q", d.ErrorKind, tt.kind)
			}
		})
	}
}

func TestPinnedWorkerErrorCarriesID(t *testing.T) {
	w0 := selW(0)
	_, err := SelectWithDraw(selCfg(nil), BusyThresholds{ActivePrefillTokensThreshold: selU(0)},
		[]Worker{{ID: 0, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 1}}}, {ID: 1}},
		Request{ISL: 16, BlockSize: 16, Pinned: &w0}, 0)
	var pe *PinnedWorkerError
	if !errors.As(err, &pe) || pe.WorkerID != 0 || !errors.Is(err, ErrPinnedWorkerOverloaded) {
		t.Fatalf("error %v, want PinnedWorkerOverloaded{0}", err)
	}
	if err.Error() != "pinned worker 0 is overloaded" {
		t.Errorf("message %q", err.Error())
	}
	if errors.Is(err, ErrPinnedWorkerNotAllowed) {
		t.Errorf("overloaded error must not match ErrPinnedWorkerNotAllowed")
	}
}

// TestPinnedUsesRawLogit: a pinned worker's cost ignores the preferred multiplier and
// nothing else is scored.
func TestPinnedUsesRawLogit(t *testing.T) {
	w10 := selW(10)
	ws := selDecodeLoads([]Worker{selTainted(10, "mdc-a"), selTainted(20, "mdc-b")}, map[WorkerID]uint64{10: 100, 20: 0})
	req := Request{ISL: 16, BlockSize: 16, Pinned: &w10,
		Constraints: RoutingConstraints{PreferredTaints: map[string]float64{"mdc-a": 0.85}}}
	d := selMustSelect(t, selCfg(nil), BusyThresholds{}, ws, req, 0)
	if d.Selected != w10 || d.SelectionRule != RulePinned || d.SelectedCost != 101 {
		t.Errorf("got %s by %s cost %v, want 10/0 pinned 101", d.Selected, d.SelectionRule, d.SelectedCost)
	}
	if d.Candidates[1].Scored {
		t.Errorf("worker 20 must not be scored when 10 is pinned")
	}
	if d.Candidates[0].Terms.HasMultiplier {
		t.Errorf("pinned worker must not get a preferred multiplier")
	}
}

// TestSessionAffinity is preferred_worker_is_selected_until_overloaded.
func TestSessionAffinity(t *testing.T) {
	pref := selW(0)
	req := Request{ISL: 16, BlockSize: 16, SessionAffinity: &pref}
	ws := selDecodeLoads(selWorkers(0, 1), map[WorkerID]uint64{0: 50})
	d := selMustSelect(t, selCfg(nil), BusyThresholds{}, ws, req, 0)
	if d.Selected != pref || d.SelectionRule != RuleSessionAffinity {
		t.Errorf("got %s by %s, want the preferred worker by affinity", d.Selected, d.SelectionRule)
	}
	ws[0].Loads[0] = RankLoad{ActiveDecodeBlocks: 50, ActivePrefillTokens: 10}
	d = selMustSelect(t, selCfg(nil), BusyThresholds{ActivePrefillTokensThreshold: selU(5)}, ws, req, 0)
	if d.Selected != selW(1) || d.SelectionRule != RuleMinimumCost {
		t.Errorf("got %s by %s, want worker 1 once the preferred one is overloaded", d.Selected, d.SelectionRule)
	}
}

// TestRequiredTaintsSwitchMatchingSetsByLabel is
// test_required_taints_switch_matching_worker_sets_by_label.
func TestRequiredTaintsSwitchMatchingSetsByLabel(t *testing.T) {
	ws := []Worker{selTainted(10, "mdc-a"), selTainted(11, "mdc-a"), selTainted(20, "mdc-b"),
		selTainted(21, "mdc-b"), selTainted(30, "mdc-c"), selTainted(31, "mdc-c")}
	for _, tc := range []struct {
		taint         string
		winner, noisy WorkerID
	}{{"mdc-a", 10, 11}, {"mdc-b", 20, 21}, {"mdc-c", 30, 31}} {
		loaded := selDecodeLoads(slices.Clone(ws), map[WorkerID]uint64{tc.winner: 0, tc.noisy: 400_000})
		d := selMustSelect(t, selCfg(nil), BusyThresholds{}, loaded,
			Request{ISL: 16, BlockSize: 16, Constraints: RoutingConstraints{RequiredTaints: []string{tc.taint}}}, 0)
		if d.Selected != selW(tc.winner) {
			t.Errorf("taint %s: selected %s, want %d", tc.taint, d.Selected, tc.winner)
		}
		eligible := 0
		for _, ev := range d.Candidates {
			if ev.Eligible {
				eligible++
			} else if ev.Reason.Code != ReasonRoutingConstraintsUnsatisfied || !slices.Equal(ev.Reason.MissingTaints, []string{tc.taint}) {
				t.Errorf("taint %s: %s reason %+v", tc.taint, ev.Candidate, ev.Reason)
			}
		}
		if eligible != 2 {
			t.Errorf("taint %s: %d eligible, want 2", tc.taint, eligible)
		}
	}
}

// TestZeroTemperatureTieSet mirrors test_default_selector_randomizes_zero_temperature_ties:
// three identical workers are all in the tie set, and draws spread over them.
func TestZeroTemperatureTieSet(t *testing.T) {
	ws := selWorkers(30, 10, 20)
	req := Request{ISL: 16, BlockSize: 16}
	want := []WorkerWithDpRank{selW(10), selW(20), selW(30)}
	for i, u := range []float64{0, 0.34, 0.99} {
		d := selMustSelect(t, selCfg(nil), BusyThresholds{}, ws, req, u)
		if !slices.Equal(d.TieSet, want) {
			t.Fatalf("tie set %v, want %v", d.TieSet, want)
		}
		if d.SelectionRule != RuleMinimumCostTieRandom || !d.DrawUsed || d.Selected != want[i] {
			t.Errorf("u=%v: %s by %s (draw used %v), want %s by tie-random", u, d.Selected, d.SelectionRule, d.DrawUsed, want[i])
		}
		for _, ev := range d.Candidates {
			if ev.Probability != 1.0/3 || !ev.InTieSet {
				t.Errorf("candidate %s probability %v in tie %v", ev.Candidate, ev.Probability, ev.InTieSet)
			}
		}
	}
	r := &ScriptedRand{Draws: []float64{0.5}}
	d, err := Select(selCfg(nil), BusyThresholds{}, ws, req, r)
	if err != nil || d.Selected != selW(20) || r.Calls != 1 {
		t.Errorf("Select: %s, %v, %d draws", d.Selected, err, r.Calls)
	}
	// A unique minimum takes no draw.
	r = &ScriptedRand{}
	if _, err := Select(selCfg(nil), BusyThresholds{}, selDecodeLoads(selWorkers(1, 2), map[WorkerID]uint64{1: 1}), req, r); err != nil || r.Calls != 0 {
		t.Errorf("unique minimum: err %v, %d draws", err, r.Calls)
	}
	if _, err := Select(selCfg(nil), BusyThresholds{}, ws, req, nil); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("nil Rand on a tie: %v", err)
	}
}

func TestLegacyTreeSizeTieBreak(t *testing.T) {
	cfg := selCfg(func(c *KvRouterConfig) { c.Profile = ProfileLegacyTreeSize })
	req := Request{ISL: 16, BlockSize: 16, Overlap: OverlapInput{
		TreeSizes: map[WorkerWithDpRank]uint64{selW(1): 50, selW(2): 10, selW(3): 10}}}
	d := selMustSelect(t, cfg, BusyThresholds{}, selWorkers(1, 2, 3), req, 0.9)
	if d.Selected != selW(3) || !slices.Equal(d.TieSet, []WorkerWithDpRank{selW(2), selW(3)}) {
		t.Errorf("selected %s ties %v", d.Selected, d.TieSet)
	}
	req.Overlap.TreeSizes[selW(3)] = 11
	d = selMustSelect(t, cfg, BusyThresholds{}, selWorkers(1, 2, 3), req, 0.9)
	if d.Selected != selW(2) || d.SelectionRule != RuleMinimumCostTieTreeSize || d.DrawUsed {
		t.Errorf("selected %s by %s draw %v", d.Selected, d.SelectionRule, d.DrawUsed)
	}
}

// TestDecayMinimumOnlyWhenUsed is default_scoring_context_only_computes_minimum_when_decay_uses_it.
func TestDecayMinimumOnlyWhenUsed(t *testing.T) {
	ws := []Worker{
		{ID: 0, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 7}}},
		{ID: 1, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 11}}},
	}
	for _, tc := range []struct {
		name         string
		decay        float64
		track        bool
		want         uint64
		wantComputed bool
	}{
		{"decay 1", 1, true, 7, true},
		{"decay 0", 0, true, 0, false},
		{"tracking off", 1, false, 0, false},
	} {
		cfg := selCfg(func(c *KvRouterConfig) { c.OverlapScoreCreditDecay = tc.decay; c.RouterTrackPrefillTokens = tc.track })
		d := selMustSelect(t, cfg, BusyThresholds{}, ws, Request{ISL: 64, BlockSize: 16}, 0)
		if d.MinActivePrefillTokens != tc.want || d.MinActivePrefillComputed != tc.wantComputed {
			t.Errorf("%s: min %d computed %v, want %d %v", tc.name, d.MinActivePrefillTokens, d.MinActivePrefillComputed, tc.want, tc.wantComputed)
		}
	}
	// The minimum ignores ineligible candidates: with worker 0 overloaded it is 11.
	cfg := selCfg(func(c *KvRouterConfig) { c.OverlapScoreCreditDecay = 1 })
	ws[0].Loads[0] = RankLoad{ActivePrefillTokens: 7, ActiveDecodeBlocks: 90}
	ws[0].Runtime.TotalKvBlocks = selU(100)
	d := selMustSelect(t, cfg, BusyThresholds{ActiveDecodeBlocksThreshold: selF(0.5)}, ws, Request{ISL: 64, BlockSize: 16}, 0)
	if d.MinActivePrefillTokens != 11 {
		t.Errorf("min over eligible = %d, want 11", d.MinActivePrefillTokens)
	}
}

// TestDataParallelCandidates: each rank is its own candidate, evidence lists every
// rank in canonical order, and overload needs all ranks busy.
func TestDataParallelCandidates(t *testing.T) {
	ws := []Worker{
		{ID: 9, Runtime: RuntimeConfig{DataParallelStartRank: 0, DataParallelSize: 2},
			Loads: map[uint32]RankLoad{0: {ActiveDecodeBlocks: 5}, 1: {ActiveDecodeBlocks: 1}}},
		{ID: 3, Runtime: RuntimeConfig{DataParallelStartRank: 4, DataParallelSize: 2},
			Loads: map[uint32]RankLoad{4: {ActiveDecodeBlocks: 9, ActivePrefillTokens: 500}, 5: {ActiveDecodeBlocks: 2}}},
	}
	th := BusyThresholds{ActivePrefillTokensThreshold: selU(100)}
	d := selMustSelect(t, selCfg(nil), th, ws, Request{ISL: 16, BlockSize: 16}, 0)
	var got []WorkerWithDpRank
	for _, ev := range d.Candidates {
		got = append(got, ev.Candidate)
		if !ev.Eligible {
			t.Errorf("%s ineligible: only one of worker 3's ranks is busy", ev.Candidate)
		}
	}
	want := []WorkerWithDpRank{{3, 4}, {3, 5}, {9, 0}, {9, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if d.Selected != (WorkerWithDpRank{9, 1}) {
		t.Errorf("selected %s, want 9/1 (cost 2)", d.Selected)
	}
}

// TestSoftmaxWorkedExample is the T=0.5 example of §3.6 through Select.
func TestSoftmaxWorkedExample(t *testing.T) {
	// Costs 34.25, 6.25, 128.25: one prefill block (isl 16, B 16) at scale 1.25 plus
	// decode 33, 5 and 127.
	cfg := selCfg(func(c *KvRouterConfig) { c.RouterTemperature = 0.5; c.PrefillLoadScale = 1.25 })
	ws := selDecodeLoads(selWorkers(1, 2, 3), map[WorkerID]uint64{1: 33, 2: 5, 3: 127})
	req := Request{ISL: 16, BlockSize: 16}
	d := selMustSelect(t, cfg, BusyThresholds{}, ws, req, 0.5)
	want := []float64{34.25, 6.25, 128.25}
	for i, ev := range d.Candidates {
		if ev.Terms.Cost != want[i] {
			t.Fatalf("cost %s = %v, want %v", ev.Candidate, ev.Terms.Cost, want[i])
		}
	}
	p := []float64{d.Candidates[0].Probability, d.Candidates[1].Probability, d.Candidates[2].Probability}
	wantP := []float64{0.358, 0.566, 0.077}
	for i := range p {
		if math.Abs(p[i]-wantP[i]) > 0.0005 {
			t.Errorf("p[%d] = %v, want ≈ %v", i, p[i], wantP[i])
		}
	}
	// The running sum passes 0.5 at the second candidate (0.358 + 0.566).
	if d.Selected != selW(2) || d.SelectionRule != RuleSoftmaxSample || !d.DrawUsed || d.Draw != 0.5 {
		t.Errorf("selected %s by %s", d.Selected, d.SelectionRule)
	}
	if d.MinCost != 6.25 || d.TieSet != nil {
		t.Errorf("min cost %v ties %v", d.MinCost, d.TieSet)
	}
}

func TestSelectRejectsBadDraw(t *testing.T) {
	for _, u := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := SelectWithDraw(selCfg(nil), BusyThresholds{}, selWorkers(1, 2), Request{ISL: 1, BlockSize: 1}, u); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("u=%v: error %v", u, err)
		}
	}
}

func TestAdditionalBlocksRule(t *testing.T) {
	ws := selDecodeLoads(selWorkers(1, 2), map[WorkerID]uint64{1: 10, 2: 12})
	req := Request{ISL: 40, BlockSize: 16, AdditionalBlocksRule: AdditionalBlocksAllNew,
		AdditionalActiveBlocks: map[WorkerWithDpRank]uint64{selW(2): 0},
		Override:               RouterConfigOverride{OverlapScoreCredit: selF(0), TrackPrefillTokens: selB(false)}}
	d := selMustSelect(t, selCfg(nil), BusyThresholds{}, ws, req, 0)
	// floor(40/16) = 2 new blocks on worker 1 (12 in total); worker 2's explicit 0 wins.
	if c1, c2 := selCost(t, d, selW(1)), selCost(t, d, selW(2)); c1 != 12 || c2 != 12 {
		t.Errorf("costs %v %v, want 12 12", c1, c2)
	}
}
