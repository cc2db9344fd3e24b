package routecore

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// selFuzzReader turns fuzz bytes into bounded inputs.
type selFuzzReader struct{ b []byte }

func (r *selFuzzReader) u64() uint64 {
	if len(r.b) < 8 {
		var buf [8]byte
		copy(buf[:], r.b)
		r.b = nil
		return binary.LittleEndian.Uint64(buf[:])
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *selFuzzReader) small(n uint64) uint64 { return r.u64() % n }

// f64 returns arbitrary float bits half of the time (NaN, Inf, huge) and a tame
// value otherwise.
func (r *selFuzzReader) f64() float64 {
	v := r.u64()
	if v&1 == 0 {
		return math.Float64frombits(r.u64())
	}
	return float64(v%1000) / 100
}

// FuzzSelect checks invariants on arbitrary inputs: no panic; errors are typed;
// probabilities are in [0,1] and sum to 1; a T=0 pick is in the tie set at the
// minimum cost; every candidate is reported once in canonical order.
func FuzzSelect(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.5)
	f.Add([]byte("some longer seed input for the selector fuzzer........"), 0.0)
	f.Add(make([]byte, 200), 0.999)
	selWithProcs(f, 3)
	parallelMin := selParallelMin
	f.Fuzz(func(t *testing.T, data []byte, u float64) {
		r := &selFuzzReader{b: data}
		cfg := DefaultKvRouterConfig()
		cfg.OverlapScoreCredit = r.f64()
		cfg.OverlapScoreCreditDecay = r.f64()
		cfg.PrefillLoadScale = r.f64()
		cfg.DecodeActiveRequestWeight = r.f64()
		cfg.SharedCacheMultiplier = float64(r.small(3)) / 2
		if r.small(2) == 0 {
			cfg.RouterTemperature = r.f64()
		}
		cfg.Profile = Profiles()[r.small(3)]
		var th BusyThresholds
		if r.small(2) == 0 {
			th.ActivePrefillTokensThreshold = selU(r.small(200))
		}
		if r.small(2) == 0 {
			th.ActiveDecodeBlocksThreshold = selF(float64(r.small(11)) / 10)
		}
		n := int(r.small(6))
		workers := make([]Worker, n)
		req := Request{ISL: int(r.small(300)), BlockSize: int(r.small(33)),
			Overlap: OverlapInput{
				DeviceBlocks:    map[WorkerWithDpRank]uint64{},
				EffectiveBlocks: map[WorkerWithDpRank]float64{},
				CachedTokens:    map[WorkerWithDpRank]uint64{},
			},
			AdditionalBlocksRule: AdditionalBlocksRule([]string{"", "all-new"}[r.small(2)]),
		}
		if r.small(3) == 0 {
			req.Overlap.SharedHits = []SharedHitRange{{uint32(r.small(8)), uint32(r.small(16))}}
		}
		if r.small(3) == 0 {
			req.Constraints.PreferredTaints = map[string]float64{"a": r.f64()}
		}
		if r.small(4) == 0 {
			req.Constraints.RequiredTaints = []string{"a"}
		}
		for i := range workers {
			w := Worker{ID: WorkerID(r.small(8)), Fenced: r.small(8) == 0, WorkerType: []string{"", "prefill", "decode"}[r.small(3)],
				Runtime: RuntimeConfig{DataParallelStartRank: uint32(r.small(3)), DataParallelSize: uint32(r.small(3)), TotalKvBlocks: selU(r.small(100))}}
			if r.small(2) == 0 {
				w.Runtime.Taints = []string{"a"}
			}
			start, end, _ := eligDpRange(w.Runtime)
			w.Loads = map[uint32]RankLoad{}
			for rank := start; rank < end; rank++ {
				c := WorkerWithDpRank{w.ID, uint32(rank)}
				if r.small(2) == 0 {
					w.Loads[uint32(rank)] = RankLoad{ActivePrefillTokens: r.small(500), ActiveDecodeBlocks: r.small(100), ActiveRequests: r.small(10)}
				}
				if r.small(2) == 0 {
					req.Overlap.DeviceBlocks[c] = r.small(10)
				}
				if r.small(2) == 0 {
					req.Overlap.EffectiveBlocks[c] = r.f64()
				}
				req.Overlap.CachedTokens[c] = r.small(400)
			}
			workers[i] = w
		}
		d, err := SelectWithDraw(cfg, th, workers, req, u)
		// Split into parts even for this handful of candidates, selection must
		// give the same decision bit for bit.
		selParallelMin = 2
		pd, perr := SelectWithDraw(cfg, th, workers, req, u)
		selParallelMin = parallelMin
		selSameDecision(t, "parts", pd, d, perr, err)
		if err != nil {
			known := []error{ErrNoEndpoints, ErrAllEligibleWorkersOverloaded, ErrPinnedWorkerOverloaded,
				ErrPinnedWorkerNotAllowed, ErrInvalidRequest, ErrInvalidConfig, ErrInvalidOverride}
			for _, k := range known {
				if errors.Is(err, k) {
					if d.ErrorKind == "" {
						t.Fatalf("error %v without ErrorKind", err)
					}
					return
				}
			}
			t.Fatalf("untyped error %v", err)
		}
		for i := 1; i < len(d.Candidates); i++ {
			if !d.Candidates[i-1].Candidate.Less(d.Candidates[i].Candidate) {
				t.Fatalf("candidates out of order at %d", i)
			}
		}
		sum, selectedSeen := 0.0, false
		for _, ev := range d.Candidates {
			p := ev.Probability
			if math.IsNaN(p) || p < 0 || p > 1 {
				t.Fatalf("probability %v for %s", p, ev.Candidate)
			}
			if ev.Scored && (math.IsNaN(ev.Terms.Cost) || math.IsInf(ev.Terms.Cost, 0)) {
				t.Fatalf("non-finite cost reported for %s", ev.Candidate)
			}
			sum += p
			if ev.Candidate == d.Selected {
				selectedSeen = true
				if !ev.Scored {
					t.Fatalf("selected %s was not scored", ev.Candidate)
				}
			}
		}
		if !selectedSeen {
			t.Fatalf("selected %s not among candidates", d.Selected)
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("probabilities sum to %v", sum)
		}
		if d.Temperature == 0 && d.SelectionRule != RulePinned && d.SelectionRule != RuleSessionAffinity {
			inTies := false
			for _, c := range d.TieSet {
				inTies = inTies || c == d.Selected
			}
			if !inTies || d.SelectedCost != d.MinCost {
				t.Fatalf("T=0 pick %s (cost %v) not a minimum-cost tie member (min %v, ties %v)", d.Selected, d.SelectedCost, d.MinCost, d.TieSet)
			}
			for _, ev := range d.Candidates {
				if ev.Scored && ev.Terms.Cost < d.MinCost {
					t.Fatalf("cost %v below the minimum %v", ev.Terms.Cost, d.MinCost)
				}
			}
		}
	})
}

// FuzzSoftmax checks the probability table on arbitrary costs and temperatures.
func FuzzSoftmax(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 0.5, 0.3)
	f.Add(-math.MaxFloat64, math.MaxFloat64, 0.0, 1.0, 0.6)
	f.Fuzz(func(t *testing.T, a, b, c, temp, u float64) {
		i, p, err := SoftmaxSampleIndex([]float64{a, b, c}, temp, u)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		sum := 0.0
		for _, v := range p {
			if math.IsNaN(v) || v < 0 || v > 1 {
				t.Fatalf("probability %v in %v", v, p)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 || i < 0 || i > 2 {
			t.Fatalf("sum %v index %d", sum, i)
		}
	})
}
