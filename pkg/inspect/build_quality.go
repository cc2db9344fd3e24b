package inspect

import (
	"cmp"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
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

// RoutingQuality is the KV router's own account of the prefix cache it used
// against the cache it could have used, summed over the router series of one
// frontend /metrics scrape (one frontend replica's view; counters restart with
// the frontend).
type RoutingQuality struct {
	Source string    `json:"source"`
	At     time.Time `json:"at"`
	// KvHitRate is dynamo_component_router_kv_hit_rate: Sum/Count is the mean
	// predicted hit rate of the requests routed; nil when not exported.
	KvHitRate *HitRateStat `json:"kvHitRate,omitempty"`
	// Hops are the per-worker_type decision counters, sorted by worker type.
	Hops []RoutingHopQuality `json:"hops,omitempty"`
	// Funnel is the cache-reuse funnel per routing phase (summed over models),
	// sorted by phase; nil when the frontend does not export it.
	Funnel []RoutingFunnelPhase `json:"funnel,omitempty"`
}

// RoutingFunnelPhase is one routing phase's cache-reuse funnel: token counts
// over the same tracked routing attempts, so the ratios compare like with like.
type RoutingFunnelPhase struct {
	// Phase is the router's phase label: aggregated, prefill or decode.
	Phase string `json:"phase"`
	// Attempts is input_sequence_tokens_count.
	Attempts uint64 `json:"attempts"`
	// InputTokens (F0) is input_sequence_tokens_sum.
	InputTokens uint64 `json:"inputTokens"`
	// BestEligibleCachedTokens (F2) were cached on the best eligible worker.
	BestEligibleCachedTokens uint64 `json:"bestEligibleCachedTokens"`
	// SelectedCachedTokens (F3) were cached on the worker selected.
	SelectedCachedTokens uint64 `json:"selectedCachedTokens"`
	// WorkerReusedTokens (F4) is what the workers reported reusing, when
	// exported.
	WorkerReusedTokens *uint64 `json:"workerReusedTokens,omitempty"`
}

// HitRateStat is a hit-rate histogram's sum and count.
type HitRateStat struct {
	Sum   float64 `json:"sum"`
	Count uint64  `json:"count"`
}

// Mean is Sum/Count; false when nothing was observed.
func (h *HitRateStat) Mean() (float64, bool) {
	if h == nil || h.Count == 0 {
		return 0, false
	}
	return h.Sum / float64(h.Count), true
}

// RoutingHopQuality is one routing hop's decision counters (worker_type
// prefill, decode or aggregated as the frontend labels it).
type RoutingHopQuality struct {
	WorkerType string `json:"workerType"`
	// DecisionCounters says the #14776 counters below were exported.
	DecisionCounters bool `json:"decisionCounters"`
	// Decisions is dynamo_component_router_decisions_total.
	Decisions uint64 `json:"decisions"`
	// KvOptimalDecisions picked the eligible worker with the most known overlap.
	KvOptimalDecisions uint64 `json:"kvOptimalDecisions"`
	// InputTokens (input_f0) are the input tokens of those decisions.
	InputTokens uint64 `json:"inputTokens"`
	// ReachableCachedTokens (input_f1) were cached on the best-overlap eligible
	// worker, whether or not it was picked.
	ReachableCachedTokens uint64 `json:"reachableCachedTokens"`
	// NonMaxOverlapSelections is non_max_overlap_selections_total, when exported.
	NonMaxOverlapSelections *uint64 `json:"nonMaxOverlapSelections,omitempty"`
	// AvoidablePrefillTokens is avoidable_prefill_tokens_total, when exported.
	AvoidablePrefillTokens *uint64 `json:"avoidablePrefillTokens,omitempty"`
}

// Reachable is ReachableCachedTokens/InputTokens; false without input tokens.
func (h *RoutingHopQuality) Reachable() (float64, bool) {
	if !h.DecisionCounters || h.InputTokens == 0 {
		return 0, false
	}
	return float64(h.ReachableCachedTokens) / float64(h.InputTokens), true
}

// RatioAtLeast reports num/den >= p/q exactly (128-bit products), for
// thresholds on u64 counts; false when den or q is 0.
func RatioAtLeast(num, den, p, q uint64) bool {
	if den == 0 || q == 0 {
		return false
	}
	h1, l1 := bits.Mul64(num, q)
	h2, l2 := bits.Mul64(den, p)
	return h1 > h2 || h1 == h2 && l1 >= l2
}

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
func bldRoutingQuality(samples []bldSample, source string, at time.Time) (*RoutingQuality, int) {
	type hopAcc struct {
		hop              RoutingHopQuality
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
			h = &hopAcc{hop: RoutingHopQuality{WorkerType: wt}}
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
	q := &RoutingQuality{Source: source, At: at}
	if hasSum && hasCount && !hitBad {
		// Each observation is at most 1: a sum above the count is not a hit rate.
		if hitSum > float64(hitCount)*(1+1e-9) {
			bad++
		} else {
			q.KvHitRate = &HitRateStat{Sum: hitSum, Count: hitCount}
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
			hop = RoutingHopQuality{WorkerType: wt}
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
func bldFunnel(samples []bldSample) ([]RoutingFunnelPhase, int) {
	type acc struct {
		p                                RoutingFunnelPhase
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
			a = &acc{p: RoutingFunnelPhase{Phase: ph}}
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
	var out []RoutingFunnelPhase
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

// FunnelTotals sums the funnel over its phases; ok is false without a funnel.
func (q *RoutingQuality) FunnelTotals() (t RoutingFunnelPhase, ok bool) {
	if q == nil || len(q.Funnel) == 0 {
		return t, false
	}
	var names []string
	for _, p := range q.Funnel {
		names = append(names, p.Phase)
		t.Attempts = satAdd(t.Attempts, p.Attempts)
		t.InputTokens = satAdd(t.InputTokens, p.InputTokens)
		t.BestEligibleCachedTokens = satAdd(t.BestEligibleCachedTokens, p.BestEligibleCachedTokens)
		t.SelectedCachedTokens = satAdd(t.SelectedCachedTokens, p.SelectedCachedTokens)
		if p.WorkerReusedTokens != nil {
			var r uint64
			if t.WorkerReusedTokens != nil {
				r = *t.WorkerReusedTokens
			}
			r = satAdd(r, *p.WorkerReusedTokens)
			t.WorkerReusedTokens = &r
		}
	}
	t.Phase = strings.Join(names, "+")
	return t, true
}

// Totals sums the hops' decision counters (those that export them); ok is
// false when none does.
func (q *RoutingQuality) Totals() (t RoutingHopQuality, ok bool) {
	if q == nil {
		return t, false
	}
	var names []string
	for _, h := range q.Hops {
		if !h.DecisionCounters {
			continue
		}
		ok = true
		names = append(names, cmp.Or(h.WorkerType, "router"))
		t.DecisionCounters = true
		t.Decisions = satAdd(t.Decisions, h.Decisions)
		t.KvOptimalDecisions = satAdd(t.KvOptimalDecisions, h.KvOptimalDecisions)
		t.InputTokens = satAdd(t.InputTokens, h.InputTokens)
		t.ReachableCachedTokens = satAdd(t.ReachableCachedTokens, h.ReachableCachedTokens)
	}
	t.WorkerType = strings.Join(names, "+")
	return t, ok
}

// AvoidablePrefillTokens sums the hops' avoidable prefill tokens; false when no
// hop exports them.
func (q *RoutingQuality) AvoidablePrefillTokens() (uint64, bool) {
	if q == nil {
		return 0, false
	}
	var sum uint64
	ok := false
	for _, h := range q.Hops {
		if h.AvoidablePrefillTokens != nil {
			sum, ok = satAdd(sum, *h.AvoidablePrefillTokens), true
		}
	}
	return sum, ok
}

func satAdd(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return math.MaxUint64
	}
	return s
}

// Line is the one-line summary topology -o wide and the dashboard show, e.g.
// "hit rate 12% of 60% reachable (4210 prefill decisions, 61% KV-optimal;
// 310000 avoidable prefill tokens)"; "" for nil.
func (q *RoutingQuality) Line() string {
	if q == nil {
		return ""
	}
	if f, ok := q.FunnelTotals(); ok && f.InputTokens > 0 {
		line := "cached prefix " + bldPct(float64(f.SelectedCachedTokens)/float64(f.InputTokens)) + " of " +
			bldPct(float64(f.BestEligibleCachedTokens)/float64(f.InputTokens)) + " reachable (" +
			strconv.FormatUint(f.Attempts, 10) + " " + f.Phase + " routing attempts, " + strconv.FormatUint(f.InputTokens, 10) + " input tokens"
		if f.WorkerReusedTokens != nil {
			line += "; workers reused " + bldPct(float64(*f.WorkerReusedTokens)/float64(f.InputTokens))
		}
		if mean, ok := q.KvHitRate.Mean(); ok {
			line += "; mean predicted hit rate " + bldPct(mean)
		}
		return line + ")"
	} else if ok {
		return "no routed request observed yet (cache-reuse funnel exported, 0 input tokens)"
	}
	var parts []string
	tot, hasCounters := q.Totals()
	reach, hasReach := tot.Reachable()
	mean, hasMean := q.KvHitRate.Mean()
	switch {
	case hasMean && hasReach:
		parts = append(parts, "hit rate "+bldPct(mean)+" of "+bldPct(reach)+" reachable")
	case hasMean:
		parts = append(parts, "hit rate "+bldPct(mean)+" over "+strconv.FormatUint(q.KvHitRate.Count, 10)+" requests")
	case q.KvHitRate != nil:
		parts = append(parts, "no routed request observed yet")
	case hasReach:
		parts = append(parts, bldPct(reach)+" reachable")
	}
	var detail []string
	if hasCounters {
		d := strconv.FormatUint(tot.Decisions, 10) + " " + tot.WorkerType + " decisions"
		if tot.Decisions > 0 {
			d += ", " + bldPct(float64(tot.KvOptimalDecisions)/float64(tot.Decisions)) + " KV-optimal"
		}
		detail = append(detail, d)
	}
	for _, h := range q.Hops {
		if h.NonMaxOverlapSelections != nil {
			detail = append(detail, strconv.FormatUint(*h.NonMaxOverlapSelections, 10)+" "+cmp.Or(h.WorkerType, "router")+" picks below the best overlap")
		}
	}
	if v, ok := q.AvoidablePrefillTokens(); ok {
		detail = append(detail, strconv.FormatUint(v, 10)+" avoidable prefill tokens")
	}
	if !hasCounters {
		detail = append(detail, "reachable rate: needs the decision counters of ai-dynamo/dynamo#14776")
	}
	line := strings.Join(parts, " ")
	if len(detail) > 0 {
		line = strings.TrimSpace(line + " (" + strings.Join(detail, "; ") + ")")
	}
	return line
}

// bldPct formats a 0–1 share as a whole percentage.
func bldPct(v float64) string { return strconv.FormatFloat(math.Round(v*100), 'f', 0, 64) + "%" }
