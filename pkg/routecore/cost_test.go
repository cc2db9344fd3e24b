package routecore

import (
	"math"
	"slices"
	"testing"
)

// TestPreferredTaintMultiplierTable checks the reference multipliers of §4.3.
func TestPreferredTaintMultiplierTable(t *testing.T) {
	tests := []struct {
		name    string
		prefer  map[string]float64
		taints  []string
		want    float64
		matched []string
	}{
		{"0.25", map[string]float64{"a": 0.25}, []string{"a"}, 0.78277, []string{"a"}},
		{"0.5", map[string]float64{"a": 0.5}, []string{"a"}, 0.62995, []string{"a"}},
		{"0.85", map[string]float64{"a": 0.85}, []string{"a"}, 0.50104, []string{"a"}},
		{"1.0", map[string]float64{"a": 1.0}, []string{"a"}, 0.46692, []string{"a"}},
		{"-0.25", map[string]float64{"a": -0.25}, []string{"a"}, 1.27752, []string{"a"}},
		{"stacked 1.7", map[string]float64{"a": 0.85, "b": 0.85, "c": 5}, []string{"a", "b"}, 0.39243, []string{"a", "b"}},
		{"no match is neutral", map[string]float64{"a": 0.85}, []string{"b"}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mult, _, matched, ok := PreferredTaintMultiplier(RoutingConstraints{PreferredTaints: tt.prefer}, tt.taints)
			if !ok || math.Abs(mult-tt.want) > 5e-6 || !slices.Equal(matched, tt.matched) {
				t.Errorf("multiplier %.6f matched %v ok %v, want %.5f %v", mult, matched, ok, tt.want, tt.matched)
			}
		})
	}
	if mult, _, _, ok := PreferredTaintMultiplier(RoutingConstraints{}, []string{"a"}); ok || mult != 1 {
		t.Errorf("empty preferred taints: %v %v, want no multiplier", mult, ok)
	}
}

// TestPreferredTaintMultiplierUsesFloat32Weights: Dynamo's weights are f32, widened
// with f64::from before the sum; 0.85 is not representable, so the result differs
// from the f64 computation in the last bits.
func TestPreferredTaintMultiplierUsesFloat32Weights(t *testing.T) {
	mult, sum, _, _ := PreferredTaintMultiplier(RoutingConstraints{PreferredTaints: map[string]float64{"a": 0.85}}, []string{"a"})
	if sum != 0.8500000238418579 {
		t.Errorf("sum %v, want float32(0.85) widened = 0.8500000238418579", sum)
	}
	// glibc's exp(−tanh(0.8500000238418579)), what Dynamo's router computes (python3:
	// math.exp(-math.tanh(0.8500000238418579)) on glibc); Go's math.Exp and
	// math.Tanh give 0.5010399290910779, one ulp below.
	if want := math.Float64frombits(0x3fe00884e3adf67d); mult != want {
		t.Errorf("multiplier %v, want glibc's %v", mult, want)
	}
	if goMath := math.Exp(-math.Tanh(0.8500000238418579)); mult == goMath {
		t.Errorf("multiplier %v equals Go's math.Exp(-math.Tanh(…)); this vector no longer tells glibc from Go", mult)
	}
	if mult == libmExp(-libmTanh(0.85)) {
		t.Errorf("multiplier equals the float64-weight result; the f32 rounding was lost")
	}
}

// TestSharedHitsBeyond mirrors test_shared_cache_hits_from_hits/_beyond.
func TestSharedHitsBeyond(t *testing.T) {
	hits := []SharedHitRange{{5, 8}, {1, 3}}
	for _, tc := range []struct{ depth, want uint32 }{{0, 5}, {2, 4}, {3, 3}, {6, 2}, {8, 0}} {
		if got := SharedHitsBeyond(hits, tc.depth); got != tc.want {
			t.Errorf("hits_beyond(%d) = %d, want %d", tc.depth, got, tc.want)
		}
	}
	if got := SharedHitsBeyond([]SharedHitRange{{0, 4}, {2, 6}, {9, 9}}, 0); got != 6 {
		t.Errorf("overlapping ranges count %d, want 6", got)
	}
}

func TestRequestBlocks(t *testing.T) {
	for _, tc := range []struct{ isl, b, want uint64 }{{0, 16, 0}, {1, 16, 1}, {16, 16, 1}, {17, 16, 2}, {64, 16, 4}, {5, 0, 0}} {
		if got := RequestBlocks(tc.isl, tc.b); got != tc.want {
			t.Errorf("RequestBlocks(%d,%d) = %d, want %d", tc.isl, tc.b, got, tc.want)
		}
	}
}

// TestRawPrefillTokens covers the three raw-token cases, including cached > isl,
// where the legacy operation order gives active + cached.
func TestRawPrefillTokens(t *testing.T) {
	b, _ := ProfileLatest.Behavior()
	w := ResolvedWeights{PrefillLoadScale: 1, TrackPrefillTokens: true}
	for _, tc := range []struct {
		name string
		in   CostInput
		want float64
	}{
		{"has load", CostInput{ISL: 64, BlockSize: 16, HasLoad: true, ActivePrefillTokens: 32, CachedTokens: 16}, 96},
		{"cached beyond isl", CostInput{ISL: 64, BlockSize: 16, HasLoad: true, ActivePrefillTokens: 32, CachedTokens: 100}, 132},
		{"no load", CostInput{ISL: 64, BlockSize: 16, CachedTokens: 100}, 64},
	} {
		if got := CandidateLogit(b, w, tc.in).RawPrefillTokens; got != tc.want {
			t.Errorf("%s: raw %v, want %v", tc.name, got, tc.want)
		}
	}
	w.TrackPrefillTokens = false
	if got := CandidateLogit(b, w, CostInput{ISL: 64, BlockSize: 16, HasLoad: true, ActivePrefillTokens: 5}).RawPrefillTokens; got != 0 {
		t.Errorf("untracked raw %v, want 0", got)
	}
}

// TestDeviceOverlapChoice: the tier device map wins when any tier map is non-empty,
// even for candidates absent from it; otherwise the effective overlap is used.
func TestDeviceOverlapChoice(t *testing.T) {
	w0, w1 := selW(0), selW(1)
	base := Request{ISL: 64, BlockSize: 16, Overlap: OverlapInput{
		EffectiveBlocks: map[WorkerWithDpRank]float64{w0: 3, w1: 2},
		HostBlocks:      map[WorkerWithDpRank]uint64{w0: 1},
	}}
	d := selMustSelect(t, selCfg(nil), BusyThresholds{}, selWorkers(0, 1), base, 0)
	if d.Candidates[0].Terms.DeviceBlocks != 0 || d.Candidates[1].Terms.DeviceBlocks != 0 {
		t.Errorf("with a host map present the device overlap must come from the (empty) device map: %+v", d.Candidates)
	}
	if got := d.Candidates[0].Terms.CreditBlocks; got != 0.75 {
		t.Errorf("host credit %v, want 0.75", got)
	}
	base.Overlap.HostBlocks = nil
	d = selMustSelect(t, selCfg(nil), BusyThresholds{}, selWorkers(0, 1), base, 0)
	if d.Candidates[0].Terms.DeviceBlocks != 3 || d.Candidates[1].Terms.DeviceBlocks != 2 {
		t.Errorf("without tier maps the effective overlap is the device overlap")
	}
}

// TestSharedBeyondUsesRoundedDevice: hits_beyond gets round(device), half away from zero.
func TestSharedBeyondUsesRoundedDevice(t *testing.T) {
	w0 := selW(0)
	req := Request{ISL: 8, BlockSize: 1, Overlap: OverlapInput{
		EffectiveBlocks: map[WorkerWithDpRank]float64{w0: 2.5},
		SharedHits:      []SharedHitRange{{0, 8}},
	}}
	d := selMustSelect(t, selCfg(nil), BusyThresholds{}, selWorkers(0), req, 0)
	if got := d.Candidates[0].Terms.SharedBeyondBlocks; got != 5 {
		t.Errorf("shared beyond %d, want 5 (round(2.5) = 3)", got)
	}
}
