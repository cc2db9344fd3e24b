package build

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// upstreamQualityText is shaped like a KV-mode frontend's /metrics: the
// RouterRequestMetrics of ai-dynamo/dynamo lib/llm/src/kv_router/metrics.rs
// (commit 01690d42e3b9436ab3a6a365fc9beabf58c105c6: router_kv_hit_rate, a
// histogram with linear_buckets(0.0, 0.05, 21) and the router_id label, reached
// through the drt_metrics bridge) with the component labels of
// lib/runtime/src/metrics/prometheus_names.rs (commit
// 04070c75b52f33346a2d5723eed93a0093e77bad: dynamo_component="router",
// labels::ROUTER_ID, labels::WORKER_TYPE); the newer
// non_max_overlap_selections_total IntCounterVec on worker_type (same file,
// later version); the four decision counters of ai-dynamo/dynamo#14776 and
// avoidable_prefill_tokens_total of #13987, as their descriptions name them.
const upstreamQualityText = `# HELP dynamo_component_router_kv_hit_rate Predicted KV cache hit rate at routing time (0.0-1.0)
# TYPE dynamo_component_router_kv_hit_rate histogram
dynamo_component_router_kv_hit_rate_bucket{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",le="0"} 900
dynamo_component_router_kv_hit_rate_bucket{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",le="+Inf"} 4210
dynamo_component_router_kv_hit_rate_sum{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333"} 505.2
dynamo_component_router_kv_hit_rate_count{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333"} 4210
# HELP dynamo_component_router_non_max_overlap_selections_total Total admitted prefill scheduler selections with less KV cache overlap than another eligible worker
# TYPE dynamo_component_router_non_max_overlap_selections_total counter
dynamo_component_router_non_max_overlap_selections_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 1650
# HELP dynamo_component_router_decisions_total Routing decisions made
# TYPE dynamo_component_router_decisions_total counter
dynamo_component_router_decisions_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 4210
dynamo_component_router_decisions_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="decode"} 4210
# TYPE dynamo_component_router_decision_kv_optimal_total counter
dynamo_component_router_decision_kv_optimal_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 2560
dynamo_component_router_decision_kv_optimal_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="decode"} 4210
# TYPE dynamo_component_router_input_f0_total counter
dynamo_component_router_input_f0_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 18446744073709551000
dynamo_component_router_input_f0_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="decode"} 8620000
# TYPE dynamo_component_router_input_f1_total counter
dynamo_component_router_input_f1_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 9223372036854775807
dynamo_component_router_input_f1_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="decode"} 0
# TYPE dynamo_component_router_avoidable_prefill_tokens_total counter
dynamo_component_router_avoidable_prefill_tokens_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 3.1e+06
`

func parseQuality(t *testing.T, text string) (*model.RoutingQuality, int) {
	t.Helper()
	res := bldParsePromText(text, bldIsQualityMetric)
	if res.errors > 0 {
		t.Fatalf("parse errors: %d (%s)", res.errors, res.firstError)
	}
	return bldRoutingQuality(res.samples, "frontend /metrics", time.Unix(0, 0))
}

func TestRoutingQualityUpstreamShape(t *testing.T) {
	q, bad := parseQuality(t, upstreamQualityText)
	if bad != 0 || q == nil {
		t.Fatalf("bad %d, q %v", bad, q)
	}
	if q.KvHitRate == nil || q.KvHitRate.Count != 4210 || q.KvHitRate.Sum != 505.2 {
		t.Fatalf("kv hit rate %+v", q.KvHitRate)
	}
	if len(q.Hops) != 2 || q.Hops[0].WorkerType != "decode" || q.Hops[1].WorkerType != "prefill" {
		t.Fatalf("hops %+v", q.Hops)
	}
	p := q.Hops[1]
	// Counts above 2^53 are read exactly, not through float64.
	if !p.DecisionCounters || p.Decisions != 4210 || p.KvOptimalDecisions != 2560 ||
		p.InputTokens != 18446744073709551000 || p.ReachableCachedTokens != math.MaxInt64 {
		t.Fatalf("prefill hop %+v", p)
	}
	if p.NonMaxOverlapSelections == nil || *p.NonMaxOverlapSelections != 1650 {
		t.Fatalf("non-max %v", p.NonMaxOverlapSelections)
	}
	if p.AvoidablePrefillTokens == nil || *p.AvoidablePrefillTokens != 3100000 {
		t.Fatalf("avoidable %v", p.AvoidablePrefillTokens)
	}
	if d := q.Hops[0]; d.NonMaxOverlapSelections != nil || d.AvoidablePrefillTokens != nil || d.ReachableCachedTokens != 0 {
		t.Fatalf("decode hop %+v", d)
	}
	if v, ok := q.AvoidablePrefillTokens(); !ok || v != 3100000 {
		t.Fatalf("avoidable total %d %v", v, ok)
	}
	tot, ok := q.Totals()
	if !ok || tot.WorkerType != "decode+prefill" || tot.Decisions != 8420 || tot.InputTokens != math.MaxUint64 {
		t.Fatalf("totals %+v (input tokens saturate)", tot)
	}
}

func TestRoutingQualityCases(t *testing.T) {
	const l = `{dynamo_component="router",router_id="1",worker_type="prefill"}`
	const l2 = `{dynamo_component="router",router_id="2",worker_type="prefill"}`
	cases := []struct {
		name  string
		text  string
		nilQ  bool
		bad   int
		check func(t *testing.T, q *model.RoutingQuality)
	}{
		{name: "no quality series: nil", text: "dynamo_frontend_worker_active_decode_blocks{worker_id=\"1\"} 3\n", nilQ: true},
		{name: "released frontends: kv_hit_rate only", text: "dynamo_component_router_kv_hit_rate_sum" + l + " 0\ndynamo_component_router_kv_hit_rate_count" + l + " 0\n",
			check: func(t *testing.T, q *model.RoutingQuality) {
				if _, ok := q.KvHitRate.Mean(); ok || len(q.Hops) != 0 {
					t.Fatalf("%+v", q)
				}
				if _, ok := q.Totals(); ok {
					t.Fatal("totals without decision counters")
				}
			}},
		{name: "two routers' series are summed", text: "dynamo_component_router_decisions_total" + l + " 10\ndynamo_component_router_decisions_total" + l2 + " 5\n" +
			"dynamo_component_router_input_f0_total" + l + " 100\ndynamo_component_router_input_f0_total" + l2 + " 50\n",
			check: func(t *testing.T, q *model.RoutingQuality) {
				if h := q.Hops[0]; h.Decisions != 15 || h.InputTokens != 150 {
					t.Fatalf("%+v", h)
				}
			}},
		{name: "fractional count: the hop is dropped", text: "dynamo_component_router_decisions_total" + l + " 10.5\n", nilQ: true, bad: 1},
		{name: "overflowing sum: the hop is dropped", text: "dynamo_component_router_input_f0_total" + l + " 18446744073709551615\ndynamo_component_router_input_f0_total" + l2 + " 1\n", nilQ: true, bad: 1},
		{name: "float above 2^53 is no exact count", text: "dynamo_component_router_decisions_total" + l + " 1e17\n", nilQ: true, bad: 1},
		{name: "more optimal than decisions: inconsistent", text: "dynamo_component_router_decisions_total" + l + " 1\ndynamo_component_router_decision_kv_optimal_total" + l + " 2\n", nilQ: true, bad: 1},
		{name: "reachable above input: inconsistent", text: "dynamo_component_router_input_f0_total" + l + " 1\ndynamo_component_router_input_f1_total" + l + " 2\n", nilQ: true, bad: 1},
		{name: "hit-rate sum above count", text: "dynamo_component_router_kv_hit_rate_sum" + l + " 3\ndynamo_component_router_kv_hit_rate_count" + l + " 2\n", nilQ: true, bad: 1},
		{name: "NaN hit-rate sum", text: "dynamo_component_router_kv_hit_rate_sum" + l + " NaN\ndynamo_component_router_kv_hit_rate_count" + l + " 2\n", nilQ: true, bad: 1},
		{name: "hostile worker_type: not a hop", text: "dynamo_component_router_decisions_total{worker_type=\"\x1b[31m\"} 3\n", nilQ: true, bad: 1},
		{name: "at most 8 worker types", text: func() string {
			var b strings.Builder
			for i := range 9 {
				fmt.Fprintf(&b, "dynamo_component_router_decisions_total{worker_type=\"t%d\"} 1\n", i)
			}
			return b.String()
		}(), bad: 1, check: func(t *testing.T, q *model.RoutingQuality) {
			if len(q.Hops) != 8 {
				t.Fatalf("%d hops", len(q.Hops))
			}
		}},
		{name: "hit rate without worker_type, counters on a hop without the label", text: "dynamo_component_router_kv_hit_rate_sum 1.5\ndynamo_component_router_kv_hit_rate_count 3\ndynamo_component_router_decisions_total 3\n",
			check: func(t *testing.T, q *model.RoutingQuality) {
				if m, ok := q.KvHitRate.Mean(); !ok || m != 0.5 || q.Hops[0].WorkerType != "" {
					t.Fatalf("%+v", q)
				}
				if tot, _ := q.Totals(); tot.WorkerType != "router" {
					t.Fatalf("%+v", tot)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, bad := parseQuality(t, c.text)
			if bad != c.bad || (q == nil) != c.nilQ {
				t.Fatalf("bad %d (want %d), q %+v", bad, c.bad, q)
			}
			if c.check != nil {
				c.check(t, q)
			}
		})
	}
}

func TestRatioAtLeast(t *testing.T) {
	for _, c := range []struct {
		num, den, p, q uint64
		want           bool
	}{
		{1, 5, 1, 5, true}, {1, 5, 21, 100, false}, {0, 0, 1, 5, false}, {1, 1, 1, 0, false},
		{math.MaxUint64, math.MaxUint64, 1, 2, true}, {math.MaxUint64 / 2, math.MaxUint64, 1, 2, false},
	} {
		if got := model.RatioAtLeast(c.num, c.den, c.p, c.q); got != c.want {
			t.Errorf("RatioAtLeast(%d, %d, %d, %d) = %v", c.num, c.den, c.p, c.q, got)
		}
	}
}

func TestRoutingQualityLine(t *testing.T) {
	q, _ := parseQuality(t, upstreamQualityText)
	q.Hops[1].InputTokens, q.Hops[1].ReachableCachedTokens = 1000000, 600000
	q.Hops[0].InputTokens = 0
	for _, c := range []struct {
		name string
		q    *model.RoutingQuality
		want string
	}{
		{"nil", nil, ""},
		{"everything", q, "hit rate 12% of 60% reachable (8420 decode+prefill decisions, 80% KV-optimal; 1650 prefill picks below the best overlap; 3100000 avoidable prefill tokens)"},
		{"released frontend", &model.RoutingQuality{KvHitRate: &model.HitRateStat{Sum: 505.2, Count: 4210}},
			"hit rate 12% over 4210 requests (reachable rate: needs the decision counters of ai-dynamo/dynamo#14776)"},
		{"nothing routed yet", &model.RoutingQuality{KvHitRate: &model.HitRateStat{}},
			"no routed request observed yet (reachable rate: needs the decision counters of ai-dynamo/dynamo#14776)"},
	} {
		if got := c.q.Line(); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
