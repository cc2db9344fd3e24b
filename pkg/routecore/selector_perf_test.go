package routecore

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// refGen builds random selection inputs that exercise every branch of Select:
// multi-rank workers, unsorted and duplicate ids, fencing, allow-lists, pins,
// affinity, required and preferred taints, topology taints, thresholds, overrides,
// every overlap map (sparse, full, empty-but-non-nil), shared hits, odd floats.
type refGen struct{ r *rand.Rand }

func (g refGen) n(k int) int { return g.r.IntN(k) }

func (g refGen) chance(p float64) bool { return g.r.Float64() < p }

func (g refGen) f64() float64 {
	switch g.n(12) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return 0
	case 3:
		return float64(g.n(4))
	case 4:
		return math.MaxFloat64 / 2
	}
	return float64(g.n(1000)) / 100
}

func (g refGen) weight() float64 { // mostly valid config weights
	if g.chance(0.05) {
		return g.f64()
	}
	return float64(g.n(300)) / 100
}

func (g refGen) u64(limit int) uint64 {
	if g.chance(0.01) {
		return math.MaxUint64 - uint64(g.n(3))
	}
	return uint64(g.n(limit))
}

var refTaintNames = []string{"a", "b", "c", "gpu=h100", TopologyTaint("zone", "z1"), TopologyTaint("rack", "r2")}

func (g refGen) taints() []string {
	var ts []string
	for _, t := range refTaintNames {
		if g.chance(0.3) {
			ts = append(ts, t)
		}
	}
	return ts
}

func (g refGen) input(maxWorkers int) (KvRouterConfig, BusyThresholds, []Worker, Request, float64) {
	cfg := DefaultKvRouterConfig()
	cfg.Profile = Profiles()[g.n(3)]
	cfg.OverlapScoreCredit = float64(g.n(11)) / 10
	if g.chance(0.2) {
		cfg.OverlapScoreCredit = g.weight()
	}
	cfg.OverlapScoreCreditDecay = []float64{0, 0, 1, 0.5, 2}[g.n(5)]
	cfg.PrefillLoadScale = g.weight()
	cfg.DecodeActiveRequestWeight = g.weight()
	cfg.SharedCacheMultiplier = float64(g.n(3)) / 2
	cfg.HostCacheHitWeight = float64(g.n(3)) / 2
	cfg.DiskCacheHitWeight = float64(g.n(3)) / 4
	cfg.RouterTrackPrefillTokens = g.chance(0.8)
	cfg.RouterAssumeKvReuse = g.chance(0.5)
	if g.chance(0.5) {
		cfg.RouterTemperature = []float64{0.1, 0.5, 1, 2, 1e-300, 1e300}[g.n(6)]
	}
	var th BusyThresholds
	if g.chance(0.2) {
		v := uint64(g.n(800))
		th.ActivePrefillTokensThreshold = &v
	}
	if g.chance(0.2) {
		v := float64(g.n(11)) / 10
		th.ActiveDecodeBlocksThreshold = &v
	}
	if g.chance(0.2) {
		v := float64(g.n(5)) / 100000
		th.ActivePrefillTokensThresholdFrac = &v
	}
	n := g.n(maxWorkers + 1)
	if n == 0 && g.chance(0.8) {
		n = 1
	}
	ws := make([]Worker, n)
	req := Request{ISL: 1 + g.n(600), BlockSize: 1 + g.n(32)}
	if g.chance(0.02) {
		req.ISL = 0
	}
	if g.chance(0.02) {
		req.BlockSize = 0
	}
	ov := &req.Overlap
	mk := g.chance
	if mk(0.6) {
		ov.DeviceBlocks = map[WorkerWithDpRank]uint64{}
	}
	if mk(0.3) {
		ov.HostBlocks = map[WorkerWithDpRank]uint64{}
	}
	if mk(0.3) {
		ov.DiskBlocks = map[WorkerWithDpRank]uint64{}
	}
	if mk(0.5) {
		ov.EffectiveBlocks = map[WorkerWithDpRank]float64{}
	}
	if mk(0.6) {
		ov.CachedTokens = map[WorkerWithDpRank]uint64{}
	}
	if mk(0.3) {
		ov.TreeSizes = map[WorkerWithDpRank]uint64{}
	}
	if mk(0.4) {
		req.AdditionalActiveBlocks = map[WorkerWithDpRank]uint64{}
	}
	if mk(0.5) {
		req.AdditionalBlocksRule = AdditionalBlocksAllNew
	}
	if mk(0.3) {
		ov.SharedHits = []SharedHitRange{}
		for range g.n(4) {
			s := uint32(g.n(40))
			ov.SharedHits = append(ov.SharedHits, SharedHitRange{Start: s, End: s + uint32(g.n(20)) - 3})
		}
	}
	density := []float64{0, 0.1, 0.5, 1}[g.n(4)]
	dense := func() bool { return g.chance(density) }
	var all []WorkerWithDpRank
	idSpace := 4 * (maxWorkers + 1)
	ids := g.r.Perm(idSpace)
	for i := range ws {
		id := WorkerID(ids[i])
		if g.chance(0.01) {
			id = WorkerID(g.n(idSpace)) // maybe a duplicate
		}
		w := Worker{ID: id, Name: []string{"", "pod-a", "pod-b"}[g.n(3)],
			WorkerType: []string{"", WorkerTypePrefill, WorkerTypeDecode, WorkerTypeAggregated}[g.n(4)],
			Fenced:     g.chance(0.05)}
		if g.chance(0.05) {
			w.ID = WorkerID(math.MaxUint64 - uint64(g.n(3)))
		}
		rt := &w.Runtime
		if g.chance(0.3) {
			rt.DataParallelSize = uint32(g.n(4))
			rt.DataParallelStartRank = uint32(g.n(3))
		}
		if g.chance(0.003) {
			rt.DataParallelStartRank = math.MaxUint32
			rt.DataParallelSize = 2
		}
		if g.chance(0.5) {
			v := uint64(g.n(200))
			rt.TotalKvBlocks = &v
		}
		if g.chance(0.2) {
			v := uint64(g.n(20000000))
			rt.MaxNumBatchedTokens = &v
		}
		rt.Taints = g.taints()
		if g.chance(0.2) {
			rt.TopologyDomains = map[string]string{"zone": []string{"z1", "z2", " "}[g.n(3)], "rack": "r2"}
		}
		start, end := rt.DpRange()
		if g.chance(0.9) {
			w.Loads = map[uint32]RankLoad{}
		}
		for rank := uint64(start); rank < uint64(end)+uint64(g.n(2)) && rank <= math.MaxUint32; rank++ {
			c := WorkerWithDpRank{WorkerID: w.ID, DpRank: uint32(rank)}
			all = append(all, c)
			if w.Loads != nil && g.chance(0.85) {
				l := RankLoad{ActivePrefillTokens: g.u64(600), ActiveDecodeBlocks: g.u64(300), ActiveRequests: g.u64(20)}
				if g.chance(0.3) {
					v := uint64(g.n(300))
					l.KvUsedBlocks = &v
				}
				if g.chance(0.1) {
					v := g.chance(0.5)
					l.DecodeOverloadLatched = &v
				}
				w.Loads[uint32(rank)] = l
			}
		}
		ws[i] = w
	}
	// Overlap entries for candidates, plus some for unknown candidates.
	for k := range g.n(3) {
		all = append(all, WorkerWithDpRank{WorkerID: WorkerID(idSpace + k), DpRank: uint32(g.n(2))})
	}
	for _, c := range all {
		if ov.DeviceBlocks != nil && dense() {
			ov.DeviceBlocks[c] = g.u64(40)
		}
		if ov.HostBlocks != nil && dense() {
			ov.HostBlocks[c] = g.u64(40)
		}
		if ov.DiskBlocks != nil && dense() {
			ov.DiskBlocks[c] = g.u64(40)
		}
		if ov.EffectiveBlocks != nil && dense() {
			ov.EffectiveBlocks[c] = float64(g.n(4000)) / 100
			if g.chance(0.003) {
				ov.EffectiveBlocks[c] = g.f64()
			}
		}
		if ov.CachedTokens != nil && dense() {
			ov.CachedTokens[c] = g.u64(700)
		}
		if ov.TreeSizes != nil && dense() {
			ov.TreeSizes[c] = uint64(g.n(3))
		}
		if req.AdditionalActiveBlocks != nil && dense() {
			req.AdditionalActiveBlocks[c] = g.u64(40)
		}
	}
	pickC := func() WorkerWithDpRank {
		if len(all) > 0 && g.chance(0.9) {
			return all[g.n(len(all))]
		}
		return WorkerWithDpRank{WorkerID: WorkerID(g.n(idSpace)), DpRank: uint32(g.n(3))}
	}
	if g.chance(0.2) {
		req.AllowedWorkers = []WorkerID{}
		for range g.n(n + 2) {
			req.AllowedWorkers = append(req.AllowedWorkers, pickC().WorkerID)
		}
	}
	if g.chance(0.1) {
		p := pickC()
		req.Pinned = &p
	}
	if g.chance(0.15) {
		a := pickC()
		req.SessionAffinity = &a
	}
	if g.chance(0.1) {
		req.Constraints.RequiredTaints = g.taints()
		if len(req.Constraints.RequiredTaints) > 1 && g.chance(0.3) {
			// unsorted, with a duplicate
			rt := req.Constraints.RequiredTaints
			rt[0], rt[len(rt)-1] = rt[len(rt)-1], rt[0]
			rt = append(rt, rt[0])
			req.Constraints.RequiredTaints = rt
		}
	}
	if g.chance(0.3) {
		req.Constraints.PreferredTaints = map[string]float64{}
		for _, t := range g.taints() {
			req.Constraints.PreferredTaints[t] = float64(g.n(200))/100 - 0.5
		}
		if g.chance(0.02) {
			req.Constraints.PreferredTaints["b"] = g.f64()
		}
	}
	if g.chance(0.2) {
		v := float64(g.n(3)) / 2
		req.Override.OverlapScoreCredit = &v
	}
	if g.chance(0.1) {
		v := float64(g.n(3))
		req.Override.OverlapScoreWeight = &v
	}
	if g.chance(0.1) {
		v := []float64{0, 0.5, -1}[g.n(3)]
		req.Override.RouterTemperature = &v
	}
	if g.chance(0.1) {
		v := g.chance(0.5)
		req.Override.TrackPrefillTokens = &v
	}
	u := g.r.Float64()
	switch g.n(20) {
	case 0:
		u = 0
	case 1:
		u = math.Nextafter(1, 0)
	case 2:
		u = math.NaN()
	case 3:
		u = 1
	}
	return cfg, th, ws, req, u
}

// refEqual is reflect.DeepEqual with NaN equal to NaN.
func refEqual(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return refEqual(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !refEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !refEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

func refSameError(t *testing.T, got, want error) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("error %v, reference %v", got, want)
	}
	if got == nil {
		return
	}
	if got.Error() != want.Error() {
		t.Fatalf("error %q, reference %q", got, want)
	}
	for _, k := range []error{ErrNoEndpoints, ErrAllEligibleWorkersOverloaded, ErrPinnedWorkerOverloaded,
		ErrPinnedWorkerNotAllowed, ErrInvalidRequest, ErrInvalidConfig, ErrInvalidOverride} {
		if errors.Is(got, k) != errors.Is(want, k) {
			t.Fatalf("error %v: errors.Is(%v) differs from the reference", got, k)
		}
	}
	var gp, wp *PinnedWorkerError
	if errors.As(got, &gp) != errors.As(want, &wp) || (gp != nil && *gp != *wp) {
		t.Fatalf("PinnedWorkerError %+v, reference %+v", gp, wp)
	}
}

func refCheckDecision(t *testing.T, got, want Decision) {
	t.Helper()
	if refEqual(reflect.ValueOf(got), reflect.ValueOf(want)) {
		return
	}
	if len(got.Candidates) == len(want.Candidates) {
		for i := range got.Candidates {
			if !refEqual(reflect.ValueOf(got.Candidates[i]), reflect.ValueOf(want.Candidates[i])) {
				t.Fatalf("candidate %d differs:\n got  %+v\n want %+v", i, got.Candidates[i], want.Candidates[i])
			}
		}
	}
	g, w := got, want
	g.Candidates, w.Candidates = nil, nil
	t.Fatalf("decision differs:\n got  %+v\n want %+v", g, w)
}

// TestSelectMatchesReference runs the optimized selector and the frozen reference
// implementation on many random inputs and requires identical decisions, errors
// and draw consumption.
func TestSelectMatchesReference(t *testing.T) {
	iters := hermetic.Size(2000, 20000, 200000)
	g := refGen{r: rand.New(rand.NewPCG(1, 2))}
	defer func(v int) { selOverlapMergeMin = v }(selOverlapMergeMin)
	defer func(v int) { selParallelMin = v }(selParallelMin)
	selWithProcs(t, 3)
	for it := range iters {
		// Every other iteration reads sparse overlap maps by sorted merge even for
		// a handful of candidates, and two iterations in three split every phase
		// into parts (see selParts) even for a handful of candidates.
		selOverlapMergeMin = []int{64, 0}[it%2]
		selParallelMin = []int{selSequential, 2, 5}[it%3]
		maxW := []int{0, 1, 3, 8, 40}[it%5]
		cfg, th, ws, req, u := g.input(maxW)
		d, err := SelectWithDraw(cfg, th, ws, req, u)
		rd, rerr := refSelectWithDraw(cfg, th, ws, req, u)
		refSameError(t, err, rerr)
		refCheckDecision(t, d, rd)

		sr := &ScriptedRand{Draws: []float64{u}}
		rr := &ScriptedRand{Draws: []float64{u}}
		var r1, r2 Rand = sr, rr
		if it%7 == 0 {
			r1, r2 = nil, nil
		}
		d, err = Select(cfg, th, ws, req, r1)
		rd, rerr = refSelect(cfg, th, ws, req, r2)
		refSameError(t, err, rerr)
		refCheckDecision(t, d, rd)
		if sr.Calls != rr.Calls {
			t.Fatalf("iteration %d: %d draws, reference %d", it, sr.Calls, rr.Calls)
		}
	}
}

// TestSelectMatchesReferenceLarge compares on the benchmark inputs and large random
// candidate sets.
func TestSelectMatchesReferenceLarge(t *testing.T) {
	selWithProcs(t, 4) // large inputs split into parts (see selParts)
	defer func(v int) { selParallelMin = v }(selParallelMin)
	ws, req := selBenchInput(10_000)
	parallelMins := []int{selParallelMin, selSequential}
	for _, temp := range []float64{0, 0.5} {
		for _, parallelMin := range parallelMins {
			selParallelMin = parallelMin
			cfg := DefaultKvRouterConfig()
			cfg.RouterTemperature = temp
			cfg.OverlapScoreCreditDecay = 1
			d, err := SelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.5)
			rd, rerr := refSelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.5)
			refSameError(t, err, rerr)
			refCheckDecision(t, d, rd)
		}
	}
	g := refGen{r: rand.New(rand.NewPCG(3, 4))}
	for it := range 40 {
		selParallelMin = []int{256, 4096}[it%2]
		cfg, th, ws, req, u := g.input(3000)
		d, err := SelectWithDraw(cfg, th, ws, req, u)
		rd, rerr := refSelectWithDraw(cfg, th, ws, req, u)
		refSameError(t, err, rerr)
		refCheckDecision(t, d, rd)
	}
}

// TestSelectDecisionsDoNotAlias checks that the per-candidate slices and pointers of
// one decision are independent (mutating one candidate's evidence leaves the others,
// and a second decision, untouched).
func TestSelectDecisionsDoNotAlias(t *testing.T) {
	ws := []Worker{
		{ID: 1, Runtime: RuntimeConfig{Taints: []string{"a", "b"}, DataParallelSize: 2}},
		{ID: 2, Runtime: RuntimeConfig{Taints: []string{"a", "b"}}},
		{ID: 3, Fenced: true, Runtime: RuntimeConfig{DataParallelSize: 2}},
	}
	req := Request{ISL: 32, BlockSize: 16, Constraints: RoutingConstraints{PreferredTaints: map[string]float64{"a": 1, "b": 0.5}}}
	d1 := selMustSelect(t, DefaultKvRouterConfig(), BusyThresholds{}, ws, req, 0.3)
	d2 := selMustSelect(t, DefaultKvRouterConfig(), BusyThresholds{}, ws, req, 0.3)
	d1.Candidates[0].Terms.PreferredMatched[0] = "x"
	d1.Candidates[0].Terms.PreferredMatched = append(d1.Candidates[0].Terms.PreferredMatched, "y")
	d1.Candidates[3].Reason.Text = "x"
	for i, ev := range d1.Candidates[1:3] {
		if ev.Terms.PreferredMatched[0] != "a" || len(ev.Terms.PreferredMatched) != 2 {
			t.Fatalf("candidate %d aliased: %v", i+1, ev.Terms.PreferredMatched)
		}
	}
	if d1.Candidates[4].Reason.Text == "x" || d2.Candidates[3].Reason.Text == "x" || d2.Candidates[0].Terms.PreferredMatched[0] != "a" {
		t.Fatal("evidence aliased between candidates or decisions")
	}
}

// TestSelectorReuseMatchesFreshSelect runs one Selector through a long sequence of
// varied inputs (growing and shrinking candidate counts, errors in between) and
// checks every Decision against a fresh Select and the reference, so memory
// reused from an earlier call can never leak into a later one.
func TestSelectorReuseMatchesFreshSelect(t *testing.T) {
	iters := hermetic.Size(500, 5000, 50000)
	g := refGen{r: rand.New(rand.NewPCG(7, 11))}
	defer func(v int) { selParallelMin = v }(selParallelMin)
	selWithProcs(t, 3)
	var sel Selector
	for it := range iters {
		maxW := []int{40, 1, 8, 0, 3, 40}[it%6]
		// Reused memory is cleared part by part on the parallel path.
		selParallelMin = []int{selSequential, 2, 7, 3}[it%4]
		cfg, th, ws, req, u := g.input(maxW)
		d, err := sel.SelectWithDraw(cfg, th, ws, req, u)
		fd, ferr := SelectWithDraw(cfg, th, ws, req, u)
		refSameError(t, err, ferr)
		refCheckDecision(t, d, fd)
		rd, rerr := refSelectWithDraw(cfg, th, ws, req, u)
		refSameError(t, err, rerr)
		refCheckDecision(t, d, rd)
	}
}
