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
		bldMetricInputF0, bldMetricInputF1, bldMetricNonMaxOverlap, bldMetricAvoidable:
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
	for i := range samples {
		s := &samples[i]
		if !bldIsQualityMetric(s.name) {
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
	if q.KvHitRate == nil && len(q.Hops) == 0 {
		return nil, bad
	}
	return q, bad
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
