package model

import (
	"cmp"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
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

// Line is the one-line summary topology -o wide and the dashboard show, e.g.
// "hit rate 12% of 60% reachable (4210 prefill decisions, 61% KV-optimal;
// 310000 avoidable prefill tokens)"; "" for nil.
func (q *RoutingQuality) Line() string {
	if q == nil {
		return ""
	}
	if f, ok := q.FunnelTotals(); ok && f.InputTokens > 0 {
		line := "cached prefix " + pct(float64(f.SelectedCachedTokens)/float64(f.InputTokens)) + " of " +
			pct(float64(f.BestEligibleCachedTokens)/float64(f.InputTokens)) + " reachable (" +
			strconv.FormatUint(f.Attempts, 10) + " " + f.Phase + " routing attempts, " + strconv.FormatUint(f.InputTokens, 10) + " input tokens"
		if f.WorkerReusedTokens != nil {
			line += "; workers reused " + pct(float64(*f.WorkerReusedTokens)/float64(f.InputTokens))
		}
		if mean, ok := q.KvHitRate.Mean(); ok {
			line += "; mean predicted hit rate " + pct(mean)
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
		parts = append(parts, "hit rate "+pct(mean)+" of "+pct(reach)+" reachable")
	case hasMean:
		parts = append(parts, "hit rate "+pct(mean)+" over "+strconv.FormatUint(q.KvHitRate.Count, 10)+" requests")
	case q.KvHitRate != nil:
		parts = append(parts, "no routed request observed yet")
	case hasReach:
		parts = append(parts, pct(reach)+" reachable")
	}
	var detail []string
	if hasCounters {
		d := strconv.FormatUint(tot.Decisions, 10) + " " + tot.WorkerType + " decisions"
		if tot.Decisions > 0 {
			d += ", " + pct(float64(tot.KvOptimalDecisions)/float64(tot.Decisions)) + " KV-optimal"
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

func satAdd(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return math.MaxUint64
	}
	return s
}

// pct formats a 0–1 share as a whole percentage.
func pct(v float64) string { return strconv.FormatFloat(math.Round(v*100), 'f', 0, 64) + "%" }
