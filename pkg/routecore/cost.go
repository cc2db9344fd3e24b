package routecore

import (
	"math"
	"slices"
)

// CostInput is everything the cost formula reads for one candidate. Select builds it
// from a Worker and a Request; the disaggregation flow and tests may fill it directly.
type CostInput struct {
	// ISL is the prompt length in tokens; BlockSize the KV block size (> 0).
	ISL       uint64
	BlockSize uint64
	// RequestBlocks is ceil(ISL/BlockSize).
	RequestBlocks uint64
	// MinActivePrefillTokens is the decay floor (see Decision.MinActivePrefillTokens).
	MinActivePrefillTokens uint64
	// WorkerType is the router's worker type; "decode" enables the decode branch.
	WorkerType string
	// HasLoad is whether the candidate has a load projection.
	HasLoad                bool
	ActivePrefillTokens    uint64
	ActiveDecodeBlocks     uint64
	AdditionalActiveBlocks uint64
	ActiveRequests         uint64
	// EffectiveBlocks, DeviceBlocks, HostBlocks, DiskBlocks and CachedTokens are the
	// cache evidence after the device-choice rule (see OverlapInput).
	EffectiveBlocks float64
	DeviceBlocks    float64
	HostBlocks      float64
	DiskBlocks      float64
	CachedTokens    uint64
	// SharedBeyondBlocks is the shared-cache hits at or beyond round(DeviceBlocks).
	SharedBeyondBlocks uint32
}

// RequestBlocks is ceil(isl/blockSize) (SchedulingRequest::request_blocks).
func RequestBlocks(isl, blockSize uint64) uint64 {
	if blockSize == 0 {
		return 0
	}
	return isl/blockSize + min(isl%blockSize, 1)
}

// CandidateLogit computes a candidate's cost before the preferred-taint multiplier,
// mirroring DefaultWorkerScorer::worker_logit (scheduling/selector/default.rs) and the
// row construction in WorkerSelectionInput::row (selector/mod.rs):
//
//  1. decay = 1/(1 + decay_rate·norm) with norm = ((active − min)⁺/B)/request_blocks,
//     only when prefill tracking is on and the decay rate is > 0; else 1;
//  2. credit_blocks = credit·decay·device + host_w·host + disk_w·disk + shared_mult·shared;
//  3. request_cost = req_w·active_requests;
//  4. decode workers with tracking off and credit > 0 (ProfileBehavior.DecodeOverlapBranch):
//     logit = max(0, decode_blocks − credit_blocks) + request_cost;
//  5. otherwise raw tokens = 0 (tracking off), active + (isl − min(cached, isl)) + cached
//     (has load), or isl (no load); adjusted = raw/B − credit_blocks, clamped at 0 when
//     the profile clamps; logit = scale·adjusted + decode_blocks + request_cost.
//
// The returned terms have Multiplier 1 and Cost equal to Logit.
func CandidateLogit(b ProfileBehavior, w ResolvedWeights, in CostInput) CostTerms {
	var t CostTerms
	candidateLogitInto(&b, &w, &in, &t)
	return t
}

// candidateLogitInto is CandidateLogit writing into t, to avoid copying the terms
// when scoring many candidates.
func candidateLogitInto(b *ProfileBehavior, w *ResolvedWeights, in *CostInput, t *CostTerms) {
	*t = CostTerms{
		HasLoad:                in.HasLoad,
		ActivePrefillTokens:    in.ActivePrefillTokens,
		EffectiveBlocks:        in.EffectiveBlocks,
		DeviceBlocks:           in.DeviceBlocks,
		HostBlocks:             in.HostBlocks,
		DiskBlocks:             in.DiskBlocks,
		SharedBeyondBlocks:     in.SharedBeyondBlocks,
		CachedTokens:           in.CachedTokens,
		AdditionalActiveBlocks: in.AdditionalActiveBlocks,
		ActiveRequests:         in.ActiveRequests,
	}
	k := selCostConsts{b: b, w: w, isl: in.ISL, blockSize: in.BlockSize, requestBlocks: in.RequestBlocks,
		floor: in.MinActivePrefillTokens}
	k.init()
	k.terms(in.WorkerType, in.ActiveDecodeBlocks, k.decayFactor(in.ActivePrefillTokens), t)
}

// selCostConsts is the per-request part of the cost formula, resolved once per
// selection rather than once per candidate.
type selCostConsts struct {
	b                                    *ProfileBehavior
	w                                    *ResolvedWeights
	isl, blockSize, requestBlocks, floor uint64

	decay        bool    // prefill tracking on and decay rate > 0
	decodeBranch bool    // the decode-overlap formula applies to decode workers
	fBlock       float64 // float64(blockSize)
	fReqBlocks   float64 // float64 of the decay's request-block divisor
}

func (k *selCostConsts) init() {
	w := k.w
	k.decay = w.TrackPrefillTokens && w.OverlapScoreCreditDecay > 0
	k.decodeBranch = k.b.DecodeOverlapBranch && !w.TrackPrefillTokens && w.OverlapScoreCredit > 0
	k.fBlock = float64(k.blockSize)
	reqBlocks := k.requestBlocks
	if k.b.RequestBlocksAtLeastOne {
		reqBlocks = max(reqBlocks, 1)
	}
	k.fReqBlocks = float64(reqBlocks)
}

// decayFactor is 1/(1+decay·norm) for a candidate with ap active prefill tokens,
// or 1 when decay is off.
func (k *selCostConsts) decayFactor(ap uint64) float64 {
	if !k.decay {
		return 1
	}
	excess := float64(costSatSub(ap, k.floor)) / k.fBlock
	norm := excess / k.fReqBlocks
	return 1.0 / (1.0 + float64(k.w.OverlapScoreCreditDecay*norm))
}

// terms fills the formula's outputs in t from the inputs already in t (HasLoad,
// ActivePrefillTokens, EffectiveBlocks, DeviceBlocks, HostBlocks, DiskBlocks,
// SharedBeyondBlocks, CachedTokens, AdditionalActiveBlocks, ActiveRequests),
// activeDecode and the decay factor (decayFactor of ActivePrefillTokens). Cost is
// set to Logit; the multiplier fields are left as they are, except that Multiplier
// becomes 1 when HasMultiplier is false. Every other output is written, zero when
// the formula does not use it, so t may hold an earlier candidate's terms. Every
// operation is the one CandidateLogit documents, in the same order, so results
// are bit-identical.
func (k *selCostConsts) terms(workerType string, activeDecode uint64, decay float64, t *CostTerms) {
	w := k.w
	if !t.HasMultiplier {
		t.Multiplier = 1
	}
	// Every product is rounded on its own (float64(…)), as in Rust, which never
	// fuses a multiply and an add; Go may fuse them on arm64 unless told not to.
	sharedCredit := float64(w.SharedCacheMultiplier * float64(t.SharedBeyondBlocks))
	t.DecayFactor = decay
	effCredit := float64(w.OverlapScoreCredit * decay)
	t.CreditBlocks = float64(effCredit*t.DeviceBlocks) + float64(w.HostCacheHitWeight*t.HostBlocks) +
		float64(w.DiskCacheHitWeight*t.DiskBlocks) + sharedCredit
	t.DecodeBlocks = float64(costSatAdd(activeDecode, t.AdditionalActiveBlocks))
	t.RequestCost = float64(w.DecodeActiveRequestWeight * float64(t.ActiveRequests))

	if k.decodeBranch && workerType == WorkerTypeDecode {
		t.Formula = "decode-overlap"
		t.RawPrefillTokens, t.RawPrefillBlocks, t.AdjustedPrefillBlocks, t.PrefillCost = 0, 0, 0, 0
		t.Logit = max(t.DecodeBlocks-t.CreditBlocks, 0) + t.RequestCost // builtin max = math.Max here
		t.Cost = t.Logit
		return
	}
	t.Formula = "prefill"
	var raw uint64
	switch {
	case !w.TrackPrefillTokens:
		raw = 0
	case t.HasLoad:
		uncached := costSatSub(k.isl, t.CachedTokens)
		raw = costSatAdd(costSatAdd(t.ActivePrefillTokens, uncached), t.CachedTokens)
	default:
		raw = k.isl
	}
	t.RawPrefillTokens = float64(raw)
	t.RawPrefillBlocks = t.RawPrefillTokens / k.fBlock
	t.AdjustedPrefillBlocks = t.RawPrefillBlocks - t.CreditBlocks
	if k.b.ClampAdjustedPrefill {
		t.AdjustedPrefillBlocks = max(t.AdjustedPrefillBlocks, 0)
	}
	t.PrefillCost = float64(w.PrefillLoadScale * t.AdjustedPrefillBlocks)
	t.Logit = t.PrefillCost + t.DecodeBlocks + t.RequestCost
	t.Cost = t.Logit
}

// PreferredTaintMultiplier mirrors RoutingConstraints::preferred_taint_multiplier
// (lib/kv-router/src/protocols.rs). Dynamo stores preferred weights as f32, widens
// each matching weight to f64, sums in f64 and returns exp(−tanh(sum)) in f64; this
// port rounds every weight through float32 first to reproduce that bit for bit.
// The sum runs over matched taints in sorted order (Dynamo's HashMap order is
// random, so with three or more matches Dynamo itself can differ in the last bit).
// ok is false when the request has no preferred taints: then no multiplier applies,
// not even 1. workerTaints must be sorted.
func PreferredTaintMultiplier(c RoutingConstraints, workerTaints []string) (mult, sum float64, matched []string, ok bool) {
	if len(c.PreferredTaints) == 0 {
		return 1, 0, nil, false
	}
	for _, name := range c.SortedPreferred() {
		if _, found := slices.BinarySearch(workerTaints, name); found {
			matched = append(matched, name)
			sum += float64(float32(c.PreferredTaints[name]))
		}
	}
	return libmExp(-libmTanh(sum)), sum, matched, true
}

// SharedHitsBeyond counts shared-cache hit positions >= depth
// (SharedCacheHits::hits_beyond). Overlapping ranges count each position once.
func SharedHitsBeyond(hits []SharedHitRange, depth uint32) uint32 {
	return costHitsBeyondMerged(costMergeHitRanges(hits), depth)
}

// costMergeHitRanges sorts and merges ranges, dropping empty ones.
func costMergeHitRanges(hits []SharedHitRange) []SharedHitRange {
	rs := make([]SharedHitRange, 0, len(hits))
	for _, h := range hits {
		if h.End > h.Start {
			rs = append(rs, h)
		}
	}
	slices.SortFunc(rs, func(a, b SharedHitRange) int {
		if a.Start != b.Start {
			return int(int64(a.Start) - int64(b.Start))
		}
		return int(int64(a.End) - int64(b.End))
	})
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}

func costHitsBeyondMerged(merged []SharedHitRange, depth uint32) uint32 {
	var n uint32
	for _, r := range merged {
		if r.End <= depth {
			continue
		}
		n += r.End - max(r.Start, depth)
	}
	return n
}

// costDeviceDepth converts the device overlap to the integer prefix depth hits_beyond
// expects: round half away from zero, floored at 0, saturating like Rust's `as u32`.
func costDeviceDepth(device float64) uint32 {
	d := max(math.Round(device), 0) // builtin max = math.Max (NaN and ±0 included)
	if d >= math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(d)
}

func costSatSub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func costSatAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}
