package routecore

// This file is a frozen copy of the straightforward selector implementation (before
// the performance rewrite), kept only as a test oracle: TestSelectMatchesReference
// checks that the optimized Select returns exactly the same Decision and error.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// selector does (select_worker_with_policy → pick_default_worker in
// scheduling/selector/{mod,default}.rs). It pulls at most one draw from r, and only
// when the outcome is random (a T=0 tie or T>0). The Decision is filled as far as
// possible even when an error is returned, so failures can be explained too.
func refSelect(cfg KvRouterConfig, th BusyThresholds, workers []Worker, req Request, r Rand) (Decision, error) {
	s, err := refNewSelState(cfg, th, workers, req)
	if err != nil {
		return s.decision, err
	}
	if err := s.score(); err != nil {
		return s.decision, err
	}
	if !s.needsDraw() {
		return s.pick(0)
	}
	if r == nil {
		return s.decision, fmt.Errorf("%w: the outcome is random (tie or temperature > 0) but no Rand was supplied", ErrInvalidRequest)
	}
	return s.pick(r.Float64())
}

// refSelectWithDraw is the pure form of refSelect: the uniform draw u in [0,1) is given
// and always recorded (it is ignored when the outcome is not random).
func refSelectWithDraw(cfg KvRouterConfig, th BusyThresholds, workers []Worker, req Request, u float64) (Decision, error) {
	s, err := refNewSelState(cfg, th, workers, req)
	if err != nil {
		return s.decision, err
	}
	if err := s.score(); err != nil {
		return s.decision, err
	}
	return s.pick(u)
}

// refSelErrorKind names a selection error the way Dynamo's KvSchedulerError does.
func refSelErrorKind(err error) string {
	switch {
	case errors.Is(err, ErrPinnedWorkerOverloaded):
		return "PinnedWorkerOverloaded"
	case errors.Is(err, ErrPinnedWorkerNotAllowed):
		return "PinnedWorkerNotAllowed"
	case errors.Is(err, ErrAllEligibleWorkersOverloaded):
		return "AllEligibleWorkersOverloaded"
	case errors.Is(err, ErrNoEndpoints):
		return "NoEndpoints"
	case errors.Is(err, ErrInvalidConfig), errors.Is(err, ErrInvalidOverride):
		return "InvalidConfig"
	}
	return "InvalidRequest"
}

// MaxCandidates bounds the (worker, rank) pairs one selection will enumerate, so a
// corrupt data_parallel_size cannot exhaust memory.

// refSelState is the working state of one refSelect call.
type refSelState struct {
	req      Request
	b        ProfileBehavior
	w        ResolvedWeights
	workers  []Worker // the caller's slice, never modified
	order    []int32  // indices into workers, sorted by worker id
	taints   [][]string
	decision Decision
	// widx is, per candidate, the index of its worker in workers
	widx []int32
	// pinnedIdx and affinityIdx are candidate indices, or -1.
	pinnedIdx, affinityIdx int
	scored                 []int // candidate indices with terms, canonical order
}

func (s *refSelState) fail(err error) error {
	s.decision.ErrorKind = refSelErrorKind(err)
	return err
}

func refSelInvalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, args...))
}

// refNewSelState validates the inputs, enumerates every candidate in canonical order
// and applies eligibility and the pinned-worker checks.
func refNewSelState(cfg KvRouterConfig, th BusyThresholds, workers []Worker, req Request) (*refSelState, error) {
	s := &refSelState{req: req, pinnedIdx: -1, affinityIdx: -1}
	if err := s.validate(cfg, th, workers); err != nil {
		err = s.fail(err)
		return s, err
	}
	s.enumerate(th)
	if err := s.applyPinned(); err != nil {
		err = s.fail(err)
		return s, err
	}
	return s, nil
}

func (s *refSelState) validate(cfg KvRouterConfig, th BusyThresholds, workers []Worker) error {
	b, err := cfg.Profile.Behavior()
	if err != nil {
		return err
	}
	s.b = b
	s.decision.Profile = b
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := th.Validate(); err != nil {
		return err
	}
	req := s.req
	if err := req.Override.Validate(cfg.Profile); err != nil {
		return err
	}
	s.w = req.Override.Resolve(cfg)
	s.decision.Weights = s.w
	s.decision.Temperature = s.w.Temperature
	if req.ISL <= 0 {
		return refSelInvalidf("isl must be > 0 tokens, got %d (Dynamo asserts a non-empty prompt)", req.ISL)
	}
	if req.BlockSize <= 0 {
		return refSelInvalidf("block size must be > 0 tokens, got %d", req.BlockSize)
	}
	s.decision.RequestBlocks = RequestBlocks(uint64(req.ISL), uint64(req.BlockSize))
	for _, name := range req.Constraints.SortedPreferred() {
		if v := req.Constraints.PreferredTaints[name]; math.IsNaN(v) || math.IsInf(v, 0) {
			return refSelInvalidf("preferred taint %q has weight %v; weights must be finite", name, v)
		}
	}
	for _, k := range refSelSortedKeys(req.Overlap.EffectiveBlocks) {
		if v := req.Overlap.EffectiveBlocks[k]; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return refSelInvalidf("effective overlap blocks for %s is %v; it must be finite and >= 0", k, v)
		}
	}
	s.workers = workers
	s.order = make([]int32, len(workers))
	sorted := true
	for i := range workers {
		s.order[i] = int32(i)
		sorted = sorted && (i == 0 || workers[i-1].ID <= workers[i].ID)
	}
	if !sorted {
		slices.SortFunc(s.order, func(a, b int32) int {
			switch ia, ib := workers[a].ID, workers[b].ID; {
			case ia < ib:
				return -1
			case ia > ib:
				return 1
			}
			return 0
		})
	}
	total := 0
	for k, i := range s.order {
		w := &workers[i]
		if k > 0 && workers[s.order[k-1]].ID == w.ID {
			return refSelInvalidf("worker %s is listed twice", w.ID)
		}
		start, end, ok := refEligDpRange(w.Runtime)
		if !ok {
			return refSelInvalidf("worker %s: data_parallel_start_rank %d + data_parallel_size %d overflows a u32 rank",
				w.ID, w.Runtime.DataParallelStartRank, w.Runtime.DataParallelSize)
		}
		total += int(end - start)
		if total > MaxCandidates {
			return refSelInvalidf("more than %d (worker, dp rank) candidates; check data_parallel_size", MaxCandidates)
		}
	}
	s.decision.Candidates = make([]CandidateEvidence, 0, total)
	s.widx = make([]int32, 0, total)
	return nil
}

func refSelSortedKeys[V any](m map[WorkerWithDpRank]V) []WorkerWithDpRank {
	keys := make([]WorkerWithDpRank, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, WorkerWithDpRank.Compare)
	return keys
}

// enumerate lists every (worker, rank) in canonical order with its eligibility.
func (s *refSelState) enumerate(th BusyThresholds) {
	req := s.req
	var allowed map[WorkerID]struct{}
	if req.AllowedWorkers != nil {
		allowed = make(map[WorkerID]struct{}, len(req.AllowedWorkers))
		for _, id := range req.AllowedWorkers {
			allowed[id] = struct{}{}
		}
	}
	required := slices.Clone(req.Constraints.RequiredTaints)
	slices.Sort(required)
	required = slices.Compact(required)
	needTaints := len(required) > 0 || len(req.Constraints.PreferredTaints) > 0
	s.taints = make([][]string, len(s.workers))
	checkOverload := th.IsConfigured()
	for _, i := range s.order {
		w := &s.workers[i]
		if needTaints {
			s.taints[i] = w.Runtime.EffectiveTaints()
		}
		_, ok := allowed[w.ID]
		isAllowed := allowed == nil || ok
		var overload OverloadReport
		if checkOverload && isAllowed && !w.Fenced {
			overload = refWorkerOverload(th, *w)
		}
		start, end, _ := refEligDpRange(w.Runtime)
		for rank := start; rank < end; rank++ {
			reason := refEligCheckCandidate(w, uint32(rank), isAllowed, s.taints[i], required, &overload)
			s.decision.Candidates = append(s.decision.Candidates, CandidateEvidence{
				Candidate:  WorkerWithDpRank{WorkerID: w.ID, DpRank: uint32(rank)},
				WorkerName: w.Name,
				WorkerType: w.WorkerType,
				Eligible:   reason == nil,
				Reason:     reason,
			})
			s.widx = append(s.widx, i)
		}
	}
}

// candidateIndex finds a candidate by binary search over the canonical order.
func (s *refSelState) candidateIndex(c WorkerWithDpRank) int {
	i, found := slices.BinarySearchFunc(s.decision.Candidates, c, func(e CandidateEvidence, t WorkerWithDpRank) int {
		return e.Candidate.Compare(t)
	})
	if !found {
		return -1
	}
	return i
}

// applyPinned mirrors the start of select_worker_with_policy: a pinned worker outside
// the allow-list is PinnedWorkerNotAllowed; an overloaded one PinnedWorkerOverloaded
// (never rerouted); any other failure (fenced, unknown, rank out of range, taints)
// is NoEndpoints. It also resolves the session-affinity candidate.
func (s *refSelState) applyPinned() error {
	req := s.req
	if p := req.Pinned; p != nil {
		if req.AllowedWorkers != nil && !slices.Contains(req.AllowedWorkers, p.WorkerID) {
			return &PinnedWorkerError{Kind: ErrPinnedWorkerNotAllowed, WorkerID: p.WorkerID}
		}
		idx := s.candidateIndex(*p)
		if idx < 0 {
			return fmt.Errorf("%w: pinned worker %s is unavailable or has no dp rank %d", ErrNoEndpoints, p.WorkerID, p.DpRank)
		}
		if r := s.decision.Candidates[idx].Reason; r != nil {
			if r.Code == ReasonWorkerOverloaded {
				return &PinnedWorkerError{Kind: ErrPinnedWorkerOverloaded, WorkerID: p.WorkerID}
			}
			return fmt.Errorf("%w: pinned worker %s: %s", ErrNoEndpoints, p.WorkerID, r.Full())
		}
		s.pinnedIdx = idx
		return nil
	}
	if a := req.SessionAffinity; a != nil {
		if idx := s.candidateIndex(*a); idx >= 0 && s.decision.Candidates[idx].Eligible {
			s.affinityIdx = idx
		}
	}
	return nil
}

// score computes the decay floor and the cost terms of every scored candidate.
func (s *refSelState) score() error {
	d := &s.decision
	if s.w.TrackPrefillTokens && s.w.OverlapScoreCreditDecay > 0 {
		d.MinActivePrefillComputed = true
		first := true
		for i := range d.Candidates {
			if !s.visits(i) {
				continue
			}
			ap := s.rankLoad(i).ActivePrefillTokens
			if first || ap < d.MinActivePrefillTokens {
				d.MinActivePrefillTokens = ap
				first = false
			}
		}
	}
	ov := s.req.Overlap
	hasTier := len(ov.DeviceBlocks) > 0 || len(ov.HostBlocks) > 0 || len(ov.DiskBlocks) > 0
	merged := refCostMergeHitRanges(ov.SharedHits)
	in := CostInput{
		ISL:                    uint64(s.req.ISL),
		BlockSize:              uint64(s.req.BlockSize),
		RequestBlocks:          d.RequestBlocks,
		MinActivePrefillTokens: d.MinActivePrefillTokens,
	}
	fullBlocks := uint64(s.req.ISL) / uint64(s.req.BlockSize)
	s.scored = make([]int, 0, len(d.Candidates))
	for i := range d.Candidates {
		if !s.visits(i) {
			continue
		}
		ev := &d.Candidates[i]
		c := ev.Candidate
		w := &s.workers[s.widx[i]]
		load, hasLoad := w.Loads[c.DpRank]
		in.WorkerType = w.WorkerType
		in.HasLoad = hasLoad
		in.ActivePrefillTokens = load.ActivePrefillTokens
		in.ActiveDecodeBlocks = load.ActiveDecodeBlocks
		in.ActiveRequests = load.ActiveRequests
		add, ok := s.req.AdditionalActiveBlocks[c]
		if !ok && s.req.AdditionalBlocksRule == AdditionalBlocksAllNew {
			add = fullBlocks
		}
		in.AdditionalActiveBlocks = add
		in.EffectiveBlocks = ov.EffectiveBlocks[c]
		if dev, ok := ov.DeviceBlocks[c]; ok {
			in.DeviceBlocks = float64(dev)
		} else if hasTier {
			in.DeviceBlocks = 0
		} else {
			in.DeviceBlocks = in.EffectiveBlocks
		}
		in.HostBlocks = float64(ov.HostBlocks[c])
		in.DiskBlocks = float64(ov.DiskBlocks[c])
		in.CachedTokens = ov.CachedTokens[c]
		in.SharedBeyondBlocks = 0
		if ov.SharedHits != nil {
			in.SharedBeyondBlocks = refCostHitsBeyondMerged(merged, refCostDeviceDepth(in.DeviceBlocks))
		}
		t := &ev.Terms
		refCandidateLogitInto(&s.b, &s.w, &in, t)
		if i != s.pinnedIdx {
			mult, sum, matched, ok := refPreferredTaintMultiplier(s.req.Constraints, s.taints[s.widx[i]])
			if ok {
				t.HasMultiplier, t.Multiplier, t.PreferredWeightSum, t.PreferredMatched = true, mult, sum, matched
				t.Cost = t.Logit * mult
			}
		}
		if math.IsNaN(t.Cost) || math.IsInf(t.Cost, 0) {
			return s.fail(refSelInvalidf("cost for candidate %s is %v; the inputs overflow float64", c, t.Cost))
		}
		ev.Scored = true
		s.scored = append(s.scored, i)
	}
	if len(s.scored) == 0 {
		return s.fail(s.noCandidateError())
	}
	return nil
}

// visits reports whether candidate i takes part in scoring: only the pinned one when
// a worker is pinned (for_each_eligible_worker_rank), else every eligible one.
func (s *refSelState) visits(i int) bool {
	if s.pinnedIdx >= 0 {
		return i == s.pinnedIdx
	}
	return s.decision.Candidates[i].Eligible
}

func (s *refSelState) rankLoad(i int) RankLoad {
	return s.workers[s.widx[i]].Loads[s.decision.Candidates[i].Candidate.DpRank]
}

// noCandidateError distinguishes "only overload blocks routing" from "nothing fits"
// (has_eligible_worker_ignoring_overload).
func (s *refSelState) noCandidateError() error {
	for _, ev := range s.decision.Candidates {
		if ev.Reason != nil && ev.Reason.Code == ReasonWorkerOverloaded {
			return ErrAllEligibleWorkersOverloaded
		}
	}
	return ErrNoEndpoints
}

// needsDraw reports whether the pick is random: a T=0 tie or T>0 with more than
// one candidate.
func (s *refSelState) needsDraw() bool {
	if s.pinnedIdx >= 0 || s.affinityIdx >= 0 {
		return false
	}
	if s.w.Temperature != 0 {
		return len(s.scored) > 1
	}
	return len(s.tieSet()) > 1
}

// tieSet returns the candidate indices at the minimum cost, narrowed by tree size
// under ProfileLegacyTreeSize.
func (s *refSelState) tieSet() []int {
	d := &s.decision
	costs := make([]float64, len(s.scored))
	for k, i := range s.scored {
		costs[k] = d.Candidates[i].Terms.Cost
	}
	minCost, ties := refMinimumCostTies(costs)
	d.MinCost = minCost
	out := make([]int, len(ties))
	for k, t := range ties {
		out[k] = s.scored[t]
	}
	if s.b.TieBreak == TieSmallestTreeThenRandom && len(out) > 1 {
		best := uint64(math.MaxUint64)
		for _, i := range out {
			best = min(best, s.req.Overlap.TreeSizes[d.Candidates[i].Candidate])
		}
		narrowed := out[:0]
		for _, i := range out {
			if s.req.Overlap.TreeSizes[d.Candidates[i].Candidate] == best {
				narrowed = append(narrowed, i)
			}
		}
		out = narrowed
	}
	return out
}

// pick applies the selection rule with draw u.
func (s *refSelState) pick(u float64) (Decision, error) {
	d := &s.decision
	if err := refSampleCheckDraw(u); err != nil {
		return *d, s.fail(err)
	}
	d.Draw = u
	set := func(i int, rule SelectionRule, cost float64) (Decision, error) {
		d.Selected = d.Candidates[i].Candidate
		d.SelectionRule = rule
		d.SelectedCost = cost
		return *d, nil
	}
	if s.pinnedIdx >= 0 {
		ev := &d.Candidates[s.pinnedIdx]
		d.MinCost = ev.Terms.Cost
		ev.Probability = 1
		return set(s.pinnedIdx, RulePinned, ev.Terms.Logit)
	}
	if s.affinityIdx >= 0 {
		s.tieSet() // fills MinCost for the evidence
		ev := &d.Candidates[s.affinityIdx]
		ev.Probability = 1
		return set(s.affinityIdx, RuleSessionAffinity, ev.Terms.Logit)
	}
	if s.w.Temperature == 0 {
		ties := s.tieSet()
		for _, i := range ties {
			d.TieSet = append(d.TieSet, d.Candidates[i].Candidate)
			d.Candidates[i].InTieSet = true
			d.Candidates[i].Probability = 1 / float64(len(ties))
		}
		if len(ties) == 1 {
			rule := RuleMinimumCost
			if s.b.TieBreak == TieSmallestTreeThenRandom && d.MinCost == d.Candidates[ties[0]].Terms.Cost && s.minCostCount() > 1 {
				rule = RuleMinimumCostTieTreeSize
			}
			return set(ties[0], rule, d.Candidates[ties[0]].Terms.Cost)
		}
		d.DrawUsed = true
		rule := RuleMinimumCostTieRandom
		i := ties[refTieIndex(len(ties), u)]
		return set(i, rule, d.Candidates[i].Terms.Cost)
	}
	costs := make([]float64, len(s.scored))
	for k, i := range s.scored {
		costs[k] = d.Candidates[i].Terms.Cost
	}
	d.MinCost, _ = refMinimumCostTies(costs)
	p, err := refSoftmaxProbabilities(costs, s.w.Temperature)
	if err != nil {
		return *d, s.fail(err)
	}
	for k, i := range s.scored {
		d.Candidates[i].Probability = p[k]
	}
	d.DrawUsed = len(costs) > 1
	i := s.scored[refSampleIndex(p, u)]
	return set(i, RuleSoftmaxSample, d.Candidates[i].Terms.Cost)
}

func (s *refSelState) minCostCount() int {
	n := 0
	for _, i := range s.scored {
		if s.decision.Candidates[i].Terms.Cost == s.decision.MinCost {
			n++
		}
	}
	return n
}

// refCandidateLogitInto is CandidateLogit writing into t, to avoid copying the terms
// when scoring many candidates.
func refCandidateLogitInto(b *ProfileBehavior, w *ResolvedWeights, in *CostInput, t *CostTerms) {
	*t = CostTerms{
		Formula:                "prefill",
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
		DecayFactor:            1,
		Multiplier:             1,
	}
	// float64(…) rounds each product as Rust does (no fused multiply-add on any GOARCH).
	sharedCredit := float64(w.SharedCacheMultiplier * float64(in.SharedBeyondBlocks))
	if w.TrackPrefillTokens && w.OverlapScoreCreditDecay > 0 {
		excess := float64(refCostSatSub(in.ActivePrefillTokens, in.MinActivePrefillTokens)) / float64(in.BlockSize)
		reqBlocks := in.RequestBlocks
		if b.RequestBlocksAtLeastOne {
			reqBlocks = max(reqBlocks, 1)
		}
		norm := excess / float64(reqBlocks)
		t.DecayFactor = 1.0 / (1.0 + float64(w.OverlapScoreCreditDecay*norm))
	}
	effCredit := float64(w.OverlapScoreCredit * t.DecayFactor)
	t.CreditBlocks = float64(effCredit*in.DeviceBlocks) + float64(w.HostCacheHitWeight*in.HostBlocks) +
		float64(w.DiskCacheHitWeight*in.DiskBlocks) + sharedCredit
	t.DecodeBlocks = float64(refCostSatAdd(in.ActiveDecodeBlocks, in.AdditionalActiveBlocks))
	t.RequestCost = float64(w.DecodeActiveRequestWeight * float64(in.ActiveRequests))

	if b.DecodeOverlapBranch && in.WorkerType == WorkerTypeDecode && !w.TrackPrefillTokens && w.OverlapScoreCredit > 0 {
		t.Formula = "decode-overlap"
		t.Logit = math.Max(t.DecodeBlocks-t.CreditBlocks, 0) + t.RequestCost
		t.Cost = t.Logit
		return
	}

	var raw uint64
	switch {
	case !w.TrackPrefillTokens:
		raw = 0
	case in.HasLoad:
		uncached := refCostSatSub(in.ISL, in.CachedTokens)
		raw = refCostSatAdd(refCostSatAdd(in.ActivePrefillTokens, uncached), in.CachedTokens)
	default:
		raw = in.ISL
	}
	t.RawPrefillTokens = float64(raw)
	t.RawPrefillBlocks = t.RawPrefillTokens / float64(in.BlockSize)
	t.AdjustedPrefillBlocks = t.RawPrefillBlocks - t.CreditBlocks
	if b.ClampAdjustedPrefill {
		t.AdjustedPrefillBlocks = math.Max(t.AdjustedPrefillBlocks, 0)
	}
	t.PrefillCost = float64(w.PrefillLoadScale * t.AdjustedPrefillBlocks)
	t.Logit = t.PrefillCost + t.DecodeBlocks + t.RequestCost
	t.Cost = t.Logit
}

// refPreferredTaintMultiplier mirrors RoutingConstraints::preferred_taint_multiplier
// (lib/kv-router/src/protocols.rs). Dynamo stores preferred weights as f32, widens
// each matching weight to f64, sums in f64 and returns exp(−tanh(sum)) in f64; this
// port rounds every weight through float32 first to reproduce that bit for bit.
// The sum runs over matched taints in sorted order (Dynamo's HashMap order is
// random, so with three or more matches Dynamo itself can differ in the last bit).
// ok is false when the request has no preferred taints: then no multiplier applies,
// not even 1. workerTaints must be sorted.
func refPreferredTaintMultiplier(c RoutingConstraints, workerTaints []string) (mult, sum float64, matched []string, ok bool) {
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

// refCostMergeHitRanges sorts and merges ranges, dropping empty ones.
func refCostMergeHitRanges(hits []SharedHitRange) []SharedHitRange {
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

func refCostHitsBeyondMerged(merged []SharedHitRange, depth uint32) uint32 {
	var n uint32
	for _, r := range merged {
		if r.End <= depth {
			continue
		}
		n += r.End - max(r.Start, depth)
	}
	return n
}

// refCostDeviceDepth converts the device overlap to the integer prefix depth hits_beyond
// expects: round half away from zero, floored at 0, saturating like Rust's `as u32`.
func refCostDeviceDepth(device float64) uint32 {
	d := math.Max(math.Round(device), 0)
	if d >= math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(d)
}

func refCostSatSub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func refCostSatAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

// refWorkerOverload evaluates the busy thresholds for one worker, mirroring
// WorkerLoadState::is_overloaded in lib/llm/src/discovery/worker_monitor.rs. Every
// declared rank [start, start+size) is checked; a rank without a Loads entry is free.
// A rank is overloaded if any configured check trips:
//
//   - active_prefill_tokens > active_prefill_tokens_threshold;
//   - active_prefill_tokens > floor(frac · max_num_batched_tokens), with
//     DefaultMaxNumBatchedTokens when the worker did not report it;
//   - the decode latch: kv_used_blocks or active_decode_blocks above
//     threshold · total_kv_blocks (needs total_kv_blocks > 0), or the explicit
//     RankLoad.DecodeOverloadLatched.
//
// The worker is overloaded only when all its ranks are. With no threshold set the
// report is empty and not overloaded.
func refWorkerOverload(th BusyThresholds, w Worker) OverloadReport {
	if !th.IsConfigured() {
		return OverloadReport{}
	}
	start, end, ok := refEligDpRange(w.Runtime)
	if !ok || end == start {
		return OverloadReport{}
	}
	rep := OverloadReport{Overloaded: true, Ranks: make([]RankOverload, 0, end-start)}
	for rank := start; rank < end; rank++ {
		ro := refEligRankOverload(th, w, uint32(rank))
		rep.Ranks = append(rep.Ranks, ro)
		if !ro.Overloaded {
			rep.Overloaded = false
		}
	}
	return rep
}

func refEligRankOverload(th BusyThresholds, w Worker, rank uint32) RankOverload {
	ro := RankOverload{DpRank: rank}
	load, observed := w.Loads[rank]
	if observed {
		active := load.ActivePrefillTokens
		if t := th.ActivePrefillTokensThreshold; t != nil && active > *t {
			ro.Trips = append(ro.Trips, OverloadTrip{
				Threshold: ThresholdActivePrefillTokens, Signal: "active_prefill_tokens",
				Value: float64(active), Limit: float64(*t),
			})
		}
		if f := th.ActivePrefillTokensThresholdFrac; f != nil {
			maxBatched := DefaultMaxNumBatchedTokens
			if w.Runtime.MaxNumBatchedTokens != nil {
				maxBatched = *w.Runtime.MaxNumBatchedTokens
			}
			limit := refEligSaturatingU64(*f * float64(maxBatched))
			if active > limit {
				ro.Trips = append(ro.Trips, OverloadTrip{
					Threshold: ThresholdActivePrefillTokensFrac, Signal: "active_prefill_tokens",
					Value: float64(active), Limit: float64(limit),
				})
			}
		}
	}
	if t := th.ActiveDecodeBlocksThreshold; t != nil {
		switch {
		case observed && load.DecodeOverloadLatched != nil:
			if *load.DecodeOverloadLatched {
				ro.Trips = append(ro.Trips, OverloadTrip{
					Threshold: ThresholdActiveDecodeBlocks, Signal: "decode_overload_latch", Value: 1, Limit: 0,
				})
			}
		case observed && w.Runtime.TotalKvBlocks != nil && *w.Runtime.TotalKvBlocks > 0:
			limit := *t * float64(*w.Runtime.TotalKvBlocks)
			if load.KvUsedBlocks != nil && float64(*load.KvUsedBlocks) > limit {
				ro.Trips = append(ro.Trips, OverloadTrip{
					Threshold: ThresholdActiveDecodeBlocks, Signal: "kv_used_blocks",
					Value: float64(*load.KvUsedBlocks), Limit: limit,
				})
			}
			if float64(load.ActiveDecodeBlocks) > limit {
				ro.Trips = append(ro.Trips, OverloadTrip{
					Threshold: ThresholdActiveDecodeBlocks, Signal: "active_decode_blocks",
					Value: float64(load.ActiveDecodeBlocks), Limit: limit,
				})
			}
		}
	}
	ro.Overloaded = len(ro.Trips) > 0
	return ro
}

// refEligSaturatingU64 converts like Rust's `as u64`: NaN and negatives give 0, values
// beyond the range give math.MaxUint64, others truncate toward zero.
func refEligSaturatingU64(f float64) uint64 {
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= 18446744073709551615.0:
		return math.MaxUint64
	}
	return uint64(f)
}

// refEligDpRange returns the worker's ranks as [start, end) in 64-bit arithmetic; ok is
// false when start+size does not fit a u32 rank.
func refEligDpRange(r RuntimeConfig) (start, end uint64, ok bool) {
	size := uint64(r.DataParallelSize)
	if size == 0 {
		size = 1
	}
	start = uint64(r.DataParallelStartRank)
	end = start + size
	return start, end, end-1 <= math.MaxUint32
}

func refEligNotAllowed(id WorkerID) *Ineligibility {
	return &Ineligibility{Code: ReasonWorkerNotAllowed,
		Text: fmt.Sprintf("worker %s is not in allowed worker set", id)}
}

// refEligCheckCandidate applies validate_worker_rank's order to a known worker. taints must
// be the worker's sorted effective taints when required is non-empty; overload is the
// worker's overload report (the zero report when no threshold is set).
func refEligCheckCandidate(w *Worker, rank uint32, allowed bool, taints, required []string, overload *OverloadReport) *Ineligibility {
	if !allowed {
		return refEligNotAllowed(w.ID)
	}
	if w.Fenced {
		return &Ineligibility{Code: ReasonWorkerFenced,
			Text: fmt.Sprintf("worker %s is not routable", w.ID), Detail: "fenced: dead or deregistered"}
	}
	start, end, _ := refEligDpRange(w.Runtime)
	if uint64(rank) < start || uint64(rank) >= end {
		return &Ineligibility{Code: ReasonDpRankUnavailable,
			Text:    fmt.Sprintf("worker %s dp_rank %d is outside [%d, %d)", w.ID, rank, start, end),
			DpStart: uint32(start), DpEnd: uint32(min(end, math.MaxUint32)),
		}
	}
	if missing := refEligMissingTaints(taints, required); len(missing) > 0 {
		return &Ineligibility{Code: ReasonRoutingConstraintsUnsatisfied,
			Text:          fmt.Sprintf("worker %s does not satisfy routing constraints", w.ID),
			Detail:        "missing required taints " + strings.Join(missing, ", "),
			MissingTaints: missing,
		}
	}
	if overload.Overloaded {
		rep := *overload
		return &Ineligibility{Code: ReasonWorkerOverloaded,
			Text:     fmt.Sprintf("worker %s is overloaded", w.ID),
			Detail:   refEligDescribeTrips(rep),
			Overload: &rep,
		}
	}
	return nil
}

// refEligMissingTaints returns the required taints absent from the sorted worker taints,
// in the order given.
func refEligMissingTaints(sortedTaints, required []string) []string {
	var missing []string
	for _, t := range required {
		if _, found := slices.BinarySearch(sortedTaints, t); !found {
			missing = append(missing, t)
		}
	}
	return missing
}

func refEligDescribeTrips(rep OverloadReport) string {
	var parts []string
	for _, r := range rep.Ranks {
		for _, t := range r.Trips {
			parts = append(parts, fmt.Sprintf("rank %d: %s %v > %s limit %v", r.DpRank, t.Signal, t.Value, t.Threshold, t.Limit))
		}
	}
	if len(parts) == 0 {
		return "all ranks over a busy threshold"
	}
	return strings.Join(parts, "; ")
}

// refSoftmaxProbabilities returns the selection probability of every cost at a
// temperature > 0, exactly as softmax_sample_index in scheduling/selector/default.rs
// computes them, operation for operation:
//
//   - lo and hi are the smallest and largest cost; when they are equal every
//     candidate gets 1/n;
//   - otherwise costs are min–max normalised, p_i ∝ exp(−(c_i − lo)/((hi − lo)·T)),
//     so the best candidate has weight 1 and the worst exp(−1/T); when hi − lo
//     overflows, costs are first divided by max(|lo|, |hi|);
//   - the weights are divided by their sum, accumulated in slice order.
//
// Costs must be finite and the temperature finite and > 0.
func refSoftmaxProbabilities(costs []float64, temperature float64) ([]float64, error) {
	if len(costs) == 0 {
		return nil, fmt.Errorf("%w: softmax needs at least one cost", ErrInvalidRequest)
	}
	if !(temperature > 0) || math.IsInf(temperature, 0) {
		return nil, fmt.Errorf("%w: softmax temperature must be finite and > 0, got %v", ErrInvalidRequest, temperature)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, c := range costs {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("%w: cost %d is %v; costs must be finite", ErrInvalidRequest, i, c)
		}
		lo, hi = math.Min(lo, c), math.Max(hi, c)
	}
	p := make([]float64, len(costs))
	if lo == hi {
		for i := range p {
			p[i] = 1.0 / float64(len(costs))
		}
	} else {
		magnitude := 1.0
		if math.IsInf(hi-lo, 0) {
			magnitude = math.Max(math.Abs(lo), math.Abs(hi))
		}
		minNorm := lo / magnitude
		scale := -1.0 / ((hi/magnitude - minNorm) * temperature)
		maxScaled := float64(minNorm * scale)
		for i, c := range costs {
			p[i] = libmExp(float64(c/magnitude*scale) - maxScaled)
		}
	}
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	for i := range p {
		p[i] /= sum
	}
	return p, nil
}

// refSampleIndex returns the first index whose running probability sum reaches u
// (u <= cumulative), falling back to the last index when rounding leaves the total
// just below u — the draw step of softmax_sample_index.
func refSampleIndex(probabilities []float64, u float64) int {
	cum := 0.0
	for i, p := range probabilities {
		cum += p
		if u <= cum {
			return i
		}
	}
	return len(probabilities) - 1
}

// refMinimumCostTies returns the minimum of costs and the indices (ascending) of every
// cost equal to it — the candidates among which Dynamo's minimum_cost_index breaks
// the tie uniformly at random. Equality is exact float equality, as in Dynamo.
func refMinimumCostTies(costs []float64) (minCost float64, ties []int) {
	minCost = math.Inf(1)
	for i, c := range costs {
		switch {
		case c < minCost:
			minCost = c
			ties = append(ties[:0], i)
		case c == minCost:
			ties = append(ties, i)
		}
	}
	return minCost, ties
}

// refTieIndex picks one of n tied candidates with the draw u: floor(u·n), clamped to
// n−1. Production Dynamo uses reservoir sampling with its own generator, which is
// equally uniform but consumes draws differently, so the same seed does not give
// the same pick; the dry run reports the tie set for that reason.
func refTieIndex(n int, u float64) int {
	i := int(math.Floor(u * float64(n)))
	return min(max(i, 0), n-1)
}

func refSampleCheckDraw(u float64) error {
	if math.IsNaN(u) || u < 0 || u > 1 {
		return fmt.Errorf("%w: draw must be in [0,1), got %v", ErrInvalidRequest, u)
	}
	return nil
}
