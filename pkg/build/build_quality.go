package build

import (
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Router decision-quality series the frontend exports on /metrics (KV mode, the
// component metrics reach it through the drt_metrics bridge; names as in
// ai-dynamo/dynamo lib/llm/src/kv_router/metrics.rs, RouterRequestMetrics).
const (
	// bldMetricKvHitRate is a histogram (#6507): the predicted hit rate of each
	// routed request on the worker it was sent to, 0–1; labels router_id and the
	// component hierarchy, no worker_type.
	bldMetricKvHitRate = "dynamo_component_router_kv_hit_rate"
	// The decision counters of #14776, each with a worker_type label.
	bldMetricDecisions = "dynamo_component_router_decisions_total"
	bldMetricKvOptimal = "dynamo_component_router_decision_kv_optimal_total"
	bldMetricInputF0   = "dynamo_component_router_input_f0_total"
	bldMetricInputF1   = "dynamo_component_router_input_f1_total"
	// bldMetricNonMaxOverlap counts admitted prefill selections with less overlap
	// than another eligible worker (worker_type).
	bldMetricNonMaxOverlap = "dynamo_component_router_non_max_overlap_selections_total"
	// bldMetricAvoidable is #13987's estimate of prefill tokens a lower-overlap
	// pick left (worker_type).
	bldMetricAvoidable = "dynamo_component_router_avoidable_prefill_tokens_total"

	// The cache-reuse funnel of the newest RouterRequestMetrics, one series per
	// phase (aggregated, prefill, decode) and model, all token counts of the
	// tracked routing attempts (query-only selections excluded): F0 is the
	// input_sequence_tokens histogram (its _sum; _count is the attempts), F2
	// the cached prefix tokens on the best eligible worker at selection, F3
	// those on the worker and dp rank selected, F4 what the workers reported
	// reusing.
	bldMetricFunnelInput    = "dynamo_component_router_input_sequence_tokens"
	bldMetricFunnelBest     = "dynamo_component_router_kv_best_eligible_cached_prefix_tokens_total"
	bldMetricFunnelSelected = "dynamo_component_router_kv_selected_cached_prefix_tokens_total"
	bldMetricFunnelReused   = "dynamo_component_router_kv_worker_reused_tokens_total"
)

// bldIsQualityMetric reports the sample names bldRoutingQuality reads.
func bldIsQualityMetric(name string) bool {
	switch name {
	case bldMetricKvHitRate + "_sum", bldMetricKvHitRate + "_count", bldMetricDecisions, bldMetricKvOptimal,
		bldMetricInputF0, bldMetricInputF1, bldMetricNonMaxOverlap, bldMetricAvoidable,
		bldMetricFunnelInput + "_sum", bldMetricFunnelInput + "_count", bldMetricFunnelBest, bldMetricFunnelSelected, bldMetricFunnelReused:
		return true
	}
	return false
}

// bldMaxQualityHops bounds the worker types read (upstream has prefill,
// decode and aggregated).
const bldMaxQualityHops = 8

// bldWorkerTypeOK accepts the worker_type values the router uses: short words
// of letters, digits, '_' and '-' (anything else is no hop name to print).
func bldWorkerTypeOK(wt string) bool {
	if len(wt) > 32 {
		return false
	}
	for i := 0; i < len(wt); i++ {
		c := wt[i]
		word := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !word {
			return false
		}
	}
	return true
}

// bldMaxExactFloat is the largest integer every smaller one of which a float64
// holds exactly (2^53).
const bldMaxExactFloat = 1 << 53

// bldSampleCount reads a counter sample as an exact count: decimal digits as
// written, or a float spelling (1e+06) of an integer a float64 holds exactly.
func bldSampleCount(s *bldSample) (uint64, bool) {
	if v, err := strconv.ParseUint(s.raw, 10, 64); err == nil {
		return v, true
	}
	v := s.value
	if math.IsNaN(v) || v < 0 || v > bldMaxExactFloat || v != math.Trunc(v) {
		return 0, false
	}
	return uint64(v), true
}

// bldRoutingQuality sums the decision-quality series of one scrape. It returns
// nil when none is present, and the number of samples it could not use (a
// value that is no exact count, a sum that overflows, a hit-rate sum above its
// count); a hop or histogram with such a sample is dropped, not guessed.
func bldRoutingQuality(samples []bldSample, source string, at time.Time) (*model.RoutingQuality, int) {
	type hopAcc struct {
		hop              model.RoutingHopQuality
		hasNonMax, hasAv bool
		nonMax, av       uint64
		invalid          bool
	}
	hops := map[string]*hopAcc{}
	var hitSum float64
	var hitCount uint64
	hasSum, hasCount, hitBad := false, false, false
	bad := 0
	add := func(dst *uint64, v uint64) bool {
		s, c := bits.Add64(*dst, v, 0)
		*dst = s
		return c == 0
	}
	funnel, fbad := bldFunnel(samples)
	bad += fbad
	for i := range samples {
		s := &samples[i]
		if !bldIsQualityMetric(s.name) || bldIsFunnelMetric(s.name) {
			continue
		}
		if s.name == bldMetricKvHitRate+"_sum" {
			if math.IsNaN(s.value) || math.IsInf(s.value, 0) || s.value < 0 {
				bad++
				hitBad = true
				continue
			}
			hitSum += s.value
			hasSum = true
			continue
		}
		v, ok := bldSampleCount(s)
		if !ok {
			bad++
			if s.name == bldMetricKvHitRate+"_count" {
				hitBad = true
			} else if h := hops[s.labels["worker_type"]]; h != nil {
				h.invalid = true
			} else if wt := s.labels["worker_type"]; bldWorkerTypeOK(wt) && len(hops) < bldMaxQualityHops {
				hops[wt] = &hopAcc{invalid: true}
			}
			continue
		}
		if s.name == bldMetricKvHitRate+"_count" {
			if !add(&hitCount, v) {
				bad++
				hitBad = true
			}
			hasCount = true
			continue
		}
		wt := s.labels["worker_type"]
		h := hops[wt]
		if h == nil {
			if !bldWorkerTypeOK(wt) || len(hops) >= bldMaxQualityHops {
				bad++
				continue
			}
			h = &hopAcc{hop: model.RoutingHopQuality{WorkerType: wt}}
			hops[wt] = h
		}
		var ok2 bool
		switch s.name {
		case bldMetricDecisions:
			h.hop.DecisionCounters = true
			ok2 = add(&h.hop.Decisions, v)
		case bldMetricKvOptimal:
			h.hop.DecisionCounters = true
			ok2 = add(&h.hop.KvOptimalDecisions, v)
		case bldMetricInputF0:
			h.hop.DecisionCounters = true
			ok2 = add(&h.hop.InputTokens, v)
		case bldMetricInputF1:
			h.hop.DecisionCounters = true
			ok2 = add(&h.hop.ReachableCachedTokens, v)
		case bldMetricNonMaxOverlap:
			h.hasNonMax = true
			ok2 = add(&h.nonMax, v)
		case bldMetricAvoidable:
			h.hasAv = true
			ok2 = add(&h.av, v)
		}
		if !ok2 {
			bad++
			h.invalid = true
		}
	}
	q := &model.RoutingQuality{Source: source, At: at}
	if hasSum && hasCount && !hitBad {
		// Each observation is at most 1: a sum above the count is not a hit rate.
		if hitSum > float64(hitCount)*(1+1e-9) {
			bad++
		} else {
			q.KvHitRate = &model.HitRateStat{Sum: hitSum, Count: hitCount}
		}
	}
	for _, wt := range slices.Sorted(maps.Keys(hops)) {
		h := hops[wt]
		if h.invalid {
			continue
		}
		hop := h.hop
		// The counters are cumulative from one router: more optimal decisions than
		// decisions, or more reachable than input tokens, is not a consistent set.
		if hop.DecisionCounters && (hop.KvOptimalDecisions > hop.Decisions || hop.ReachableCachedTokens > hop.InputTokens) {
			bad++
			hop = model.RoutingHopQuality{WorkerType: wt}
		}
		if h.hasNonMax {
			hop.NonMaxOverlapSelections = &h.nonMax
		}
		if h.hasAv {
			hop.AvoidablePrefillTokens = &h.av
		}
		if hop.DecisionCounters || hop.NonMaxOverlapSelections != nil || hop.AvoidablePrefillTokens != nil {
			q.Hops = append(q.Hops, hop)
		}
	}
	q.Funnel = funnel
	if q.KvHitRate == nil && len(q.Hops) == 0 && len(q.Funnel) == 0 {
		return nil, bad
	}
	return q, bad
}

func bldIsFunnelMetric(name string) bool {
	switch name {
	case bldMetricFunnelInput + "_sum", bldMetricFunnelInput + "_count", bldMetricFunnelBest, bldMetricFunnelSelected, bldMetricFunnelReused:
		return true
	}
	return false
}

// bldFunnel sums the cache-reuse funnel series by phase. A phase counts only
// when the scrape has its F0 (input_sequence_tokens with a phase label, which
// older frontends export without one) and its F2 and F3; a phase with a sample
// that is no exact count, a sum that overflows, or F3 > F2 > F0 out of order is
// dropped and counted as bad.
func bldFunnel(samples []bldSample) ([]model.RoutingFunnelPhase, int) {
	type acc struct {
		p                                model.RoutingFunnelPhase
		hasIn, hasCount, hasBest, hasSel bool
		hasReused                        bool
		reused                           uint64
		invalid                          bool
	}
	phases := map[string]*acc{}
	bad := 0
	for i := range samples {
		s := &samples[i]
		if !bldIsFunnelMetric(s.name) {
			continue
		}
		ph, ok := s.labels["phase"]
		if !ok {
			continue // the unlabelled input_sequence_tokens of older frontends
		}
		a := phases[ph]
		if a == nil {
			if !bldWorkerTypeOK(ph) || ph == "" || len(phases) >= bldMaxQualityHops {
				bad++
				continue
			}
			a = &acc{p: model.RoutingFunnelPhase{Phase: ph}}
			phases[ph] = a
		}
		v, ok := bldSampleCount(s)
		if !ok {
			bad++
			a.invalid = true
			continue
		}
		var dst *uint64
		switch s.name {
		case bldMetricFunnelInput + "_sum":
			dst, a.hasIn = &a.p.InputTokens, true
		case bldMetricFunnelInput + "_count":
			dst, a.hasCount = &a.p.Attempts, true
		case bldMetricFunnelBest:
			dst, a.hasBest = &a.p.BestEligibleCachedTokens, true
		case bldMetricFunnelSelected:
			dst, a.hasSel = &a.p.SelectedCachedTokens, true
		case bldMetricFunnelReused:
			dst, a.hasReused = &a.reused, true
		}
		sum, c := bits.Add64(*dst, v, 0)
		if c != 0 {
			bad++
			a.invalid = true
			continue
		}
		*dst = sum
	}
	var out []model.RoutingFunnelPhase
	for _, ph := range slices.Sorted(maps.Keys(phases)) {
		a := phases[ph]
		if a.invalid || !a.hasIn || !a.hasCount || !a.hasBest || !a.hasSel {
			continue
		}
		p := a.p
		// Tokens cached on the worker picked are cached on an eligible worker,
		// and cached prefix tokens are prompt tokens: F3 <= F2 <= F0.
		if p.SelectedCachedTokens > p.BestEligibleCachedTokens || p.BestEligibleCachedTokens > p.InputTokens {
			bad++
			continue
		}
		if a.hasReused {
			r := a.reused
			p.WorkerReusedTokens = &r
		}
		out = append(out, p)
	}
	return out, bad
}
