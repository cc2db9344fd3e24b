package health

import (
	"fmt"
	"strconv"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Thresholds of KvRoutingGivesAwayCache (docs/findings.md).
const (
	// QualityMinSample is the number of routing decisions, and of kv_hit_rate
	// observations, the frontend's counters must hold before the rule judges: a
	// frontend that has just started (counters restart with it) has routed too
	// few requests, on an index still filling, to say anything.
	QualityMinSample = 1000
	// qualityReachableNum/Den: at least 1/5 of the input tokens were cached on
	// the best-overlap eligible worker; below that there is little to give away.
	qualityReachableNum, qualityReachableDen = 1, 5
	// QualityKeptMax: the rule fires when the achieved hit rate is at most this
	// share of the reachable one (routing gives away half or more).
	QualityKeptMax = 0.5
)

// quality: KvRoutingGivesAwayCache. The router's mean predicted hit rate on the
// workers it picked (router_kv_hit_rate, #6507) against the hit rate it could
// have reached (input_f1/input_f0, #14776) over the same frontend's decisions.
func (c *check) quality() {
	q := c.d.RoutingQuality
	if _, ok := q.FunnelTotals(); ok {
		c.qualityFunnel()
		return
	}
	tot, ok := q.Totals()
	if !ok {
		return
	}
	achieved, okm := q.KvHitRate.Mean()
	if !okm || tot.Decisions < QualityMinSample || q.KvHitRate.Count < QualityMinSample ||
		!model.RatioAtLeast(tot.ReachableCachedTokens, tot.InputTokens, qualityReachableNum, qualityReachableDen) {
		return
	}
	reachable, _ := tot.Reachable()
	if achieved > QualityKeptMax*reachable {
		return
	}
	avoid := ""
	if v, ok := q.AvoidablePrefillTokens(); ok {
		avoid = fmt.Sprintf("; the router counts %s avoidable prefill tokens", strconv.FormatUint(v, 10))
	}
	rt := c.routingFor("")
	c.add(model.Finding{ID: FindingKvRoutingGivesAwayCache, Severity: model.SeverityWarning, Objects: c.frontendObjects(),
		Message: fmt.Sprintf("the KV router's hit rate is %s where %s was reachable (%s: mean predicted hit rate over %s routed requests; %s of %s input tokens were cached on the best-overlap eligible worker over %s %s decisions, %s of which picked it%s): routing gives away %s of the reachable prefix cache, and those tokens are prefilled again. Overlap credit %s, temperature %s (%s)",
			pct(achieved), pct(reachable), q.Source, u(q.KvHitRate.Count), u(tot.ReachableCachedTokens), u(tot.InputTokens),
			u(tot.Decisions), tot.WorkerType, u(tot.KvOptimalDecisions), avoid, pct(1-achieved/reachable),
			fmtNum(rt.cfg.OverlapScoreCredit), fmtNum(rt.cfg.RouterTemperature), rt.source),
		Hint: "find why the router picks less-cached workers: load terms outweighing the overlap credit (raise --router-kv-overlap-score-credit / DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT), a temperature above 0 sampling away from the best (--router-temperature 0), busy thresholds or constraints excluding the cached workers; kubectl dynamo explain-route shows one decision's cost table"})
}

// qualityFunnel: KvRoutingGivesAwayCache from the newest frontends'
// cache-reuse funnel (RouterRequestMetrics in lib/llm/src/kv_router/metrics.rs):
// the cached prefix tokens on the workers picked (F3) against those on the best
// eligible workers (F2), over the same routing attempts and input tokens (F0),
// so both rates are token-weighted and the comparison is exact on the u64
// counts: at least QualityMinSample attempts, F2 at least 1/5 of F0, and F3 at
// most half of F2.
func (c *check) qualityFunnel() {
	q := c.d.RoutingQuality
	f, _ := q.FunnelTotals()
	if f.Attempts < QualityMinSample || !model.RatioAtLeast(f.BestEligibleCachedTokens, f.InputTokens, qualityReachableNum, qualityReachableDen) ||
		(f.SelectedCachedTokens > 0 && !model.RatioAtLeast(f.BestEligibleCachedTokens, f.SelectedCachedTokens, 2, 1)) {
		return
	}
	in := float64(f.InputTokens)
	achieved, reachable := float64(f.SelectedCachedTokens)/in, float64(f.BestEligibleCachedTokens)/in
	reused := ""
	if f.WorkerReusedTokens != nil {
		reused = fmt.Sprintf("; the workers report reusing %s tokens (%s)", u(*f.WorkerReusedTokens), pct(float64(*f.WorkerReusedTokens)/in))
	}
	rt := c.routingFor("")
	c.add(model.Finding{ID: FindingKvRoutingGivesAwayCache, Severity: model.SeverityWarning, Objects: c.frontendObjects(),
		Message: fmt.Sprintf("the KV router picked workers holding %s of the input tokens in cache where %s was cached on the best eligible worker (%s, cache-reuse funnel over %s %s routing attempts: %s input tokens, %s cached on the best eligible worker, %s on the worker picked%s): routing gives away %s of the reachable prefix cache, and those tokens are prefilled again. Overlap credit %s, temperature %s (%s)",
			pct(achieved), pct(reachable), q.Source, u(f.Attempts), f.Phase, u(f.InputTokens), u(f.BestEligibleCachedTokens), u(f.SelectedCachedTokens),
			reused, pct(1-achieved/reachable), fmtNum(rt.cfg.OverlapScoreCredit), fmtNum(rt.cfg.RouterTemperature), rt.source),
		Hint: "find why the router picks less-cached workers: load terms outweighing the overlap credit (raise --router-kv-overlap-score-credit / DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT), a temperature above 0 sampling away from the best (--router-temperature 0), busy thresholds or constraints excluding the cached workers; kubectl dynamo explain-route shows one decision's cost table"})
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

// pct formats a 0–1 share as a whole percentage.
func pct(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }
